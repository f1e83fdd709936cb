/**
 * Cohere (channel type 34), API v2: chat (`POST /v2/chat`, streamed as SSE), embeddings (`POST /v2/embed`) and
 * rerank (`POST /v2/rerank`), the key as a Bearer token; model list `GET /v1/models`. The base URL defaults to
 * https://api.cohere.com (a base ending in /v1 or /v2 is accepted too).
 */
import type { ChannelConfig, Endpoint, RelayInput, SyncProviderAdaptor, UpstreamRequest } from '../types.ts';
import { buildChatBody, buildEmbedBody, buildRerankBody, cohereBase } from './request.ts';
import {
  parseChatResponse,
  parseCohereError,
  parseEmbedResponse,
  parseModels,
  parseRerankResponse,
} from './response.ts';
import { cohereStreamConversion } from './stream.ts';

export const COHERE_CHANNEL_TYPE = 34;
const SUPPORTED: ReadonlySet<Endpoint> = new Set<Endpoint>(['chat', 'embeddings', 'rerank']);

function headers(channel: ChannelConfig, stream: boolean, json: boolean): Headers {
  const h = new Headers({ Authorization: `Bearer ${channel.key}`, Accept: 'application/json' });
  if (json) h.set('Content-Type', 'application/json');
  if (stream) h.set('Accept', 'text/event-stream');
  return h;
}

function body(channel: ChannelConfig, input: RelayInput): { path: string; body: string } {
  switch (input.endpoint) {
    case 'embeddings':
      return { path: '/v2/embed', body: buildEmbedBody(channel, input) };
    case 'rerank':
      return { path: '/v2/rerank', body: buildRerankBody(channel, input) };
    default:
      return { path: '/v2/chat', body: buildChatBody(channel, input) };
  }
}

export function createCohereAdaptor(now: () => number = Date.now): SyncProviderAdaptor {
  return {
    id: 'cohere',
    channelTypes: [COHERE_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    buildRequest(channel, input): UpstreamRequest {
      const { path, body: text } = body(channel, input);
      return {
        url: cohereBase(channel) + path,
        method: 'POST',
        headers: headers(channel, input.stream, true),
        body: text,
      };
    },
    parseResponse(input, res) {
      switch (input.endpoint) {
        case 'embeddings':
          return parseEmbedResponse(input, res.body);
        case 'rerank':
          return parseRerankResponse(input, res.body);
        default:
          return parseChatResponse(input, res.body, now);
      }
    },
    streamConversion: (input) => cohereStreamConversion(input, now),
    parseError: parseCohereError,
    modelsRequest(channel): UpstreamRequest {
      return {
        url: `${cohereBase(channel)}/v1/models?page_size=1000`,
        method: 'GET',
        headers: headers(channel, false, false),
        body: null,
      };
    },
    parseModels,
  };
}

export const cohereAdaptor: SyncProviderAdaptor = createCohereAdaptor();
