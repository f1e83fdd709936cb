/**
 * Tencent Hunyuan (channel type 23): the Tencent Cloud API `ChatCompletions` action (version 2023-09-01) at
 * `POST https://hunyuan.tencentcloudapi.com/`, signed with TC3-HMAC-SHA256 (sign.ts) from the channel key
 * `AppId|SecretId|SecretKey`. Body `{Model, Messages: [{Role, Content}], Stream, TopP?, Temperature?}`; the
 * answer `{Response: {Id, Created, Choices: [{FinishReason, Message}], Usage, RequestId}}`, a stream SSE frames
 * `data: {Id, Created, Choices: [{Delta, FinishReason}], Usage}`; failures `{Response: {Error: {Code, Message},
 * RequestId}}` with HTTP 200. `channel.other`, when set, is sent as X-TC-Region. `now` fixes the signing time.
 */
import type { Endpoint, SyncProviderAdaptor, UpstreamRequest } from '../types.ts';
import { buildHunyuanBody, HUNYUAN_DEFAULT_BASE, hunyuanHeaders } from './request.ts';
import { parseHunyuanChat, parseHunyuanError } from './response.ts';
import { hunyuanStreamConversion } from './stream.ts';

export const TENCENT_CHANNEL_TYPE = 23;
const SUPPORTED: ReadonlySet<Endpoint> = new Set(['chat']);

export function createTencentAdaptor(now: () => number = Date.now): SyncProviderAdaptor {
  return {
    id: 'tencent',
    channelTypes: [TENCENT_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    buildRequest(channel, input): UpstreamRequest {
      const base = channel.baseUrl || HUNYUAN_DEFAULT_BASE;
      const payload = JSON.stringify({ ...buildHunyuanBody(input), ...channel.paramOverride });
      return {
        url: `${base}/`,
        method: 'POST',
        headers: hunyuanHeaders(channel, new URL(base).host, payload, now(), input.stream),
        body: payload,
      };
    },
    parseResponse: (input, res) => parseHunyuanChat(input, res.body, now),
    streamConversion: (input) => hunyuanStreamConversion(input, now),
    parseError: parseHunyuanError,
  };
}

export const tencentAdaptor: SyncProviderAdaptor = createTencentAdaptor();
