/**
 * DashScope replies → OpenAI shapes. A chat reply with `result_format: "message"` is
 * `{output: {choices: [{message: {role, content, reasoning_content?, tool_calls?}, finish_reason}]}, usage,
 * request_id}`; an embeddings reply is `{output: {embeddings: [{text_index, embedding}]}, usage: {total_tokens},
 * request_id}`; an error is `{code, message, request_id}` with the HTTP status.
 */
import { isObject, type Obj, str } from '../json.ts';
import { type ParsedResponse, type RelayInput, type UpstreamError, UpstreamFailure } from '../types.ts';
import { dashScopeUsage, openAIUsageOf } from './usage.ts';

const decoder = new TextDecoder();

/** DashScope finish_reason → OpenAI's. While generating DashScope sends null or the string "null". */
export function finishReason(reason: unknown): string | null {
  switch (reason) {
    case 'stop':
    case 'length':
    case 'tool_calls':
      return reason;
    case null:
    case undefined:
    case '':
    case 'null':
      return null;
    default:
      // Any other ending (a future reason) still ends the turn.
      return 'stop';
  }
}

/** Message content: a string from text models, a `[{text}]` list from the multimodal service. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isObject(p) ? str(p.text) : '')).join('');
}

export const completionId = (requestId: string): string => `chatcmpl-${requestId || 'dashscope'}`;

/** DashScope tool calls → OpenAI's (without the stream `index`). */
export function openAIToolCalls(calls: unknown): Obj[] {
  if (!Array.isArray(calls)) return [];
  return calls.filter(isObject).map((c) => {
    const fn = isObject(c.function) ? c.function : {};
    return {
      id: str(c.id),
      type: 'function',
      function: { name: str(fn.name), arguments: str(fn.arguments) },
    };
  });
}

function parseJson(body: Uint8Array | string): unknown {
  try {
    return JSON.parse(typeof body === 'string' ? body : decoder.decode(body));
  } catch {
    return undefined;
  }
}

export function choicesOf(json: unknown): Obj[] {
  const output = isObject(json) && isObject(json.output) ? json.output : {};
  return Array.isArray(output.choices) ? output.choices.filter(isObject) : [];
}

/** A 2xx body that carries `{code, message}` and no output is DashScope's error, not an empty answer. */
function failIfError(root: Obj, hasOutput: boolean): void {
  if (hasOutput || !str(root.code)) return;
  const status = typeof root.status_code === 'number' && root.status_code >= 400 ? root.status_code : 500;
  throw new UpstreamFailure(parseDashScopeError({ status, bodyText: JSON.stringify(root) }));
}

export function parseChatResponse(input: RelayInput, body: Uint8Array, now: () => number): ParsedResponse {
  const json = parseJson(body);
  const root = isObject(json) ? json : {};
  failIfError(root, choicesOf(json).length > 0);
  let text = '';
  const choices = choicesOf(json).map((c, index) => {
    const m = isObject(c.message) ? c.message : {};
    const content = contentText(m.content);
    const reasoning = str(m.reasoning_content);
    const calls = openAIToolCalls(m.tool_calls);
    text += reasoning + content + calls.map((t) => str((t.function as Obj).arguments)).join('');
    const message: Obj = { role: 'assistant', content };
    if (reasoning) message.reasoning_content = reasoning;
    if (calls.length > 0) message.tool_calls = calls;
    const finish = finishReason(c.finish_reason);
    return {
      index,
      message,
      finish_reason: calls.length > 0 && finish === 'stop' ? 'tool_calls' : finish,
      logprobs: null,
    };
  });
  const usage = dashScopeUsage(root.usage);
  const out: Obj = {
    id: completionId(str(root.request_id)),
    object: 'chat.completion',
    created: Math.floor(now() / 1000),
    model: input.upstreamModel,
    choices,
  };
  if (usage) out.usage = openAIUsageOf(usage);
  return { body: JSON.stringify(out), contentType: 'application/json', usage, completionText: text };
}

function base64Floats(values: number[]): string {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  for (const [i, v] of values.entries()) view.setFloat32(i * 4, v, true);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

export function parseEmbeddingsResponse(input: RelayInput, body: Uint8Array): ParsedResponse {
  const json = parseJson(body);
  const root = isObject(json) ? json : {};
  const output = isObject(root.output) ? root.output : {};
  const list = Array.isArray(output.embeddings) ? output.embeddings.filter(isObject) : [];
  failIfError(root, list.length > 0);
  // `encoding_format: "base64"` (the openai SDK's default) is honoured as OpenAI sends it: float32 LE, base64.
  const base64 = (input.body as Obj).encoding_format === 'base64';
  const data = list
    .map((e, i) => {
      const values = Array.isArray(e.embedding)
        ? e.embedding.filter((v): v is number => typeof v === 'number')
        : [];
      const index = typeof e.text_index === 'number' ? e.text_index : i;
      return { object: 'embedding', index, embedding: base64 ? base64Floats(values) : values };
    })
    .sort((a, b) => a.index - b.index);
  const usage = dashScopeUsage(root.usage);
  const out: Obj = { object: 'list', data, model: input.upstreamModel };
  if (usage) out.usage = { prompt_tokens: usage.promptTokens, total_tokens: usage.promptTokens };
  return { body: JSON.stringify(out), contentType: 'application/json', usage, completionText: '' };
}

/** DashScope error codes → OpenAI error types the SDKs know. */
function errorType(status: number, code: string): string {
  if (status === 401 || code === 'InvalidApiKey') return 'authentication_error';
  if (status === 429 || code.startsWith('Throttling')) return 'rate_limit_error';
  if (code === 'Arrearage' || code === 'DataInspectionFailed') return 'invalid_request_error';
  if (status >= 400 && status < 500) return 'invalid_request_error';
  return 'upstream_error';
}

/**
 * `{code, message, request_id}` with the HTTP status. A streamed request's error may arrive framed as an SSE
 * event (`event:error`, `data:{...}`): the JSON of its data line is read then.
 */
export function parseDashScopeError(res: { status: number; bodyText: string }): UpstreamError {
  let json = parseJson(res.bodyText);
  if (!isObject(json)) {
    const data = /^data:(.*)$/m.exec(res.bodyText);
    if (data?.[1]) json = parseJson(data[1]);
  }
  if (isObject(json) && (str(json.message) || str(json.code))) {
    const code = str(json.code) || null;
    return {
      status: res.status,
      message: str(json.message) || str(json.code),
      type: errorType(res.status, code ?? ''),
      code,
    };
  }
  const text = res.bodyText.replace(/\s+/g, ' ').trim().slice(0, 500);
  return {
    status: res.status,
    message: text || `upstream returned status ${res.status}`,
    type: errorType(res.status, ''),
    code: null,
  };
}
