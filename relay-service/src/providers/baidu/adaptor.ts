/**
 * Baidu Wenxin v1 (channel type 15, Qianfan "wenxinworkshop"). The channel key `APIKey|SecretKey` is exchanged
 * for an OAuth access token (`credential`: core caches it per key until shortly before it expires and drops it
 * when Wenxin answers 110/111), which goes in the `access_token` query parameter of every call. OpenAI chat goes
 * to `/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/{endpoint}` (non-stream and SSE), OpenAI embeddings to
 * `/embeddings/{endpoint}`; the endpoint comes from the model name (new-api's table, else lower-cased).
 */
import type { Endpoint, SyncProviderAdaptor, UpstreamRequest } from '../types.ts';
import { baiduUrl, buildBaiduChatBody, buildBaiduEmbedBody, tokenUrl } from './request.ts';
import { parseBaiduChat, parseBaiduEmbeddings, parseBaiduError, parseBaiduToken } from './response.ts';
import { baiduStreamConversion } from './stream.ts';

export const BAIDU_CHANNEL_TYPE = 15;
const SUPPORTED: ReadonlySet<Endpoint> = new Set(['chat', 'embeddings']);

export function createBaiduAdaptor(now: () => number = Date.now): SyncProviderAdaptor {
  return {
    id: 'baidu',
    channelTypes: [BAIDU_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    credential: {
      request(channel): UpstreamRequest {
        return {
          url: tokenUrl(channel),
          method: 'POST',
          headers: new Headers({ 'content-type': 'application/json', accept: 'application/json' }),
          body: null,
        };
      },
      parse: parseBaiduToken,
    },
    buildRequest(channel, input): UpstreamRequest {
      const embeddings = input.endpoint === 'embeddings';
      const body = embeddings ? buildBaiduEmbedBody(input) : buildBaiduChatBody(input);
      const headers = new Headers({ 'content-type': 'application/json' });
      if (input.stream && !embeddings) headers.set('accept', 'text/event-stream');
      return {
        url: baiduUrl(channel, embeddings ? 'embeddings' : 'chat', input.upstreamModel),
        method: 'POST',
        headers,
        body: JSON.stringify({ ...body, ...channel.paramOverride }),
      };
    },
    parseResponse: (input, res) =>
      input.endpoint === 'embeddings'
        ? parseBaiduEmbeddings(input, res.body)
        : parseBaiduChat(input, res.body, now),
    streamConversion: (input) => baiduStreamConversion(input, now),
    parseError: parseBaiduError,
  };
}

export const baiduAdaptor: SyncProviderAdaptor = createBaiduAdaptor();
