/**
 * Masking of sensitive words in answers: new-api's meaning of StopOnSensitiveEnabled = false ("replace the words
 * instead of stopping"). Every character of a word is replaced with `*`, so a masked text keeps its length and a
 * stream keeps its frames: only the text fields of each frame change.
 *
 * The relay masks what the client receives, after any inbound bridge, so one walker serves every output format
 * it produces: OpenAI chat (`message.content`, `delta.content`, `reasoning_content`), legacy completions (`text`),
 * Responses (`delta` of the `*.delta` events, `text` of the `*.done` events and the final response), Claude
 * messages (`content[].text`, `delta.text`, `delta.thinking`) and Gemini (`parts[].text`).
 *
 * Streams: a word may arrive split across text deltas, so the masker holds back frames until (longest word
 * length - 1) characters of text follow them; only then is every word touching their text known. Frames without
 * text wait behind held ones (order is kept); everything left is flushed when the upstream ends. The stage is
 * added only when masking is on: with it off the relay does no work per chunk for it.
 */
import type { FrameSink, FrameTransformer } from '../providers/frames.ts';
import { encodeSseEvent, SseDecoder, type SseEvent } from '../providers/sse.ts';

/** Keys whose string values are answer text in the formats the relay produces. */
const TEXT_KEYS = new Set([
  'content',
  'text',
  'reasoning_content',
  'reasoning',
  'thinking',
  'refusal',
  'output_text',
]);
/** In a stream, Responses events carry their increment in `delta`. */
const STREAM_TEXT_KEYS = new Set([...TEXT_KEYS, 'delta']);

/** Lowercases without changing the length (a character whose lowercase is longer is kept as is). */
function lowerSameLength(text: string): string {
  const lower = text.toLowerCase();
  if (lower.length === text.length) return lower;
  let out = '';
  for (const ch of text) {
    const l = ch.toLowerCase();
    out += l.length === ch.length ? l : ch;
  }
  return out;
}

/** Marks, in `text`, every position covered by an occurrence of a word (case-insensitive). */
function coverage(text: string, words: readonly string[]): Uint8Array | null {
  let marks: Uint8Array | null = null;
  const lower = lowerSameLength(text);
  for (const w of words) {
    if (!w) continue;
    for (let i = lower.indexOf(w); i >= 0; i = lower.indexOf(w, i + 1)) {
      marks ??= new Uint8Array(text.length);
      marks.fill(1, i, i + w.length);
    }
  }
  return marks;
}

function applyMarks(text: string, marks: Uint8Array | null, offset: number): string {
  if (!marks) return text;
  let out = '';
  let changed = false;
  for (let i = 0; i < text.length; i++) {
    if (marks[offset + i]) {
      out += '*';
      changed = true;
    } else out += text[i];
  }
  return changed ? out : text;
}

/** `text` with every occurrence of every word (lowercase list) replaced by as many `*`. */
export function maskText(text: string, words: readonly string[]): string {
  if (!text || words.length === 0) return text;
  return applyMarks(text, coverage(text, words), 0);
}

/**
 * Masks, in place, the text fields of a parsed answer as one text in document order (a Gemini answer may split a
 * word across parts); returns whether anything changed.
 */
function maskFields(value: unknown, words: readonly string[], keys: ReadonlySet<string>): boolean {
  const found: Omit<Slot, 'start' | 'end'>[] = [];
  collectSlots(value, found, keys);
  if (found.length === 0) return false;
  const texts = found.map((f) => f.obj[f.key] as string);
  const marks = coverage(texts.join(''), words);
  if (!marks) return false;
  let offset = 0;
  found.forEach((f, i) => {
    const text = texts[i]!;
    f.obj[f.key] = applyMarks(text, marks, offset);
    offset += text.length;
  });
  return true;
}

/**
 * A whole (non-streamed) answer with its words masked. JSON bodies only: anything else (audio, images) has no
 * text to mask and is returned unchanged.
 */
export function maskAnswerBody(body: string, contentType: string, words: readonly string[]): string {
  if (!/json/i.test(contentType)) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  return maskFields(parsed, words, TEXT_KEYS) ? JSON.stringify(parsed) : body;
}

/** One string field of a held frame, and where its text sits in the masker's window. */
type Slot = { obj: Record<string, unknown>; key: string; start: number; end: number };
/** `json` is set when the frame's data is to be re-serialised (its text may have changed). */
type Held = { ev: SseEvent; json: unknown; slots: Slot[] };

/** Events whose text fields repeat the whole text so far (Responses `*.done`, the final response). */
function isWholeEvent(json: unknown): boolean {
  const type = (json as { type?: unknown } | null)?.type;
  return (
    typeof type === 'string' &&
    (type.endsWith('.done') ||
      type === 'response.completed' ||
      type === 'response.incomplete' ||
      type === 'response.failed')
  );
}

function collectSlots(
  value: unknown,
  slots: Omit<Slot, 'start' | 'end'>[],
  keys: ReadonlySet<string> = STREAM_TEXT_KEYS,
): void {
  if (Array.isArray(value)) {
    for (const v of value) collectSlots(v, slots, keys);
  } else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const key of Object.keys(o)) {
      const v = o[key];
      if (typeof v === 'string') {
        if (keys.has(key)) slots.push({ obj: o, key });
      } else if (v && typeof v === 'object') collectSlots(v, slots, keys);
    }
  }
}

/**
 * The stream stage: client SSE bytes in (any of the formats above), the same events out with their words
 * masked. `words` are lowercase and non-empty.
 */
export function maskingStage(words: readonly string[]): FrameTransformer {
  const hold = Math.max(0, ...words.map((w) => w.length)) - 1;
  const decoder = new SseDecoder();
  const queue: Held[] = [];
  // The window: the last `hold` characters of released text (unmasked, so a word starting there and ending in a
  // held frame is still found), then the text of the held frames.
  let context = '';
  let held = '';

  const emit = (h: Held, out: FrameSink) => {
    out.enqueue(
      h.json === undefined ? encodeSseEvent(h.ev) : encodeSseEvent({ ...h.ev, data: JSON.stringify(h.json) }),
    );
  };

  /** Releases the frames whose text is followed by at least `hold` characters (all of them when `all`). */
  const release = (out: FrameSink, all: boolean) => {
    const safe = all ? held.length : held.length - hold;
    let n = 0;
    while (n < queue.length) {
      const last = queue[n]!.slots.at(-1);
      if (last && last.end > safe) break;
      n++;
    }
    if (n === 0) return;
    const window = context + held;
    const marks = coverage(window, words);
    const upTo = n === queue.length ? held.length : (queue[n]!.slots[0]?.start ?? held.length);
    for (const h of queue.splice(0, n)) {
      for (const s of h.slots) {
        const text = held.slice(s.start, s.end);
        s.obj[s.key] = applyMarks(text, marks, context.length + s.start);
      }
      emit(h, out);
    }
    const released = context + held.slice(0, upTo);
    context = hold > 0 ? released.slice(-hold) : '';
    held = held.slice(upTo);
    for (const h of queue)
      for (const s of h.slots) {
        s.start -= upTo;
        s.end -= upTo;
      }
  };

  const onEvent = (ev: SseEvent, out: FrameSink) => {
    let json: unknown;
    try {
      json = ev.data.startsWith('{') ? JSON.parse(ev.data) : undefined;
    } catch {
      json = undefined;
    }
    if (json === undefined) {
      if (queue.length === 0) out.enqueue(encodeSseEvent(ev));
      else queue.push({ ev, json, slots: [] });
      return;
    }
    if (isWholeEvent(json)) {
      // The whole text is here: mask it at once; it still waits behind held deltas to keep the order.
      maskFields(json, words, STREAM_TEXT_KEYS);
      if (queue.length === 0) emit({ ev, json, slots: [] }, out);
      else queue.push({ ev, json, slots: [] });
      return;
    }
    const found: Omit<Slot, 'start' | 'end'>[] = [];
    collectSlots(json, found);
    const slots: Slot[] = [];
    for (const f of found) {
      const text = f.obj[f.key] as string;
      if (!text) continue;
      slots.push({ ...f, start: held.length, end: held.length + text.length });
      held += text;
    }
    if (slots.length === 0) {
      if (queue.length === 0) out.enqueue(encodeSseEvent(ev));
      else queue.push({ ev, json: undefined, slots });
      return;
    }
    queue.push({ ev, json, slots });
    release(out, false);
  };

  return {
    transform(chunk, out) {
      for (const ev of decoder.push(chunk)) onEvent(ev, out);
    },
    flush(out) {
      for (const ev of decoder.end()) onEvent(ev, out);
      release(out, true);
    },
  };
}
