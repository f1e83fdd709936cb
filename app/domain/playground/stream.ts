/**
 * The browser's reader of POST /pg/chat/completions (seed 001 §4 "Playground message", §7 Playground): the
 * reply text is the first choice's delta content; `data: [DONE]` ends it; a `data: {"error": ...}` event (the
 * console's mid-stream failure) or a non-2xx answer is an error whose message is appended to the reply. A
 * stream that closes without [DONE] and without an error ends the message as complete.
 */

export type StreamEvent =
  | { kind: 'delta'; text: string }
  | { kind: 'done' }
  | { kind: 'error'; message: string };

/** The message of an OpenAI-shaped error body (`{error: {message}}`), or of the console envelope. */
export function errorMessageOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const err = (body as { error?: unknown }).error;
  if (typeof err === 'string' && err) return err;
  if (typeof err === 'object' && err !== null) {
    const message = (err as { message?: unknown }).message;
    if (typeof message === 'string' && message) return message;
  }
  if ((body as { success?: unknown }).success === false) {
    const message = (body as { message?: unknown }).message;
    if (typeof message === 'string' && message) return message;
  }
  return null;
}

/** One SSE `data:` payload as an event; null when it carries no text (role chunk, usage chunk, comment). */
export function parseData(data: string): StreamEvent | null {
  if (data === '[DONE]') return { kind: 'done' };
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return null;
  }
  const error = errorMessageOf(json);
  if (error !== null) return { kind: 'error', message: error };
  const choices = (json as { choices?: unknown }).choices;
  const first = Array.isArray(choices)
    ? (choices[0] as { delta?: { content?: unknown } } | undefined)
    : undefined;
  const text = first?.delta?.content;
  return typeof text === 'string' && text !== '' ? { kind: 'delta', text } : null;
}

/** Splits a growing SSE text buffer into complete events' data payloads; returns them and the rest. */
export function takeEvents(buffer: string): { data: string[]; rest: string } {
  const normalized = buffer.replace(/\r\n/g, '\n');
  const parts = normalized.split('\n\n');
  const rest = parts.pop() ?? '';
  const data: string[] = [];
  for (const part of parts) {
    const lines = part
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''));
    if (lines.length > 0) data.push(lines.join('\n'));
  }
  return { data, rest };
}

/** Reads an event-stream body, calling `onEvent` for each event until [DONE], an error or the end. */
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: StreamEvent) => void,
): Promise<'done' | 'error' | 'closed'> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? `${decoder.decode()}\n\n` : decoder.decode(value, { stream: true });
      const { data, rest } = takeEvents(buffer);
      buffer = rest;
      for (const payload of data) {
        const event = parseData(payload);
        if (!event) continue;
        onEvent(event);
        if (event.kind !== 'delta') return event.kind;
      }
      if (done) return 'closed';
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
