/**
 * Realtime events as billing sees them (OpenAI Realtime API, GA and beta): which response an event belongs to,
 * the text it streams, and the usage a `response.done` reports. Pure; unit-tested in usage.test.ts.
 */
import { type Usage, usage } from '../core/usage.ts';

export type RealtimeEventInfo = {
  type: string;
  /** The response the event belongs to (`response.id` or `response_id`), when it names one. */
  responseId: string | null;
  /** Output text or transcript carried by a delta event (counted locally when no usage comes). */
  text: string;
  /** Set on `response.done`: the usage it reports, or null when it has none. */
  usage: Usage | null;
};

/** Delta events whose `delta` is output text or the transcript of output audio (GA and beta names). */
const TEXT_DELTAS = new Set([
  'response.output_text.delta',
  'response.text.delta',
  'response.output_audio_transcript.delta',
  'response.audio_transcript.delta',
]);

const count = (v: unknown): number =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.trunc(v) : 0;
const obj = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/**
 * `response.usage` of a `response.done` in the relay's usage shape (OpenAI semantics: the prompt includes its
 * audio tokens, the completion its audio tokens). Input tokens the details do not split (text, audio) count as
 * text. Cached tokens are not passed on: new-api prices realtime input without a cache discount, and a cached
 * token is already counted in the text or audio figure.
 */
export function realtimeUsage(raw: unknown): Usage | null {
  const u = obj(raw);
  if (!u) return null;
  const inDetails = obj(u.input_token_details) ?? {};
  const outDetails = obj(u.output_token_details) ?? {};
  const audioIn = count(inDetails.audio_tokens);
  const audioOut = count(outDetails.audio_tokens);
  const input = Math.max(count(u.input_tokens), count(inDetails.text_tokens) + audioIn);
  const output = Math.max(count(u.output_tokens), count(outDetails.text_tokens) + audioOut);
  return usage({
    promptTokens: input,
    completionTokens: output,
    audioPromptTokens: audioIn,
    audioCompletionTokens: audioOut,
  });
}

/** Reads one text message of the upstream; null when it is not a JSON event. */
export function eventInfo(message: string): RealtimeEventInfo | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return null;
  }
  const ev = obj(parsed);
  if (!ev || typeof ev.type !== 'string') return null;
  const response = obj(ev.response);
  const id =
    typeof response?.id === 'string'
      ? response.id
      : typeof ev.response_id === 'string'
        ? ev.response_id
        : null;
  return {
    type: ev.type,
    responseId: id,
    text: TEXT_DELTAS.has(ev.type) && typeof ev.delta === 'string' ? ev.delta : '',
    usage: ev.type === 'response.done' ? realtimeUsage(response?.usage) : null,
  };
}

/** An OpenAI Realtime `error` server event (what the relay sends before it ends a session itself). */
export function errorEvent(err: { type: string; code: string | null; message: string }): string {
  return JSON.stringify({
    type: 'error',
    event_id: `event_${crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`,
    error: { type: err.type, code: err.code, message: err.message, param: null, event_id: null },
  });
}
