import { ENDPOINT_PATHS } from '../openai/channels.ts';
import { buildOpenAIBody, jsonHeaders } from '../openai/request.ts';
import { parseOpenAIError, parseOpenAIResponse } from '../openai/response.ts';
import { openAIStreamConversion } from '../openai/stream.ts';
import type { ChannelConfig, Endpoint, RelayInput, SyncProviderAdaptor, UpstreamRequest } from '../types.ts';

/** gateway-behaviour §5 AZURE_DEFAULT_API_VERSION. */
export const AZURE_DEFAULT_API_VERSION = '2024-12-01-preview';

/** Azure OpenAI has no moderations or rerank. */
const ENDPOINTS: ReadonlySet<Endpoint> = new Set<Endpoint>([
  'chat',
  'completions',
  'embeddings',
  'images',
  'imageEdits',
  'speech',
  'transcriptions',
  'translations',
  'responses',
]);

/**
 * `{base}/openai/deployments/{deployment}/{task}?api-version=...`; the deployment is the upstream model with
 * dots removed (Azure deployment names cannot hold dots: gpt-3.5-turbo → gpt-35-turbo). The Responses API is
 * not per deployment: `{base}/openai/responses`.
 */
export function azureUrl(channel: ChannelConfig, endpoint: Endpoint, model: string): string {
  const base = channel.baseUrl.replace(/\/+$/, '');
  if (!base)
    throw new Error(`channel ${channel.id}: an Azure channel needs its resource endpoint as base URL`);
  const version = encodeURIComponent(channel.other.trim() || AZURE_DEFAULT_API_VERSION);
  if (endpoint === 'responses') return `${base}/openai/responses?api-version=${version}`;
  const deployment = encodeURIComponent(model.replaceAll('.', ''));
  return `${base}/openai/deployments/${deployment}${ENDPOINT_PATHS[endpoint]}?api-version=${version}`;
}

/** Azure OpenAI (type 3): OpenAI's wire format behind another URL scheme and the `api-key` header. */
export const azureAdaptor: SyncProviderAdaptor = {
  id: 'azure',
  channelTypes: [3],
  supports: (endpoint) => ENDPOINTS.has(endpoint),
  buildRequest(channel: ChannelConfig, input: RelayInput): UpstreamRequest {
    const { body, contentType, model } = buildOpenAIBody(channel, input);
    const headers = jsonHeaders(contentType, input.stream);
    headers.set('api-key', channel.key);
    return { url: azureUrl(channel, input.endpoint, model), method: 'POST', headers, body };
  },
  parseResponse: parseOpenAIResponse,
  streamConversion: openAIStreamConversion,
  parseError: parseOpenAIError,
};
