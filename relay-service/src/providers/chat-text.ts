/**
 * Small readers of OpenAI chat bodies for adaptors whose upstream takes plain text (PaLM messages, AI Proxy's
 * library query, Dify's query) and a writer of OpenAI `chat.completion.chunk` SSE frames.
 */
import { isObject, type Obj, str } from './json.ts';
import type { RelayInput } from './types.ts';

/** The text of an OpenAI message `content`: the string, or the text parts of a parts array joined. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p): p is Obj => isObject(p) && p.type === 'text')
    .map((p) => str(p.text))
    .join('');
}

export type ChatMessage = { role: string; text: string };

/** The messages of a chat body as role + text (images, audio and tool calls dropped). */
export function chatMessages(input: RelayInput): ChatMessage[] {
  if (input.body instanceof FormData) return [];
  const messages = Array.isArray(input.body.messages) ? input.body.messages : [];
  return messages.filter(isObject).map((m) => ({ role: str(m.role), text: contentText(m.content) }));
}

const encoder = new TextEncoder();

/** One OpenAI SSE frame `data: {...}\n\n`. */
export const sseFrame = (payload: unknown): Uint8Array =>
  encoder.encode(`data: ${JSON.stringify(payload)}\n\n`);

export const SSE_DONE: Uint8Array = encoder.encode('data: [DONE]\n\n');

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
