/**
 * Xunfei Spark (channel type 18): OpenAI chat over Spark's signed WebSocket (request.ts), whole replies and
 * streams from its frames (response.ts, stream.ts). Core opens the socket (UpstreamRequest.transport 'ws'), sends
 * the request frame and hands back every frame newline-delimited. The signature carries the time, so the adaptor
 * takes a clock. Spark has no model list or balance API.
 */
import type { Endpoint, SyncProviderAdaptor, UpstreamRequest } from '../types.ts';
import {
  parseSparkKey,
  signedUrl,
  sparkDomain,
  sparkFrame,
  sparkOrigin,
  sparkPath,
  sparkVersion,
} from './request.ts';
import { parseSparkError, parseSparkResponse } from './response.ts';
import { sparkStreamConversion } from './stream.ts';

export const XUNFEI_CHANNEL_TYPE = 18;
const SUPPORTED: ReadonlySet<Endpoint> = new Set(['chat']);

export function createXunfeiAdaptor(now: () => number = Date.now): SyncProviderAdaptor {
  return {
    id: 'xunfei',
    channelTypes: [XUNFEI_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    buildRequest(channel, input): UpstreamRequest {
      const key = parseSparkKey(channel.key);
      const version = sparkVersion(input.upstreamModel, channel.other);
      const frame = sparkFrame(channel, input, key, sparkDomain(version));
      return {
        url: signedUrl(sparkOrigin(channel.baseUrl), sparkPath(version), key, now()),
        method: 'GET',
        headers: new Headers(),
        body: JSON.stringify(frame),
        transport: 'ws',
      };
    },
    parseResponse: (input, res) => parseSparkResponse(input, res.body, now),
    streamConversion: (input) => sparkStreamConversion(input, now),
    parseError: parseSparkError,
  };
}

export const xunfeiAdaptor: SyncProviderAdaptor = createXunfeiAdaptor();
