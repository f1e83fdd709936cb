/**
 * Google Gemini (channel type 24): OpenAI chat requests converted to `generateContent` /
 * `streamGenerateContent?alt=sse` and back, OpenAI embeddings via `:batchEmbedContents`, and Gemini-format calls
 * (endpoint 'generate') and Gemini-format embeddings (endpoint 'embed') passed through natively (native.ts, embeddings.ts). The key goes in `x-goog-api-key`; the API version
 * per model comes from gemini.version_settings (default v1beta).
 */
import type { ChannelConfig, Endpoint, RelayInput, SyncProviderAdaptor, UpstreamRequest } from '../types.ts';
import { buildEmbedBody, nativeEmbed, parseEmbedResponse, parseNativeEmbed } from './embeddings.ts';
import { nativeBody, nativeStream, parseNativeResponse } from './native.ts';
import {
  buildGeminiBody,
  GEMINI_DEFAULT_VERSION,
  geminiBase,
  geminiVersion,
  generateUrl,
} from './request.ts';
import { parseGeminiError, parseGeminiResponse } from './response.ts';
import { geminiStreamConversion } from './stream.ts';

export const GEMINI_CHANNEL_TYPE = 24;
const SUPPORTED: ReadonlySet<Endpoint> = new Set(['chat', 'generate', 'embeddings', 'embed']);

type Obj = Record<string, unknown>;

function headers(key: string, stream: boolean): Headers {
  const h = new Headers({ 'content-type': 'application/json', 'x-goog-api-key': key });
  if (stream) h.set('accept', 'text/event-stream');
  return h;
}

function chatRequest(channel: ChannelConfig, input: RelayInput): UpstreamRequest {
  const { model, body } = buildGeminiBody(input);
  return {
    url: generateUrl(channel.baseUrl, geminiVersion(input.settings, model), model, input.stream),
    method: 'POST',
    headers: headers(channel.key, input.stream),
    body: JSON.stringify({ ...body, ...channel.paramOverride }),
  };
}

function embedRequest(channel: ChannelConfig, input: RelayInput): UpstreamRequest {
  const model = input.upstreamModel;
  const version = geminiVersion(input.settings, model);
  return {
    url: `${geminiBase(channel.baseUrl)}/${version}/models/${encodeURIComponent(model)}:batchEmbedContents`,
    method: 'POST',
    headers: headers(channel.key, false),
    body: JSON.stringify({ ...buildEmbedBody(model, input), ...channel.paramOverride }),
  };
}

export function createGeminiAdaptor(now: () => number = Date.now): SyncProviderAdaptor {
  return {
    id: 'gemini',
    channelTypes: [GEMINI_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    buildRequest(channel, input): UpstreamRequest {
      if (input.endpoint === 'embeddings') return embedRequest(channel, input);
      if (input.endpoint === 'embed') {
        const model = input.upstreamModel;
        const native = nativeEmbed(model, input.body as Obj, channel.paramOverride);
        return {
          url: `${geminiBase(channel.baseUrl)}/${geminiVersion(input.settings, model)}/models/${encodeURIComponent(model)}:${native.method}`,
          method: 'POST',
          headers: headers(channel.key, false),
          body: native.body,
        };
      }
      if (input.endpoint === 'generate') {
        const model = input.upstreamModel;
        return {
          url: generateUrl(channel.baseUrl, geminiVersion(input.settings, model), model, input.stream),
          method: 'POST',
          headers: headers(channel.key, input.stream),
          body: nativeBody(channel, input),
        };
      }
      return chatRequest(channel, input);
    },
    parseResponse: (input, res) =>
      input.endpoint === 'generate'
        ? parseNativeResponse(res.body)
        : input.endpoint === 'embed'
          ? parseNativeEmbed(res.body)
          : input.endpoint === 'embeddings'
            ? parseEmbedResponse(input, res.body)
            : parseGeminiResponse(input, res.body, now),
    streamConversion: (input) =>
      input.endpoint === 'generate' ? nativeStream() : geminiStreamConversion(input, now),
    parseError: parseGeminiError,
    modelsRequest(channel): UpstreamRequest {
      return {
        url: `${geminiBase(channel.baseUrl)}/${GEMINI_DEFAULT_VERSION}/models?pageSize=1000`,
        method: 'GET',
        headers: headers(channel.key, false),
        body: null,
      };
    },
    parseModels(body: unknown): string[] {
      const models = (body as Obj | null)?.models;
      return Array.isArray(models)
        ? models.flatMap((m) => {
            const name = (m as Obj | null)?.name;
            return typeof name === 'string' ? [name.replace(/^models\//, '')] : [];
          })
        : [];
    },
  };
}

export const geminiAdaptor: SyncProviderAdaptor = createGeminiAdaptor();
