/**
 * Google Vertex AI (channel type 41): Claude and Gemini models under a Google Cloud project, authorised by an
 * OAuth token obtained from the channel's service-account credential (credential.ts; core caches it).
 *
 * - Claude (model names starting with `claude`): `POST https://{region}-aiplatform.googleapis.com/v1/projects/
 *   {project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict` (`:streamRawPredict` with
 *   `"stream": true` for streams). The body is Anthropic's Messages request without `model` and with
 *   `anthropic_version: vertex-2023-10-16`; answers and SSE events are Anthropic's, read by providers/anthropic
 *   (OpenAI chat clients converted, Claude clients on /v1/messages passed through). Model names become Vertex's
 *   `claude-3-5-sonnet-v2@20241022` form (new-api's table).
 * - Gemini (anything else): `.../publishers/google/models/{model}:generateContent` and
 *   `:streamGenerateContent?alt=sse`, read by providers/gemini (chat converted, the native `generate` endpoint
 *   passed through).
 * - A Claude client asking for a Gemini model (or a Gemini client for a Claude model) goes through the inbound
 *   bridges, inside the adaptor, since one Vertex channel serves both families.
 *
 * The region comes from the channel's `other`: a plain region, or JSON `{"default":"us-central1","<model>":"..."}`
 * (the model as the upstream gets it; no entry and no default = `global`). `global` is served by the host
 * aiplatform.googleapis.com. The channel's base URL replaces the `https://{region}-aiplatform.googleapis.com`
 * origin (tests, proxies).
 */
import {
  nativeBody as claudeNativeBody,
  nativeStream as claudeNativeStream,
  parseNativeResponse as parseClaudeNative,
} from '../anthropic/native.ts';
import { buildClaudeBody, claudeSettings, modelHeaders, thinkingModel } from '../anthropic/request.ts';
import { parseClaudeError, parseClaudeResponse } from '../anthropic/response.ts';
import { claudeStreamConversion } from '../anthropic/stream.ts';
import { chatStreamToClaude, chatToClaude, claudeToChat } from '../bridges/claude-chat.ts';
import { chatStreamToGemini, chatToGemini, geminiToChat } from '../bridges/gemini-chat.ts';
import type { FrameTransformer } from '../frames.ts';
import {
  nativeBody as geminiNativeBody,
  nativeStream as geminiNativeStream,
  parseNativeResponse as parseGeminiNative,
} from '../gemini/native.ts';
import { buildGeminiBody } from '../gemini/request.ts';
import { parseGeminiError, parseGeminiResponse } from '../gemini/response.ts';
import { geminiStreamConversion } from '../gemini/stream.ts';
import { isObject, type Obj, str } from '../json.ts';
import type {
  ChannelConfig,
  Endpoint,
  ParsedResponse,
  ProviderAdaptor,
  RelayInput,
  StreamConversion,
  UpstreamError,
  UpstreamRequest,
} from '../types.ts';
import { parseServiceAccount, parseToken, tokenRequest } from './credential.ts';

export const VERTEX_CHANNEL_TYPE = 41;
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';
const SUPPORTED: ReadonlySet<Endpoint> = new Set(['chat', 'messages', 'generate']);

/** Claude model names → Vertex model ids (new-api's relay/channel/vertex table). */
export const VERTEX_CLAUDE_MODELS: Readonly<Record<string, string>> = {
  'claude-3-sonnet-20240229': 'claude-3-sonnet@20240229',
  'claude-3-opus-20240229': 'claude-3-opus@20240229',
  'claude-3-haiku-20240307': 'claude-3-haiku@20240307',
  'claude-3-5-sonnet-20240620': 'claude-3-5-sonnet@20240620',
  'claude-3-5-sonnet-20241022': 'claude-3-5-sonnet-v2@20241022',
  'claude-3-7-sonnet-20250219': 'claude-3-7-sonnet@20250219',
  'claude-sonnet-4-20250514': 'claude-sonnet-4@20250514',
  'claude-opus-4-20250514': 'claude-opus-4@20250514',
  'claude-opus-4-1-20250805': 'claude-opus-4-1@20250805',
  'claude-sonnet-4-5-20250929': 'claude-sonnet-4-5@20250929',
  'claude-haiku-4-5-20251001': 'claude-haiku-4-5@20251001',
  'claude-opus-4-5-20251101': 'claude-opus-4-5@20251101',
};

export function vertexClaudeModel(model: string): string {
  return Object.hasOwn(VERTEX_CLAUDE_MODELS, model) ? VERTEX_CLAUDE_MODELS[model]! : model;
}

const isClaude = (model: string) => model.startsWith('claude');

/** `other` → the model's region (plain region, or the JSON map with "default"; else global). */
export function vertexRegion(other: string, model: string): string {
  const raw = other.trim();
  let region = raw;
  if (raw.startsWith('{')) {
    let map: unknown;
    try {
      map = JSON.parse(raw);
    } catch {
      map = null;
    }
    region = isObject(map) ? str(Object.hasOwn(map, model) ? map[model] : map.default) : '';
  }
  region = region.trim() || 'global';
  if (!/^[a-z0-9-]+$/.test(region))
    throw new Error(
      `the Vertex AI region "${region.slice(0, 40)}" is not a region name (e.g. us-east5, europe-west1, global)`,
    );
  return region;
}

function origin(channel: ChannelConfig, region: string): string {
  if (channel.baseUrl) return channel.baseUrl.replace(/\/+$/, '');
  return region === 'global'
    ? 'https://aiplatform.googleapis.com'
    : `https://${region}-aiplatform.googleapis.com`;
}

/** A path segment: percent-encoded, but `@` kept as Vertex writes its model versions (allowed in a path). */
const segment = (s: string) => encodeURIComponent(s).replace(/%40/g, '@');

function modelUrl(
  channel: ChannelConfig,
  publisher: 'anthropic' | 'google',
  model: string,
  method: string,
): string {
  const project = parseServiceAccount(channel.key).projectId;
  const region = vertexRegion(channel.other, model);
  return `${origin(channel, region)}/v1/projects/${segment(project)}/locations/${region}/publishers/${publisher}/models/${segment(model)}:${method}`;
}

function authHeaders(channel: ChannelConfig, stream: boolean): Headers {
  if (!channel.credential) throw new Error('no OAuth token was obtained for the service account');
  const h = new Headers({
    'content-type': 'application/json',
    authorization: `Bearer ${channel.credential}`,
    'x-goog-user-project': parseServiceAccount(channel.key).projectId,
  });
  if (stream) h.set('accept', 'text/event-stream');
  return h;
}

/** How a call is served: which family upstream, and whether the inbound format is bridged to chat first. */
type Route =
  | { family: 'claude'; native: boolean; bridge: null }
  | { family: 'gemini'; native: boolean; bridge: null }
  | { family: 'claude' | 'gemini'; native: false; bridge: 'messages' | 'generate' };

function route(input: RelayInput): Route {
  const family = isClaude(input.upstreamModel) ? 'claude' : 'gemini';
  if (input.endpoint === 'messages')
    return family === 'claude'
      ? { family, native: true, bridge: null }
      : { family, native: false, bridge: 'messages' };
  if (input.endpoint === 'generate')
    return family === 'gemini'
      ? { family, native: true, bridge: null }
      : { family, native: false, bridge: 'generate' };
  return { family, native: false, bridge: null } as Route;
}

/** The input as a chat call when the inbound format is bridged (what core's bridges do for chat channels). */
function chatInput(input: RelayInput, r: Route): RelayInput {
  if (!r.bridge) return input;
  const body = input.body as Obj;
  const chat = r.bridge === 'messages' ? claudeToChat(body) : geminiToChat(body, input.stream);
  return { ...input, endpoint: 'chat', body: { ...chat, model: input.upstreamModel } };
}

function claudeBody(channel: ChannelConfig, input: RelayInput, native: boolean): Obj {
  const claude: Obj = native
    ? (JSON.parse(claudeNativeBody(channel, input)) as Obj)
    : { ...buildClaudeBody(channel, input), ...channel.paramOverride };
  const { model: _model, ...rest } = claude;
  return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest };
}

export async function buildVertexRequest(
  channel: ChannelConfig,
  input: RelayInput,
): Promise<UpstreamRequest> {
  const r = route(input);
  const call = chatInput(input, r);
  if (r.family === 'claude') {
    const { model } = thinkingModel(input.upstreamModel, claudeSettings(input).thinkingAdapterEnabled);
    const headers = authHeaders(channel, input.stream);
    const beta = new Set<string>();
    const admin = modelHeaders(claudeSettings(input), input.upstreamModel).find(
      ([n]) => n.toLowerCase() === 'anthropic-beta',
    );
    for (const list of [admin?.[1] ?? null, input.clientHeaders.get('anthropic-beta')])
      for (const f of (list ?? '').split(',')) if (f.trim()) beta.add(f.trim());
    if (beta.size) headers.set('anthropic-beta', [...beta].join(','));
    return {
      url: modelUrl(
        channel,
        'anthropic',
        vertexClaudeModel(model),
        input.stream ? 'streamRawPredict' : 'rawPredict',
      ),
      method: 'POST',
      headers,
      body: JSON.stringify(claudeBody(channel, call, r.native)),
    };
  }
  if (r.native) {
    return {
      url: modelUrl(
        channel,
        'google',
        input.upstreamModel,
        input.stream ? 'streamGenerateContent?alt=sse' : 'generateContent',
      ),
      method: 'POST',
      headers: authHeaders(channel, input.stream),
      body: geminiNativeBody(channel, input),
    };
  }
  const { model, body } = buildGeminiBody(call);
  const url = modelUrl(channel, 'google', model, input.stream ? 'streamGenerateContent' : 'generateContent');
  return {
    url: input.stream ? `${url}?alt=sse` : url,
    method: 'POST',
    headers: authHeaders(channel, input.stream),
    body: JSON.stringify({ ...body, ...channel.paramOverride }),
  };
}

/**
 * Vertex answers platform errors in Google's envelope (`{"error":{code,message,status}}`), Claude's own errors in
 * Anthropic's (`{"type":"error","error":{type,message}}`), and the token endpoint in OAuth's
 * (`{"error":"invalid_grant","error_description"}`).
 */
export function parseVertexError(res: { status: number; headers: Headers; bodyText: string }): UpstreamError {
  let json: unknown;
  try {
    json = JSON.parse(res.bodyText);
  } catch {
    json = null;
  }
  if (isObject(json) && json.type === 'error') return parseClaudeError(res);
  if (isObject(json) && typeof json.error === 'string')
    return {
      status: res.status,
      message: str(json.error_description) || json.error,
      type: 'authentication_error',
      code: json.error,
    };
  return parseGeminiError(res);
}

function chained(conv: StreamConversion, next: FrameTransformer | null): StreamConversion {
  if (!next) return conv;
  const first = conv.transformer;
  return {
    transformer: {
      transform(chunk, out) {
        first.transform(chunk, { enqueue: (c) => next.transform(c, out) });
      },
      flush(out) {
        first.flush?.({ enqueue: (c) => next.transform(c, out) });
        next.flush?.(out);
      },
    },
    tally: conv.tally,
  };
}

export function createVertexAdaptor(now: () => number = Date.now): ProviderAdaptor {
  return {
    id: 'vertex',
    channelTypes: [VERTEX_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    credential: { request: tokenRequest, parse: parseToken },
    buildRequest: buildVertexRequest,
    parseResponse(input, res): ParsedResponse {
      const r = route(input);
      if (r.native) return r.family === 'claude' ? parseClaudeNative(res.body) : parseGeminiNative(res.body);
      const call = chatInput(input, r);
      const parsed =
        r.family === 'claude'
          ? parseClaudeResponse(call, res.body, now)
          : parseGeminiResponse(call, res.body, now);
      if (!r.bridge) return parsed;
      const chatJson =
        typeof parsed.body === 'string' ? parsed.body : new TextDecoder().decode(parsed.body as Uint8Array);
      return {
        ...parsed,
        body:
          r.bridge === 'messages'
            ? chatToClaude(chatJson, input.upstreamModel)
            : chatToGemini(chatJson, input.upstreamModel),
      };
    },
    streamConversion(input) {
      const r = route(input);
      if (r.native) return r.family === 'claude' ? claudeNativeStream() : geminiNativeStream();
      const call = chatInput(input, r);
      const conv =
        r.family === 'claude' ? claudeStreamConversion(call, now) : geminiStreamConversion(call, now);
      return chained(
        conv,
        r.bridge === 'messages'
          ? chatStreamToClaude(input.upstreamModel)
          : r.bridge === 'generate'
            ? chatStreamToGemini(input.upstreamModel)
            : null,
      );
    },
    parseError: parseVertexError,
  };
}

export const vertexAdaptor: ProviderAdaptor = createVertexAdaptor();
