/**
 * Wenxin stream → OpenAI chunks. Each SSE event is `data: {id, object, created, sentence_id, is_end,
 * is_truncated, result, need_clear_history, usage, finish_reason?, function_call?}` holding the NEW text only;
 * usage is reported on every frame and is complete on the last one (`is_end: true`), which closes the choice. An
 * error arrives instead of the stream as a plain JSON body `{error_code, error_msg}` with status 200: it becomes
 * an OpenAI error event. The usage chunk goes out only when the client asked for it; `[DONE]` ends the stream.
 */
import { type Usage, ZERO_USAGE } from '../../core/usage.ts';
import type { FrameSink, FrameTransformer } from '../frames.ts';
import { isObject, type Obj, str } from '../json.ts';
import { clientWantsStreamUsage } from '../openai/request.ts';
import { DONE_FRAME, parseJson, sseFrame, streamErrorFrame, usageChunkFrame } from '../plain-chat.ts';
import { SseDecoder } from '../sse.ts';
import type { RelayInput, StreamConversion } from '../types.ts';
import { baiduFailure, baiduUsage, finishReason, toolCallOf } from './response.ts';

/** How much of a body that is not SSE is kept to read an error from it. */
const RAW_LIMIT = 16_384;

export function baiduStreamConversion(input: RelayInput, now: () => number = Date.now): StreamConversion {
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
  const text: string[] = [];
  const rawText = new TextDecoder();

  const chunk = (delta: Obj, finish: string | null = null): Obj => ({
    id: id || `as-${created}`,
    object: 'chat.completion.chunk',
    created,
    model: input.upstreamModel,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });

  function onFrame(res: Obj, out: FrameSink): void {
    const failure = baiduFailure(res);
    if (failure) {
      refused = true;
      out.enqueue(streamErrorFrame(failure.message, failure.type, failure.code));
      return;
    }
    if (!id && str(res.id)) id = str(res.id);
    if (typeof res.created === 'number') created = res.created;
    const u = baiduUsage(res.usage);
    if (u) lastUsage = u;
    if (!started) {
      started = true;
      out.enqueue(sseFrame(chunk({ role: 'assistant', content: '' })));
    }
    const piece = str(res.result);
    if (piece) {
      text.push(piece);
      sawFirstToken = true;
      out.enqueue(sseFrame(chunk({ content: piece })));
    }
    const call = toolCallOf(res, id || String(created));
    if (call) {
      text.push(str((call.function as Obj).arguments));
      sawFirstToken = true;
      out.enqueue(sseFrame(chunk({ tool_calls: [{ index: 0, ...call }] })));
    }
    if (res.is_end === true && !finished) {
      finished = true;
      out.enqueue(sseFrame(chunk({}, finishReason(res))));
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
        // Not a stream at all: Wenxin's error body (or something unreadable).
        const failure = baiduFailure(parseJson(raw + rawText.decode()));
        out.enqueue(
          failure
            ? streamErrorFrame(failure.message, failure.type, failure.code)
            : streamErrorFrame('the upstream sent no stream', 'upstream_error', null),
        );
      }
      if (wantsUsage && lastUsage)
        out.enqueue(usageChunkFrame(id || `as-${created}`, created, input.upstreamModel, lastUsage));
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
