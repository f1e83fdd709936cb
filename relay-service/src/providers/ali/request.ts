/**
 * OpenAI chat and embeddings requests → DashScope's native API (Alibaba Cloud Model Studio):
 * - chat: `POST {base}/api/v1/services/aigc/text-generation/generation` with
 *   `{model, input: {messages}, parameters: {result_format: "message", incremental_output, ...}}`;
 * - vision chat (qwen-vl, qvq models, or any image part): `POST {base}/api/v1/services/aigc/multimodal-generation/
 *   generation`, the same body with each content a list of `{text}` and `{image}` items;
 * - embeddings: `POST {base}/api/v1/services/embeddings/text-embedding/text-embedding` with
 *   `{model, input: {texts}, parameters: {text_type, dimension?}}`.
 * The key is sent as `Authorization: Bearer`; a stream asks for SSE with `X-DashScope-SSE: enable`; the channel's
 * `other` field, when set, is the plugin configuration sent as `X-DashScope-Plugin` (one-api's use of it).
 */
import { isObject, type Obj, str } from '../json.ts';
import type { ChannelConfig, RelayInput, UpstreamRequest } from '../types.ts';

export const DASHSCOPE_DEFAULT_BASE = 'https://dashscope.aliyuncs.com';
export const CHAT_PATH = '/api/v1/services/aigc/text-generation/generation';
export const MULTIMODAL_PATH = '/api/v1/services/aigc/multimodal-generation/generation';
export const EMBEDDINGS_PATH = '/api/v1/services/embeddings/text-embedding/text-embedding';

/** one-api's convention: a `-internet` model suffix turns DashScope's web search on. */
export const SEARCH_SUFFIX = '-internet';

export function dashScopeBase(channel: ChannelConfig): string {
  // A base entered with the API root (`https://host/api/v1`) is accepted as well.
  return (channel.baseUrl || DASHSCOPE_DEFAULT_BASE).replace(/\/+$/, '').replace(/\/api\/v1$/, '');
}

/** Text of an OpenAI content value: a string, or the text parts of a part list. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (isObject(p) && (p.type === 'text' || p.type === 'input_text') ? str(p.text) : ''))
    .join('');
}

const isImagePart = (p: unknown): boolean => isObject(p) && p.type === 'image_url';

/** The URL of an OpenAI image part (`{image_url: {url}}` or the older `{image_url: "url"}`). */
function imageUrl(p: Obj): string {
  return isObject(p.image_url) ? str(p.image_url.url) : str(p.image_url);
}

/** DashScope's multimodal content: `[{text}, {image}]` in the client's order. */
function multimodalContent(content: unknown): Obj[] {
  if (typeof content === 'string') return [{ text: content }];
  if (!Array.isArray(content)) return [];
  return content.filter(isObject).flatMap((p): Obj[] => {
    if (p.type === 'text' || p.type === 'input_text') return [{ text: str(p.text) }];
    if (isImagePart(p)) return [{ image: imageUrl(p) }];
    return [];
  });
}

/** Vision models (qwen-vl-*, qwen2.5-vl-*, qvq-*) are served only by the multimodal service; so is any image. */
export function isMultimodal(model: string, messages: unknown): boolean {
  if (/(^|-)vl(-|$)|^qvq/i.test(model)) return true;
  return (
    Array.isArray(messages) &&
    messages.some((m) => isObject(m) && Array.isArray(m.content) && m.content.some(isImagePart))
  );
}

function toolCalls(calls: unknown): Obj[] | undefined {
  if (!Array.isArray(calls) || calls.length === 0) return undefined;
  return calls.filter(isObject).map((c) => {
    const fn = isObject(c.function) ? c.function : {};
    return {
      id: str(c.id),
      type: 'function',
      function: { name: str(fn.name), arguments: str(fn.arguments) },
    };
  });
}

/**
 * OpenAI messages → DashScope messages (roles system, user, assistant, tool; `developer` is a system prompt).
 * Text models take string content; the multimodal service takes item lists (tool results stay strings).
 */
export function dashScopeMessages(messages: unknown, multimodal = false): Obj[] {
  if (!Array.isArray(messages)) return [];
  return messages.filter(isObject).map((m) => {
    const role = str(m.role).toLowerCase();
    const content = multimodal && role !== 'tool' ? multimodalContent(m.content) : textOf(m.content);
    const out: Obj = { role: role === 'developer' ? 'system' : role, content };
    if (role === 'assistant') {
      const calls = toolCalls(m.tool_calls);
      if (calls) out.tool_calls = calls;
    }
    if (role === 'tool') {
      if (str(m.tool_call_id)) out.tool_call_id = str(m.tool_call_id);
      if (str(m.name)) out.name = str(m.name);
    }
    return out;
  });
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The DashScope chat body. The client's body is never mutated (core reuses it for retries). */
export function buildChatBody(channel: ChannelConfig, input: RelayInput): Obj {
  const body = input.body as Obj;
  let model = input.upstreamModel;
  const multimodal = isMultimodal(model, body.messages);
  let enableSearch = body.enable_search === true;
  if (model.endsWith(SEARCH_SUFFIX)) {
    model = model.slice(0, -SEARCH_SUFFIX.length);
    enableSearch = true;
  }
  const parameters: Obj = { result_format: 'message' };
  if (input.stream) parameters.incremental_output = true;
  for (const key of ['temperature', 'top_p', 'top_k', 'seed', 'repetition_penalty', 'presence_penalty'])
    if (finite(body[key])) parameters[key] = body[key];
  const maxTokens = finite(body.max_completion_tokens) ? body.max_completion_tokens : body.max_tokens;
  if (finite(maxTokens)) parameters.max_tokens = maxTokens;
  if (typeof body.stop === 'string' || Array.isArray(body.stop)) parameters.stop = body.stop;
  if (Array.isArray(body.tools) && body.tools.length > 0) parameters.tools = body.tools;
  if (body.tool_choice !== undefined && parameters.tools) parameters.tool_choice = body.tool_choice;
  if (typeof body.parallel_tool_calls === 'boolean')
    parameters.parallel_tool_calls = body.parallel_tool_calls;
  if (isObject(body.response_format) && body.response_format.type === 'json_object')
    parameters.response_format = { type: 'json_object' };
  if (enableSearch) parameters.enable_search = true;
  // param_override tunes the body but never the model (what is billed is what is sent).
  return {
    ...channel.paramOverride,
    model,
    input: { messages: dashScopeMessages(body.messages, multimodal) },
    parameters,
  };
}

export function embeddingTexts(body: Obj): string[] {
  const input = body.input;
  if (typeof input === 'string') return [input];
  return Array.isArray(input) ? input.filter((s): s is string => typeof s === 'string') : [];
}

export function buildEmbeddingsBody(channel: ChannelConfig, input: RelayInput): Obj {
  const body = input.body as Obj;
  const parameters: Obj = { text_type: 'query' };
  if (finite(body.dimensions)) parameters.dimension = body.dimensions;
  return {
    ...channel.paramOverride,
    model: input.upstreamModel,
    input: { texts: embeddingTexts(body) },
    parameters,
  };
}

export function dashScopeRequest(channel: ChannelConfig, input: RelayInput): UpstreamRequest {
  const embeddings = input.endpoint === 'embeddings';
  const headers = new Headers({
    'content-type': 'application/json',
    authorization: `Bearer ${channel.key}`,
  });
  if (input.stream && !embeddings) {
    headers.set('accept', 'text/event-stream');
    headers.set('X-DashScope-SSE', 'enable');
  }
  const plugin = channel.other.trim();
  if (plugin && !embeddings) {
    try {
      headers.set('X-DashScope-Plugin', plugin);
    } catch {
      throw new Error(`channel ${channel.id}: "other" is not a valid X-DashScope-Plugin header value`);
    }
  }
  return {
    url:
      dashScopeBase(channel) +
      (embeddings
        ? EMBEDDINGS_PATH
        : isMultimodal(input.upstreamModel, (input.body as Obj).messages)
          ? MULTIMODAL_PATH
          : CHAT_PATH),
    method: 'POST',
    headers,
    body: JSON.stringify(embeddings ? buildEmbeddingsBody(channel, input) : buildChatBody(channel, input)),
  };
}
