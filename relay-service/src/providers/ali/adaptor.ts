/**
 * Alibaba Qwen through DashScope's native API (channel type 17): OpenAI chat (plain and streamed, tools,
 * reasoning text) and embeddings converted to DashScope's text-generation and text-embedding services and back.
 * The channel key is the DashScope API key, sent as a bearer token. DashScope offers no balance or model-list
 * API on this path, so neither is declared.
 */
import type { Endpoint, SyncProviderAdaptor, UpstreamRequest } from '../types.ts';
import { dashScopeRequest } from './request.ts';
import { parseChatResponse, parseDashScopeError, parseEmbeddingsResponse } from './response.ts';
import { dashScopeStreamConversion } from './stream.ts';

export const ALI_CHANNEL_TYPE = 17;
const SUPPORTED: ReadonlySet<Endpoint> = new Set(['chat', 'embeddings']);

export function createAliAdaptor(now: () => number = Date.now): SyncProviderAdaptor {
  return {
    id: 'ali',
    channelTypes: [ALI_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    buildRequest: (channel, input): UpstreamRequest => dashScopeRequest(channel, input),
    parseResponse: (input, res) =>
      input.endpoint === 'embeddings'
        ? parseEmbeddingsResponse(input, res.body)
        : parseChatResponse(input, res.body, now),
    streamConversion: (input) => dashScopeStreamConversion(input, now),
    parseError: parseDashScopeError,
  };
}

export const aliAdaptor: SyncProviderAdaptor = createAliAdaptor();
