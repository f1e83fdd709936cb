/**
 * Cohere v2 chat stream → OpenAI `chat.completion.chunk` SSE. Every documented event type is handled:
 * message-start (id), content-start / content-delta (text → `content`, thinking → `reasoning_content`),
 * content-end, tool-plan-delta (the text before tool calls → `content`, as in whole replies), tool-call-start /
 * tool-call-delta / tool-call-end (→ `tool_calls` with id, name and argument fragments), citation-start/end and
 * debug (nothing an OpenAI client reads), message-end (finish reason, usage; `delta.error` is passed on as an
 * OpenAI error chunk). A trailing `data: [DONE]` from Cohere is absorbed: the relay sends its own exactly once.
 */
import type { Usage } from '../../core/usage.ts';
import type { FrameSink, FrameTransformer } from '../frames.ts';
import { isObject, type Obj, str } from '../json.ts';
import { clientWantsStreamUsage } from '../openai/request.ts';
import { SseDecoder, type SseEvent } from '../sse.ts';
import type { RelayInput, StreamConversion } from '../types.ts';
import { chatCompletionId, finishReason } from './response.ts';
import { cohereUsage, openAIUsage } from './usage.ts';

const encoder = new TextEncoder();
const frame = (payload: unknown) => encoder.encode(`data: ${JSON.stringify(payload)}\n\n`);
const DONE = encoder.encode('data: [DONE]\n\n');

/** `delta.message` of an event. */
const deltaMessage = (data: Obj): Obj =>
  isObject(data.delta) && isObject(data.delta.message) ? data.delta.message : {};

export function cohereStreamConversion(input: RelayInput, now: () => number = Date.now): StreamConversion {
  const decoder = new SseDecoder();
  const wantsUsage = clientWantsStreamUsage(input);
  const created = Math.floor(now() / 1000);
  const model = input.upstreamModel;
  let id = chatCompletionId('');
  let usage: Usage | null = null;
  let sawFirstToken = false;
  let roleSent = false;
  let finished = false;
  const text: string[] = [];
  /** Cohere tool call index → OpenAI tool_calls index. */
  const toolIndex = new Map<number, number>();

  const chunk = (delta: Obj, finish: string | null = null): Uint8Array => {
    const d = roleSent ? delta : { role: 'assistant', ...delta };
    roleSent = true;
    return frame({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta: d, finish_reason: finish, logprobs: null }],
    });
  };

  const token = (piece: string, delta: Obj): Uint8Array[] => {
    if (piece === '') return [];
    text.push(piece);
    sawFirstToken = true;
    return [chunk(delta)];
  };

  function onEvent(type: string, data: Obj): Uint8Array[] {
    const msg = deltaMessage(data);
    switch (type) {
      case 'message-start':
        if (str(data.id)) id = chatCompletionId(str(data.id));
        return [chunk({ content: '' })];
      case 'content-start':
      case 'content-delta': {
        const content = isObject(msg.content) ? msg.content : {};
        return [
          ...token(str(content.thinking), { reasoning_content: str(content.thinking) }),
          ...token(str(content.text), { content: str(content.text) }),
        ];
      }
      case 'tool-plan-delta':
        return token(str(msg.tool_plan), { content: str(msg.tool_plan) });
      case 'tool-call-start': {
        const call = isObject(msg.tool_calls) ? msg.tool_calls : {};
        const fn = isObject(call.function) ? call.function : {};
        const index = toolIndex.size;
        toolIndex.set(typeof data.index === 'number' ? data.index : index, index);
        sawFirstToken = true;
        text.push(str(fn.arguments));
        return [
          chunk({
            tool_calls: [
              {
                index,
                id: str(call.id),
                type: 'function',
                function: { name: str(fn.name), arguments: str(fn.arguments) },
              },
            ],
          }),
        ];
      }
      case 'tool-call-delta': {
        const call = isObject(msg.tool_calls) ? msg.tool_calls : {};
        const args = isObject(call.function) ? str(call.function.arguments) : '';
        if (!args) return [];
        const index = toolIndex.get(typeof data.index === 'number' ? data.index : 0) ?? 0;
        text.push(args);
        return [chunk({ tool_calls: [{ index, function: { arguments: args } }] })];
      }
      case 'message-end': {
        const delta = isObject(data.delta) ? data.delta : {};
        const u = cohereUsage(delta.usage);
        if (u) usage = u;
        const out: Uint8Array[] = [];
        if (str(delta.error))
          out.push(frame({ error: { message: str(delta.error), type: 'upstream_error', code: null } }));
        const reason = finishReason(delta.finish_reason);
        if (reason) out.push(chunk({}, reason));
        return [...out, ...finish()];
      }
      default:
        // content-end, tool-call-end, citation-start/end, debug and future events.
        return [];
    }
  }

  function finish(): Uint8Array[] {
    if (finished) return [];
    finished = true;
    const out: Uint8Array[] = [];
    if (wantsUsage && usage)
      out.push(
        frame({
          id,
          object: 'chat.completion.chunk',
          created,
          model,
          choices: [],
          usage: openAIUsage(usage),
        }),
      );
    out.push(DONE);
    return out;
  }

  const handle = (events: SseEvent[], sink: FrameSink) => {
    for (const ev of events) {
      if (finished) return;
      let data: unknown;
      try {
        data = JSON.parse(ev.data);
      } catch {
        // `[DONE]` and anything else that is not JSON.
        continue;
      }
      if (!isObject(data)) continue;
      for (const bytes of onEvent(str(data.type) || ev.event || '', data)) sink.enqueue(bytes);
    }
  };

  const transformer: FrameTransformer = {
    transform(bytes, sink) {
      handle(decoder.push(bytes), sink);
    },
    flush(sink) {
      handle(decoder.end(), sink);
      for (const bytes of finish()) sink.enqueue(bytes);
    },
  };
  return { transformer, tally: () => ({ usage, completionText: text.join(''), sawFirstToken }) };
}
