/**
 * Shared pieces of the adaptors for providers with their own plain-text chat APIs (Baidu Wenxin, Zhipu v3,
 * Tencent Hunyuan, PaLM, AI Proxy, Dify): OpenAI message content flattened to text, the OpenAI chat answer and
 * chunk shapes they are turned into, embedding vectors in the encoding the client asked for, and the error for a
 * channel key that cannot be used.
 */
import { RelayError } from '../core/errors.ts';
import type { Usage } from '../core/usage.ts';
import { isObject, type Obj } from './json.ts';
import type { RelayInput } from './types.ts';

/** An OpenAI message's content as plain text: a string, or the text parts of a content array joined. */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (isObject(p) && p.type === 'text' && typeof p.text === 'string' ? p.text : ''))
    .join('');
}

/** The OpenAI messages of a chat body (entries that are not objects dropped). */
export function chatMessages(input: RelayInput): Obj[] {
  const body = input.body instanceof FormData ? {} : input.body;
  return Array.isArray(body.messages) ? body.messages.filter(isObject) : [];
}

export type ChatText = { role: string; text: string };

/** The messages of a chat body as role + text (images, audio and tool calls dropped). */
export function chatTexts(input: RelayInput): ChatText[] {
  return chatMessages(input).map((m) => ({
    role: typeof m.role === 'string' ? m.role : '',
    text: messageText(m.content),
  }));
}

/** A chat.completion.chunk with one choice at index 0. */
export function completionChunk(
  id: string,
  created: number,
  model: string,
  delta: Obj,
  finishReason: string | null = null,
): Obj {
  return {
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
  };
}

/** The OpenAI `usage` object of a normalised Usage. */
export function openAIUsage(u: Usage): Obj {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
  };
}

const encoder = new TextEncoder();

/** One OpenAI SSE event. */
export const sseFrame = (payload: unknown): Uint8Array =>
  encoder.encode(`data: ${JSON.stringify(payload)}\n\n`);
export const DONE_FRAME = encoder.encode('data: [DONE]\n\n');

/** The usage-only chunk (`choices: []`) a stream ends with when the client asked for stream usage. */
export const usageChunkFrame = (id: string, created: number, model: string, u: Usage): Uint8Array =>
  sseFrame({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: openAIUsage(u) });

/** An OpenAI error event inside a stream (the upstream failed after the stream started). */
export const streamErrorFrame = (message: string, type: string, code: string | number | null): Uint8Array =>
  sseFrame({ error: { message, type, code: code === null ? null : String(code) } });

/** The embedding as the client wants it: floats, or OpenAI's base64 of little-endian float32. */
export function encodeEmbedding(values: number[], base64: boolean): number[] | string {
  if (!base64) return values;
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  for (const [i, v] of values.entries()) view.setFloat32(i * 4, v, true);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** The inputs of an OpenAI embeddings body (a string or a list of strings). */
export function embeddingInputs(input: RelayInput): string[] {
  const body = input.body instanceof FormData ? {} : input.body;
  if (typeof body.input === 'string') return [body.input];
  return Array.isArray(body.input) ? body.input.filter((s): s is string => typeof s === 'string') : [];
}

export const wantsBase64 = (input: RelayInput): boolean =>
  !(input.body instanceof FormData) && input.body.encoding_format === 'base64';

/**
 * The channel key does not have the provider's format: the admin's to fix, so the same error core gives for a
 * key its credential exchange cannot use (the channel is skipped, the key itself never appears).
 */
export function channelKeyError(expected: string): RelayError {
  return new RelayError({
    status: 500,
    message: `the channel key cannot be used: expected ${expected}`,
    type: 'new_api_error',
    code: 'channel_key_invalid',
  });
}

/** A client body the provider cannot take (e.g. several embedding inputs where one is allowed). */
export function clientInputError(message: string, param: string | null = null): RelayError {
  return new RelayError({ status: 400, message, type: 'invalid_request_error', code: null, param });
}

/** JSON of an upstream body, or null when it is not JSON. */
export function parseJson(body: Uint8Array | string): unknown {
  try {
    return JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body));
  } catch {
    return null;
  }
}

/** A non-negative integer token count, 0 for anything else. */
export const tokens = (v: unknown): number =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
