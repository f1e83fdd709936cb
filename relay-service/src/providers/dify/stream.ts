/**
 * Dify streaming (`response_mode: streaming`) → OpenAI chunks. Every SSE `data:` is a JSON event named by its
 * `event` field:
 * - `message` / `agent_message`: an `answer` piece → a content delta;
 * - `agent_thought`: an agent's reasoning step; a non-empty `thought` → a reasoning_content delta;
 * - `message_end`: `metadata.usage` → the finish chunk (and the usage chunk when the client asked for one);
 * - `error`: `{status, code, message}` → an OpenAI error chunk, the stream ends;
 * - `ping`, `message_file`, `message_replace`, `tts_message*`, `workflow_*`, `node_*`, `iteration_*`: not part of
 *   an OpenAI answer, skipped (new-api shows workflow/node steps only in a debug mode).
 * Chunks carry the conversation id as their `id` and `conversation_id`, like the blocking answer.
 */
import type { Usage } from '../../core/usage.ts';
import type { FrameSink, FrameTransformer } from '../frames.ts';
import { isObject, type Obj, str } from '../json.ts';
import { clientWantsStreamUsage } from '../openai/request.ts';
import { parseOpenAIUsage } from '../openai/usage.ts';
import { completionChunk, DONE_FRAME, sseFrame } from '../plain-chat.ts';
import { SseDecoder } from '../sse.ts';
import type { RelayInput, StreamConversion } from '../types.ts';

export function difyStreamConversion(input: RelayInput, now: () => number = Date.now): StreamConversion {
  const decoder = new SseDecoder();
  const wantsUsage = clientWantsStreamUsage(input);
  const created = Math.floor(now() / 1000);
  const model = input.upstreamModel;
  let conversationId = '';
  let usage: Usage | null = null;
  let text = '';
  let sawFirstToken = false;
  let started = false;
  let finished = false;

  const chunk = (delta: Obj, finish: string | null = null): Uint8Array => {
    const c = completionChunk(conversationId || `chatcmpl-dify-${created}`, created, model, delta, finish);
    c.conversation_id = conversationId;
    return sseFrame(c);
  };
  const delta = (fields: Obj): Obj => {
    if (started) return fields;
    started = true;
    return { role: 'assistant', ...fields };
  };

  const onEvent = (out: FrameSink, ev: Obj) => {
    if (finished) return;
    if (str(ev.conversation_id)) conversationId = str(ev.conversation_id);
    switch (str(ev.event)) {
      case 'message':
      case 'agent_message': {
        const piece = str(ev.answer);
        if (!piece) return;
        text += piece;
        sawFirstToken = true;
        out.enqueue(chunk(delta({ content: piece })));
        return;
      }
      case 'agent_thought': {
        const thought = str(ev.thought);
        if (!thought) return;
        text += thought;
        sawFirstToken = true;
        out.enqueue(chunk(delta({ reasoning_content: thought })));
        return;
      }
      case 'message_end': {
        finished = true;
        const metadata = isObject(ev.metadata) ? ev.metadata : {};
        usage = parseOpenAIUsage(metadata.usage);
        out.enqueue(chunk(started ? {} : delta({ content: '' }), 'stop'));
        if (wantsUsage && usage) {
          const c = completionChunk(conversationId, created, model, {});
          c.choices = [];
          c.usage = {
            prompt_tokens: usage.promptTokens,
            completion_tokens: usage.completionTokens,
            total_tokens: usage.promptTokens + usage.completionTokens,
          };
          out.enqueue(sseFrame(c));
        }
        return;
      }
      case 'error': {
        finished = true;
        out.enqueue(
          sseFrame({
            error: {
              message: str(ev.message) || 'Dify stream error',
              type: 'upstream_error',
              code: str(ev.code) || null,
            },
          }),
        );
        return;
      }
      default:
        return;
    }
  };

  const handle = (out: FrameSink, events: ReturnType<SseDecoder['push']>) => {
    for (const e of events) {
      let data: unknown;
      try {
        data = JSON.parse(e.data);
      } catch {
        continue;
      }
      if (isObject(data)) onEvent(out, data);
    }
  };

  const transformer: FrameTransformer = {
    transform(bytes, out) {
      handle(out, decoder.push(bytes));
    },
    flush(out) {
      handle(out, decoder.end());
      out.enqueue(DONE_FRAME);
    },
  };
  return { transformer, tally: () => ({ usage, completionText: text, sawFirstToken }) };
}
