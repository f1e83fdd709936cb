/**
 * Gemini `streamGenerateContent?alt=sse` → OpenAI `chat.completion.chunk` SSE. Every event is a whole
 * GenerateContentResponse holding the NEW parts only: text parts become content deltas, `thought: true` parts
 * reasoning_content deltas, functionCall parts (always complete) one tool call delta each with its index; the
 * candidate's finishReason closes the choice. usageMetadata is cumulative, so the last one counts. A
 * `{"error":…}` event becomes an OpenAI error chunk. The usage chunk is sent only when the client asked for it;
 * `[DONE]` ends the stream once.
 */
import type { Usage } from '../../core/usage.ts';
import type { FrameSink, FrameTransformer } from '../frames.ts';
import { isObject, type Obj, str } from '../json.ts';
import { clientWantsStreamUsage } from '../openai/request.ts';
import { SseDecoder } from '../sse.ts';
import type { RelayInput, StreamConversion } from '../types.ts';
import { chatCompletionId, finishReason, googleError, splitParts } from './response.ts';
import { geminiUsage, openAIUsageOf } from './usage.ts';

const encoder = new TextEncoder();
const frame = (payload: unknown) => encoder.encode(`data: ${JSON.stringify(payload)}\n\n`);

type ChoiceState = { tools: number; finished: boolean };

export function geminiStreamConversion(input: RelayInput, now: () => number = Date.now): StreamConversion {
  const decoder = new SseDecoder();
  const wantsUsage = clientWantsStreamUsage(input);
  const created = Math.floor(now() / 1000);
  let id = '';
  let model = input.upstreamModel;
  let lastUsage: Usage | null = null;
  let sawFirstToken = false;
  let callNo = 0;
  const text: string[] = [];
  const choices = new Map<number, ChoiceState>();
  let done = false;

  const chunk = (index: number, delta: Obj, finish: string | null = null): Obj => ({
    id: id || chatCompletionId('', created),
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index, delta, finish_reason: finish, logprobs: null }],
  });

  function onResponse(res: Obj): Uint8Array[] {
    const err = googleError(res);
    if (err)
      return [
        frame({
          error: {
            message: str(err.message) || 'upstream stream error',
            type: str(err.status).toLowerCase() || 'upstream_error',
          },
        }),
      ];
    if (!id && str(res.responseId)) id = chatCompletionId(str(res.responseId), created);
    if (str(res.modelVersion)) model = str(res.modelVersion);
    const u = geminiUsage(res.usageMetadata);
    if (u) lastUsage = u;
    const out: Uint8Array[] = [];
    const candidates = Array.isArray(res.candidates) ? res.candidates : [];
    candidates.forEach((c, i) => {
      const cand = isObject(c) ? c : {};
      const index = typeof cand.index === 'number' ? cand.index : i;
      let state = choices.get(index);
      if (!state) {
        state = { tools: 0, finished: false };
        choices.set(index, state);
        out.push(frame(chunk(index, { role: 'assistant', content: '' })));
      }
      const parts = splitParts(cand);
      for (const t of parts.thoughts) {
        text.push(t);
        sawFirstToken = true;
        out.push(frame(chunk(index, { reasoning_content: t })));
      }
      for (const t of parts.text) {
        if (t === '') continue;
        text.push(t);
        sawFirstToken = true;
        out.push(frame(chunk(index, { content: t })));
      }
      for (const call of parts.calls) {
        text.push(call.args);
        sawFirstToken = true;
        out.push(
          frame(
            chunk(index, {
              tool_calls: [
                {
                  index: state.tools++,
                  id: call.id || `call_${callNo++}`,
                  type: 'function',
                  function: { name: call.name, arguments: call.args },
                },
              ],
            }),
          ),
        );
      }
      const reason = finishReason(cand.finishReason, state.tools > 0);
      if (reason && !state.finished) {
        state.finished = true;
        out.push(frame(chunk(index, {}, reason)));
      }
    });
    // A prompt blocked by safety: no candidates, only promptFeedback.blockReason.
    const feedback = isObject(res.promptFeedback) ? res.promptFeedback : null;
    if (candidates.length === 0 && feedback && str(feedback.blockReason) && !choices.has(0)) {
      choices.set(0, { tools: 0, finished: true });
      out.push(frame(chunk(0, { role: 'assistant', content: '' })), frame(chunk(0, {}, 'content_filter')));
    }
    return out;
  }

  function finish(): Uint8Array[] {
    if (done) return [];
    done = true;
    const out: Uint8Array[] = [];
    if (wantsUsage && lastUsage)
      out.push(
        frame({
          id: id || chatCompletionId('', created),
          object: 'chat.completion.chunk',
          created,
          model,
          choices: [],
          usage: openAIUsageOf(lastUsage),
        }),
      );
    out.push(encoder.encode('data: [DONE]\n\n'));
    return out;
  }

  const handle = (controller: FrameSink, events: ReturnType<SseDecoder['push']>) => {
    for (const ev of events) {
      let data: unknown;
      try {
        data = JSON.parse(ev.data);
      } catch {
        continue;
      }
      if (!isObject(data) && !Array.isArray(data)) continue;
      for (const bytes of onResponse(isObject(data) ? data : { error: googleError(data) }))
        controller.enqueue(bytes);
    }
  };

  const transformer: FrameTransformer = {
    transform(bytes, controller) {
      handle(controller, decoder.push(bytes));
    },
    flush(controller) {
      handle(controller, decoder.end());
      for (const bytes of finish()) controller.enqueue(bytes);
    },
  };

  return {
    transformer,
    tally: () => ({ usage: lastUsage, completionText: text.join(''), sawFirstToken }),
  };
}
