/**
 * DashScope SSE (`X-DashScope-SSE: enable`, `incremental_output: true`) → OpenAI `chat.completion.chunk` SSE.
 * Each event is `id:N`, `event:result`, `:HTTP_STATUS/200` and `data:{output: {choices: [{message, finish_reason}]},
 * usage, request_id}`: with incremental output every message holds only the new text (and tool-call fragments,
 * keyed by `index`); `finish_reason` is "null" until the last event; usage is the running total. An
 * `event:error` carries `{code, message, request_id}` and is passed on as an OpenAI error chunk. The usage chunk
 * is sent only when the client asked for it; `[DONE]` ends the stream once.
 */
import type { Usage } from '../../core/usage.ts';
import type { FrameSink, FrameTransformer } from '../frames.ts';
import { isObject, type Obj, str } from '../json.ts';
import { clientWantsStreamUsage } from '../openai/request.ts';
import { SseDecoder } from '../sse.ts';
import type { RelayInput, StreamConversion } from '../types.ts';
import { choicesOf, completionId, contentText, finishReason } from './response.ts';
import { dashScopeUsage, openAIUsageOf } from './usage.ts';

const encoder = new TextEncoder();
const frame = (payload: unknown) => encoder.encode(`data: ${JSON.stringify(payload)}\n\n`);

export function dashScopeStreamConversion(input: RelayInput, now: () => number = Date.now): StreamConversion {
  const decoder = new SseDecoder();
  const wantsUsage = clientWantsStreamUsage(input);
  const created = Math.floor(now() / 1000);
  const model = input.upstreamModel;
  let id = completionId('');
  let usage: Usage | null = null;
  let sawFirstToken = false;
  let roleSent = false;
  let finished = false;
  let calledTools = false;
  /** Tool-call indexes whose id and name were sent. */
  const toolsOpened = new Set<number>();
  const text: string[] = [];

  const chunk = (delta: Obj, finish: string | null = null): Obj => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });

  function toolDeltas(calls: unknown): Obj[] {
    if (!Array.isArray(calls)) return [];
    return calls.filter(isObject).map((c, i) => {
      const index = typeof c.index === 'number' ? c.index : i;
      const fn = isObject(c.function) ? c.function : {};
      const args = str(fn.arguments);
      text.push(args);
      if (toolsOpened.has(index)) return { index, function: { arguments: args } };
      toolsOpened.add(index);
      return { index, id: str(c.id), type: 'function', function: { name: str(fn.name), arguments: args } };
    });
  }

  function onResult(data: Obj): Uint8Array[] {
    if (str(data.request_id)) id = completionId(str(data.request_id));
    usage = dashScopeUsage(data.usage) ?? usage;
    const out: Uint8Array[] = [];
    for (const c of choicesOf(data)) {
      const m = isObject(c.message) ? c.message : {};
      const delta: Obj = {};
      if (!roleSent) {
        delta.role = 'assistant';
        roleSent = true;
      }
      const reasoning = str(m.reasoning_content);
      if (reasoning) {
        delta.reasoning_content = reasoning;
        text.push(reasoning);
      }
      const content = contentText(m.content);
      if (content) {
        delta.content = content;
        text.push(content);
      }
      const tools = toolDeltas(m.tool_calls);
      if (tools.length > 0) {
        delta.tool_calls = tools;
        calledTools = true;
      }
      if (reasoning || content || tools.length > 0) sawFirstToken = true;
      let finish = finishReason(c.finish_reason);
      if (finish === 'stop' && calledTools) finish = 'tool_calls';
      if (Object.keys(delta).length > 0 || finish) out.push(frame(chunk(delta, finish)));
    }
    return out;
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
          usage: openAIUsageOf(usage),
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
      if (!isObject(data)) continue;
      if (ev.event === 'error' || (str(data.code) && choicesOf(data).length === 0)) {
        controller.enqueue(
          frame({
            error: {
              message: str(data.message) || 'upstream stream error',
              type: 'upstream_error',
              code: str(data.code) || null,
            },
          }),
        );
        continue;
      }
      for (const bytes of onResult(data)) controller.enqueue(bytes);
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
    tally: () => ({ usage, completionText: text.join(''), sawFirstToken }),
  };
}
