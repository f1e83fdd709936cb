/**
 * Google PaLM 2 (channel type 11): OpenAI chat served through the legacy `v1beta2 …:generateMessage` API. The
 * key travels in `x-goog-api-key` (Google accepts it there as well as in `?key=`, and a header keeps the key
 * out of URLs that proxies and logs record). No usage is reported (core counts locally) and there is no
 * streaming upstream: streamed calls get the whole answer as chunks (stream.ts).
 */
import type { Endpoint, SyncProviderAdaptor, UpstreamRequest } from '../types.ts';
import { buildPalmBody, palmUrl } from './request.ts';
import { parsePalmError, parsePalmResponse } from './response.ts';
import { palmStreamConversion } from './stream.ts';

export const PALM_CHANNEL_TYPE = 11;
const SUPPORTED: ReadonlySet<Endpoint> = new Set(['chat']);

export function createPalmAdaptor(now: () => number = Date.now): SyncProviderAdaptor {
  return {
    id: 'palm',
    channelTypes: [PALM_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    buildRequest(channel, input): UpstreamRequest {
      return {
        url: palmUrl(channel, input.upstreamModel),
        method: 'POST',
        headers: new Headers({ 'content-type': 'application/json', 'x-goog-api-key': channel.key }),
        body: JSON.stringify({ ...buildPalmBody(input), ...channel.paramOverride }),
      };
    },
    parseResponse: (input, res) => parsePalmResponse(input, res.body, now),
    streamConversion: (input) => palmStreamConversion(input, now),
    parseError: parsePalmError,
  };
}

export const palmAdaptor: SyncProviderAdaptor = createPalmAdaptor();
