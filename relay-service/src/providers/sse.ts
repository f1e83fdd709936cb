/**
 * Server-sent events, decoded per the WHATWG event-stream rules: lines end in `\r\n`, `\n` or `\r`; a blank line
 * dispatches the event; `data` lines join with `\n`; lines starting with `:` are comments. Bytes may arrive split
 * anywhere (inside a UTF-8 sequence, between `\r` and `\n`), so the decoder keeps state between pushes.
 * Provider stream conversions (OpenAI, later Claude and Gemini) share it.
 */

export type SseEvent = {
  /** The `event:` field, null when absent (OpenAI chat streams never set it). */
  event: string | null;
  data: string;
  id: string | null;
};

export class SseDecoder {
  #text = new TextDecoder();
  #buffer = '';
  /** A chunk ended with `\r`: a `\n` opening the next chunk belongs to the same line break. */
  #pendingCr = false;
  #event: string | null = null;
  #data: string[] = [];
  #id: string | null = null;

  /** Feeds bytes; returns the events completed by them. */
  push(bytes: Uint8Array): SseEvent[] {
    return this.#lines(this.#text.decode(bytes, { stream: true }), false);
  }

  /** Ends the input: a trailing line or an event without its closing blank line still counts (lenient). */
  end(): SseEvent[] {
    const out = this.#lines(this.#text.decode(), true);
    const last = this.#dispatch();
    if (last) out.push(last);
    return out;
  }

  #lines(chunk: string, final: boolean): SseEvent[] {
    let text = chunk;
    // A push that decoded to nothing (half a UTF-8 sequence) must not forget a pending `\r`.
    if (text === '' && !final) return [];
    if (this.#pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.#pendingCr = false;
    const out: SseEvent[] = [];
    let buf = this.#buffer + text;
    let start = 0;
    // The kept buffer holds no line break: scan only the new text (a long line arriving in many chunks).
    for (let i = this.#buffer.length; i < buf.length; i++) {
      const c = buf.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const ev = this.#line(buf.slice(start, i));
      if (ev) out.push(ev);
      if (c === 13) {
        if (i + 1 < buf.length) {
          if (buf.charCodeAt(i + 1) === 10) i++;
        } else {
          this.#pendingCr = true;
        }
      }
      start = i + 1;
    }
    buf = buf.slice(start);
    if (final && buf !== '') {
      const ev = this.#line(buf);
      if (ev) out.push(ev);
      buf = '';
    }
    this.#buffer = buf;
    return out;
  }

  #line(line: string): SseEvent | null {
    if (line === '') return this.#dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
    else if (field === 'id') this.#id = value;
    return null;
  }

  #dispatch(): SseEvent | null {
    const hasData = this.#data.length > 0;
    const ev: SseEvent = { event: this.#event, data: this.#data.join('\n'), id: this.#id };
    this.#event = null;
    this.#data = [];
    this.#id = null;
    // Per the spec an event without data lines is not dispatched.
    return hasData ? ev : null;
  }
}

/** A TransformStream from raw bytes to decoded events, for consumers that want a pipeline. */
export function sseDecoderStream(): TransformStream<Uint8Array, SseEvent> {
  const decoder = new SseDecoder();
  return new TransformStream({
    transform(chunk, controller) {
      for (const ev of decoder.push(chunk)) controller.enqueue(ev);
    },
    flush(controller) {
      for (const ev of decoder.end()) controller.enqueue(ev);
    },
  });
}

const encoder = new TextEncoder();

/** One event in canonical framing (`event:` line when set, one `data:` line per data line, blank line). */
export function encodeSseEvent(ev: { event?: string | null; data: string }): Uint8Array {
  let s = ev.event ? `event: ${ev.event}\n` : '';
  for (const line of ev.data.split('\n')) s += `data: ${line}\n`;
  return encoder.encode(`${s}\n`);
}
