/**
 * Hunyuan stream → OpenAI chunks. SSE frames `data: {Note, Id, Created, Choices: [{Delta: {Role, Content},
 * FinishReason}], Usage}`: Delta holds the new text, FinishReason is "" until the last frame ("stop", "length",
 * "sensitive"), Usage is cumulative (the last one counts). A failure before the stream comes as a plain JSON
 * body `{Response: {Error}}` and becomes an OpenAI error event; so does an `Error` inside a frame.
 */
import { type Usage, ZERO_USAGE } from '../../core/usage.ts';
import type { FrameSink, FrameTransformer } from '../frames.ts';
import { isObject, type Obj, str } from '../json.ts';
import { clientWantsStreamUsage } from '../openai/request.ts';
import { DONE_FRAME, parseJson, sseFrame, streamErrorFrame, usageChunkFrame } from '../plain-chat.ts';
import { SseDecoder } from '../sse.ts';
import type { RelayInput, StreamConversion } from '../types.ts';
import { hunyuanFailure, hunyuanFinish, hunyuanUsage } from './response.ts';

const RAW_LIMIT = 16_384;

export function hunyuanStreamConversion(input: RelayInput, now: () => number = Date.now): StreamConversion {
  const decoder = new SseDecoder();
  const wantsUsage = clientWantsStreamUsage(input);
  let created = Math.floor(now() / 1000);
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

  const chunk = (delta: Obj, finish: string | null = null): Obj => ({
    id: id || `hunyuan-${created}`,
    object: 'chat.completion.chunk',
    created,
    model: input.upstreamModel,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });

  function onFrame(frame: Obj, out: FrameSink): void {
    const failure = hunyuanFailure({ Response: frame });
    if (failure) {
      refused = true;
      out.enqueue(streamErrorFrame(failure.message, failure.type, failure.code));
      return;
    }
    if (!id && str(frame.Id)) id = str(frame.Id);
    if (typeof frame.Created === 'number') created = frame.Created;
    const u = hunyuanUsage(frame.Usage);
    if (u) lastUsage = u;
    if (!started) {
      started = true;
      out.enqueue(sseFrame(chunk({ role: 'assistant', content: '' })));
    }
    const choice = Array.isArray(frame.Choices) && isObject(frame.Choices[0]) ? frame.Choices[0] : {};
    const delta = isObject(choice.Delta) ? choice.Delta : {};
    const piece = str(delta.Content);
    if (piece) {
      text.push(piece);
      sawFirstToken = true;
      out.enqueue(sseFrame(chunk({ content: piece })));
    }
    const reason = hunyuanFinish(choice.FinishReason);
    if (reason && !finished) {
      finished = true;
      out.enqueue(sseFrame(chunk({}, reason)));
    }
  }

  function handle(events: ReturnType<SseDecoder['push']>, out: FrameSink): void {
    for (const ev of events) {
      sawEvent = true;
      const json = parseJson(ev.data);
      if (isObject(json)) onFrame(json, out);
    }
  }

  const transformer: FrameTransformer = {
    transform(bytes, out) {
      if (!sawEvent && raw.length < RAW_LIMIT) raw += rawText.decode(bytes, { stream: true });
      handle(decoder.push(bytes), out);
    },
    flush(out) {
      handle(decoder.end(), out);
      if (done) return;
      done = true;
      if (!sawEvent) {
        refused = true;
        const failure = hunyuanFailure(parseJson(raw + rawText.decode()));
        out.enqueue(
          failure
            ? streamErrorFrame(failure.message, failure.type, failure.code)
            : streamErrorFrame('the upstream sent no stream', 'upstream_error', null),
        );
      }
      if (wantsUsage && lastUsage)
        out.enqueue(usageChunkFrame(id || `hunyuan-${created}`, created, input.upstreamModel, lastUsage));
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
