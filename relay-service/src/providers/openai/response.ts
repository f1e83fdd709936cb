import type { Usage } from '../../core/usage.ts';
import { isObject, type Obj, str } from '../json.ts';
import type { ParsedResponse, RelayInput, UpstreamError } from '../types.ts';
import { parseOpenAIUsage, parseRerankUsage } from './usage.ts';

/** Text of chat tool calls (`[{function:{name, arguments}}]`): arguments are generated tokens too. */
export function toolCallText(calls: unknown): string {
  if (!Array.isArray(calls)) return '';
  let s = '';
  for (const c of calls) if (isObject(c) && isObject(c.function)) s += str(c.function.arguments);
  return s;
}

/** Generated text of a non-streamed reply, for local counting when the upstream reports no usage. */
function completionTextOf(input: RelayInput, json: Obj): string {
  switch (input.endpoint) {
    case 'chat': {
      let s = '';
      for (const c of Array.isArray(json.choices) ? json.choices : []) {
        if (!isObject(c) || !isObject(c.message)) continue;
        const m = c.message;
        s += str(m.reasoning_content) + str(m.reasoning) + str(m.content) + toolCallText(m.tool_calls);
      }
      return s;
    }
    case 'completions':
      return (Array.isArray(json.choices) ? json.choices : [])
        .map((c) => (isObject(c) ? str(c.text) : ''))
        .join('');
    case 'responses': {
      let s = '';
      for (const item of Array.isArray(json.output) ? json.output : []) {
        if (!isObject(item)) continue;
        if (item.type === 'function_call') s += str(item.arguments);
        for (const part of Array.isArray(item.content) ? item.content : []) {
          if (isObject(part) && (part.type === 'output_text' || part.type === 'reasoning_text'))
            s += str(part.text);
        }
        for (const part of Array.isArray(item.summary) ? item.summary : [])
          if (isObject(part)) s += str(part.text);
      }
      return s;
    }
    case 'transcriptions':
    case 'translations':
      return str(json.text);
    default:
      return '';
  }
}

function usageOf(input: RelayInput, json: Obj): Usage | null {
  switch (input.endpoint) {
    case 'images':
    case 'imageEdits':
      // gpt-image-1 reports `usage: {input_tokens, output_tokens, input_tokens_details: {text_tokens,
      // image_tokens}}`; DALL·E reports none (priced per call, or counted by core from the prompt).
      return parseOpenAIUsage(json.usage);
    case 'speech':
    case 'moderations':
      // Counted by core from the input.
      return null;
    case 'rerank':
      return parseRerankUsage(json);
    default:
      return parseOpenAIUsage(json.usage);
  }
}

const decoder = new TextDecoder();

/**
 * A successful non-streamed reply. The client gets the upstream bytes unchanged (the family already speaks the
 * inbound format); usage and generated text are read from the JSON when there is JSON.
 */
export function parseOpenAIResponse(
  input: RelayInput,
  res: { status: number; headers: Headers; body: Uint8Array },
): ParsedResponse {
  const upstreamType = res.headers.get('content-type') ?? '';
  // BodyInit wants an ArrayBuffer-backed view; the bytes core read from fetch always are.
  const bytes = res.body as Uint8Array<ArrayBuffer>;
  if (input.endpoint === 'speech') {
    return { body: bytes, contentType: upstreamType || 'audio/mpeg', usage: null, completionText: '' };
  }
  const text = decoder.decode(res.body);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!isObject(json)) {
    // Transcriptions with response_format text/srt/vtt answer plain text: that text is the output.
    const plain = input.endpoint === 'transcriptions' || input.endpoint === 'translations' ? text : '';
    return {
      body: bytes,
      contentType: upstreamType || 'text/plain; charset=utf-8',
      usage: null,
      completionText: plain,
    };
  }
  return {
    body: bytes,
    contentType: upstreamType || 'application/json',
    usage: usageOf(input, json),
    completionText: completionTextOf(input, json),
  };
}

const MAX_ERROR_TEXT = 500;

/** Turns an HTML or plain-text error page into one readable line. */
function plainMessage(text: string): string {
  const stripped = text
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return stripped.length > MAX_ERROR_TEXT ? `${stripped.slice(0, MAX_ERROR_TEXT)}…` : stripped;
}

const codeOf = (v: unknown): string | null =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null;

/**
 * OpenAI's error envelope `{error:{message,type,code,param}}`, and the variants compatible upstreams send:
 * `{error:"text"}`, a top-level `{message,type,code}`, FastAPI's `{detail}`; anything else is read as text.
 */
export function parseOpenAIError(res: { status: number; headers: Headers; bodyText: string }): UpstreamError {
  let json: unknown;
  try {
    json = JSON.parse(res.bodyText);
  } catch {
    json = undefined;
  }
  if (isObject(json)) {
    const e = isObject(json.error) ? json.error : json;
    const message =
      str(e.message) ||
      (typeof json.error === 'string' ? json.error : '') ||
      (typeof json.detail === 'string' ? json.detail : '') ||
      str(json.msg);
    if (message) {
      return { status: res.status, message, type: str(e.type) || 'upstream_error', code: codeOf(e.code) };
    }
  }
  const message = plainMessage(res.bodyText) || `upstream returned status ${res.status}`;
  return { status: res.status, message, type: 'upstream_error', code: null };
}
