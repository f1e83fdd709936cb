/**
 * Zhipu v3 `sse-invoke` → OpenAI chunks. The stream is SSE with Zhipu's own fields: `event: add` carries text in
 * `data:` lines (several data lines are one text joined by "\n", as SSE defines, and with `incremental: true`
 * each event holds only the new text); `event: finish` ends it with `meta: {"task_status", "usage", "task_id",
 * "request_id"}` on its own line; `event: error` and `event: interrupted` (a policy stop) carry the reason in
 * `data:`. The standard SSE decoder drops unknown fields, so `meta` needs this small decoder of its own.
 * A refusal before the stream (`{code, msg, success: false}` as a plain JSON body) becomes an OpenAI error event.
 */
import { type Usage, ZERO_USAGE } from '../../core/usage.ts';
import type { FrameSink, FrameTransformer } from '../frames.ts';
import { isObject, type Obj, str } from '../json.ts';
import { clientWantsStreamUsage } from '../openai/request.ts';
import { DONE_FRAME, parseJson, sseFrame, streamErrorFrame, usageChunkFrame } from '../plain-chat.ts';
import type { RelayInput, StreamConversion } from '../types.ts';
import { zhipuFailure, zhipuUsage } from './response.ts';

export type ZhipuEvent = { event: string; data: string; meta: string; id: string };

/** Zhipu's SSE: `event`, `id`, `data` (joined by "\n") and `meta` fields, an event per blank line. */
export class ZhipuSseDecoder {
  #text = new TextDecoder();
  #buffer = '';
  #pendingCr = false;
  #fields: { event: string; id: string; data: string[]; meta: string[] } = this.#empty();

  #empty() {
    return { event: '', id: '', data: [] as string[], meta: [] as string[] };
  }

  push(bytes: Uint8Array): ZhipuEvent[] {
    return this.#lines(this.#text.decode(bytes, { stream: true }), false);
  }

  end(): ZhipuEvent[] {
    const out = this.#lines(this.#text.decode(), true);
    const last = this.#dispatch();
    if (last) out.push(last);
    return out;
  }

  #lines(chunk: string, final: boolean): ZhipuEvent[] {
    let text = chunk;
    // Half a UTF-8 sequence decodes to nothing: keep a pending "\r" for the next push.
    if (text === '' && !final) return [];
    if (this.#pendingCr && text.startsWith('\n')) text = text.slice(1);
    const buf = this.#buffer + text;
    // A chunk ending in "\r": the "\n" opening the next one belongs to the same line break.
    this.#pendingCr = !final && buf.endsWith('\r');
    const parts = buf.split(/\r\n|\n|\r/);
    const rest = parts.pop() ?? '';
    const out: ZhipuEvent[] = [];
    for (const line of parts) {
      const ev = this.#line(line);
      if (ev) out.push(ev);
    }
    if (final && rest !== '') {
      const ev = this.#line(rest);
      if (ev) out.push(ev);
    }
    this.#buffer = final ? '' : rest;
    return out;
  }

  #line(line: string): ZhipuEvent | null {
    if (line === '') return this.#dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.#fields.data.push(value);
    else if (field === 'meta') this.#fields.meta.push(value);
    else if (field === 'event') this.#fields.event = value;
    else if (field === 'id') this.#fields.id = value;
    return null;
  }

  #dispatch(): ZhipuEvent | null {
    const f = this.#fields;
    this.#fields = this.#empty();
    if (!f.event && f.data.length === 0 && f.meta.length === 0) return null;
    return { event: f.event || 'add', id: f.id, data: f.data.join('\n'), meta: f.meta.join('\n') };
  }
}

const RAW_LIMIT = 16_384;

export function zhipuStreamConversion(input: RelayInput, now: () => number = Date.now): StreamConversion {
  const decoder = new ZhipuSseDecoder();
  const wantsUsage = clientWantsStreamUsage(input);
  const created = Math.floor(now() / 1000);
  let id = '';
  let lastUsage: Usage | null = null;
  let sawFirstToken = false;
  let sawEvent = false;
  let refused = false;
  let started = false;
  let finished = false;
  let done = false;
  let raw = '';
  const rawText = new TextDecoder();
  const text: string[] = [];

  const chunkId = () => id || `zhipu-${created}`;
  const chunk = (delta: Obj, finish: string | null = null): Obj => ({
    id: chunkId(),
    object: 'chat.completion.chunk',
    created,
    model: input.upstreamModel,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });

  function start(out: FrameSink): void {
    if (started) return;
    started = true;
    out.enqueue(sseFrame(chunk({ role: 'assistant', content: '' })));
  }

  function finish(out: FrameSink, reason: string): void {
    if (finished) return;
    finished = true;
    start(out);
    out.enqueue(sseFrame(chunk({}, reason)));
  }

  function onEvent(ev: ZhipuEvent, out: FrameSink): void {
    if (!id && ev.id) id = ev.id;
    if (ev.event === 'add') {
      start(out);
      if (ev.data) {
        text.push(ev.data);
        sawFirstToken = true;
        out.enqueue(sseFrame(chunk({ content: ev.data })));
      }
      return;
    }
    if (ev.event === 'finish') {
      const meta = parseJson(ev.meta);
      if (isObject(meta)) {
        const u = zhipuUsage(meta.usage);
        if (u) lastUsage = u;
        if (str(meta.task_id)) id = str(meta.task_id);
      }
      finish(out, 'stop');
      return;
    }
    if (ev.event === 'interrupted') {
      // Zhipu stopped the answer on its content policy.
      finish(out, 'content_filter');
      return;
    }
    if (ev.event === 'error') {
      refused = true;
      out.enqueue(streamErrorFrame(ev.data || 'Zhipu stream error', 'upstream_error', null));
      finished = true;
    }
  }

  function handle(events: ZhipuEvent[], out: FrameSink): void {
    for (const ev of events) {
      sawEvent = true;
      onEvent(ev, out);
    }
  }

  const transformer: FrameTransformer = {
    transform(bytes, out) {
      if (!sawEvent && raw.length < RAW_LIMIT) raw += rawText.decode(bytes, { stream: true });
      handle(decoder.push(bytes), out);
    },
    flush(out) {
      if (done) return;
      const rest = decoder.end();
      // A body that is one JSON object is a refusal, not a stream (its single line would read as an event).
      const json = sawEvent ? null : parseJson(raw + rawText.decode());
      if (isObject(json)) {
        done = true;
        const failure = zhipuFailure(json) ?? {
          message: 'the upstream sent no stream',
          type: 'upstream_error',
          code: null,
        };
        refused = true;
        out.enqueue(streamErrorFrame(failure.message, failure.type, failure.code));
        out.enqueue(DONE_FRAME);
        return;
      }
      handle(rest, out);
      done = true;
      if (wantsUsage && lastUsage)
        out.enqueue(usageChunkFrame(chunkId(), created, input.upstreamModel, lastUsage));
      out.enqueue(DONE_FRAME);
    },
  };

  return {
    transformer,
    // Refused before any text (an error body instead of a stream, or an error event first): nothing was
    // generated and the upstream bills nothing, so neither does the relay (null would count the prompt locally).
    tally: () => ({
      usage: lastUsage ?? (refused && !sawFirstToken ? ZERO_USAGE : null),
      completionText: text.join(''),
      sawFirstToken,
    }),
  };
}
