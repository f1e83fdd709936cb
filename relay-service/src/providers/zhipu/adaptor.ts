/**
 * Zhipu v1 (channel type 16): the ChatGLM v3 "model-api" (chatglm_turbo, chatglm_pro, chatglm_std, chatglm_lite,
 * ...). Type 26 ("v4", /api/paas/v4) is OpenAI-compatible and served by the openai adaptor. OpenAI chat goes to
 * `/api/paas/v3/model-api/{model}/invoke` or `/sse-invoke`, OpenAI embeddings to the `text_embedding` model
 * (one input per call). Every request carries a freshly signed JWT of the `id.secret` key (request.ts), so
 * buildRequest is async; `now` makes the token and the answers deterministic in tests.
 */
import type { ChannelConfig, Endpoint, ProviderAdaptor, RelayInput, UpstreamRequest } from '../types.ts';
import { buildZhipuChatBody, buildZhipuEmbedBody, zhipuToken, zhipuUrl } from './request.ts';
import { parseZhipuChat, parseZhipuEmbeddings, parseZhipuError } from './response.ts';
import { zhipuStreamConversion } from './stream.ts';

export const ZHIPU_CHANNEL_TYPE = 16;
const SUPPORTED: ReadonlySet<Endpoint> = new Set(['chat', 'embeddings']);

/** The adaptor's requests are always signed asynchronously (tests await them). */
export type ZhipuAdaptor = Omit<ProviderAdaptor, 'buildRequest'> & {
  buildRequest(channel: ChannelConfig, input: RelayInput): Promise<UpstreamRequest>;
};

export function createZhipuAdaptor(now: () => number = Date.now): ZhipuAdaptor {
  return {
    id: 'zhipu',
    channelTypes: [ZHIPU_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    async buildRequest(channel, input): Promise<UpstreamRequest> {
      const embeddings = input.endpoint === 'embeddings';
      const stream = input.stream && !embeddings;
      const body = embeddings ? buildZhipuEmbedBody(input) : buildZhipuChatBody(input);
      const headers = new Headers({
        'content-type': 'application/json',
        accept: stream ? 'text/event-stream' : 'application/json',
        authorization: await zhipuToken(channel.key, now()),
      });
      return {
        url: zhipuUrl(channel, input.upstreamModel, stream),
        method: 'POST',
        headers,
        body: JSON.stringify({ ...body, ...channel.paramOverride }),
      };
    },
    parseResponse: (input, res) =>
      input.endpoint === 'embeddings'
        ? parseZhipuEmbeddings(input, res.body)
        : parseZhipuChat(input, res.body, now),
    streamConversion: (input) => zhipuStreamConversion(input, now),
    parseError: parseZhipuError,
  };
}

export const zhipuAdaptor: ZhipuAdaptor = createZhipuAdaptor();
