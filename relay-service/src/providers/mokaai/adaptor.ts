/**
 * MokaAI M3E (channel type 44): an OpenAI-compatible embeddings server, usually self-hosted (m3e-small / -base /
 * -large). As in new-api, the only endpoint is embeddings at `{base}/embeddings` — the base URL includes any
 * version segment (`http://host:6008/v1`), default https://api.moka.ai — with the key as a Bearer token, and the
 * body is `{model, input}` with the input as a list of strings. The reply is OpenAI's embeddings list, passed
 * through with its usage (core counts the input when the server reports none). Chat and every other endpoint are
 * not served: the relay skips the channel for them, and a model only M3E channels serve answers a 400
 * unsupported_endpoint (core/relay.ts) without calling anyone.
 */
import { embeddingInputs } from '../gemini/embeddings.ts';
import { jsonHeaders } from '../openai/request.ts';
import { parseOpenAIError, parseOpenAIResponse } from '../openai/response.ts';
import { openAIStreamConversion } from '../openai/stream.ts';
import type { SyncProviderAdaptor, UpstreamRequest } from '../types.ts';

export const MOKAAI_CHANNEL_TYPE = 44;
export const MOKAAI_DEFAULT_BASE = 'https://api.moka.ai';

export const mokaaiAdaptor: SyncProviderAdaptor = {
  id: 'mokaai',
  channelTypes: [MOKAAI_CHANNEL_TYPE],
  supports: (endpoint) => endpoint === 'embeddings',
  buildRequest(channel, input): UpstreamRequest {
    if (input.endpoint !== 'embeddings')
      throw new Error(`the MokaAI M3E channel serves embeddings only, not ${input.endpoint}`);
    const body = input.body as Record<string, unknown>;
    const headers = jsonHeaders('application/json', false);
    headers.set('Authorization', `Bearer ${channel.key}`);
    return {
      url: `${(channel.baseUrl || MOKAAI_DEFAULT_BASE).replace(/\/+$/, '')}/embeddings`,
      method: 'POST',
      headers,
      body: JSON.stringify({
        input: embeddingInputs(body),
        ...channel.paramOverride,
        model: input.upstreamModel,
      }),
    };
  },
  parseResponse: parseOpenAIResponse,
  // Embeddings never stream; the OpenAI conversion is here only because the contract asks for one.
  streamConversion: openAIStreamConversion,
  parseError: parseOpenAIError,
};
