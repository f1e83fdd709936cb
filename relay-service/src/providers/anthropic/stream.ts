/**
 * Anthropic Messages stream → OpenAI `chat.completion.chunk` SSE. Every documented event type is handled:
 * message_start (id, model, input and cache usage), content_block_start/delta/stop for text, tool_use
 * (input_json_delta → tool call argument fragments), thinking (→ `reasoning_content`) and signature deltas,
 * message_delta (stop reason, output usage), message_stop, ping (dropped) and error (passed on as an OpenAI
 * error chunk). The usage chunk is sent only when the client asked for it; `[DONE]` ends the stream once.
 */
import type { Usage } from '../../core/usage.ts';
import type { FrameSink, FrameTransformer } from '../frames.ts';
import { isObject, num, type Obj, str } from '../json.ts';
import { clientWantsStreamUsage } from '../openai/request.ts';
import { SseDecoder } from '../sse.ts';
import type { RelayInput, StreamConversion } from '../types.ts';
import { chatCompletionId, finishReason } from './response.ts';
import { type ClaudeUsageParts, claudeUsage, claudeUsageParts, openAIUsageOf } from './usage.ts';

const encoder = new TextEncoder();
const frame = (payload: unknown) => encoder.encode(`data: ${JSON.stringify(payload)}\n\n`);

export function claudeStreamConversion(input: RelayInput, now: () => number = Date.now): StreamConversion {
  const decoder = new SseDecoder();
  const wantsUsage = clientWantsStreamUsage(input);
  let id = 'chatcmpl-relay';
  let model = input.upstreamModel;
  const created = Math.floor(now() / 1000);
  const parts: ClaudeUsageParts = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  let sawUsage = false;
  let sawFirstToken = false;
  const text: string[] = [];
  /** Claude content block index → OpenAI tool_calls index (only for tool_use blocks). */
  const toolIndex = new Map<number, number>();
  let roleSent = false;
  let finished = false;

  const chunk = (delta: Obj, finish: string | null = null): Obj => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });

  const withRole = (delta: Obj): Obj => {
    if (roleSent) return delta;
    roleSent = true;
    return { role: 'assistant', ...delta };
  };

  const tallyUsage = (): Usage | null => (sawUsage ? claudeUsage(parts) : null);

  function onEvent(type: string, data: Obj): Uint8Array[] {
    switch (type) {
      case 'message_start': {
        const msg = isObject(data.message) ? data.message : {};
        if (str(msg.id)) id = chatCompletionId(str(msg.id));
        if (str(msg.model)) model = str(msg.model);
        const u = claudeUsageParts(msg.usage);
        if (u) {
          sawUsage = true;
          parts.input = u.input;
          parts.cacheRead = u.cacheRead;
          parts.cacheWrite = u.cacheWrite;
          parts.output = u.output;
        }
        roleSent = true;
        return [frame(chunk({ role: 'assistant', content: '' }))];
      }
      case 'content_block_start': {
        const block = isObject(data.content_block) ? data.content_block : {};
        if (block.type === 'tool_use') {
          const index = toolIndex.size;
          toolIndex.set(num(data.index), index);
          sawFirstToken = true;
          return [
            frame(
              chunk(
                withRole({
                  tool_calls: [
                    {
                      index,
                      id: str(block.id),
                      type: 'function',
                      function: { name: str(block.name), arguments: '' },
                    },
                  ],
                }),
              ),
            ),
          ];
        }
        if (block.type === 'text' && str(block.text)) {
          text.push(str(block.text));
          sawFirstToken = true;
          return [frame(chunk(withRole({ content: block.text })))];
        }
        return [];
      }
      case 'content_block_delta': {
        const delta = isObject(data.delta) ? data.delta : {};
        switch (delta.type) {
          case 'text_delta':
            text.push(str(delta.text));
            sawFirstToken = true;
            return [frame(chunk(withRole({ content: str(delta.text) })))];
          case 'thinking_delta':
            text.push(str(delta.thinking));
            sawFirstToken = true;
            return [frame(chunk(withRole({ reasoning_content: str(delta.thinking) })))];
          case 'input_json_delta': {
            const index = toolIndex.get(num(data.index)) ?? 0;
            text.push(str(delta.partial_json));
            return [
              frame(
                chunk(
                  withRole({ tool_calls: [{ index, function: { arguments: str(delta.partial_json) } }] }),
                ),
              ),
            ];
          }
          default:
            // signature_delta and future delta types carry nothing an OpenAI client reads.
            return [];
        }
      }
      case 'message_delta': {
        const u = claudeUsageParts(data.usage);
        if (u) {
          sawUsage = true;
          // Output is cumulative; newer API versions may restate input and cache figures here too.
          parts.output = u.output || parts.output;
          if (u.input) parts.input = u.input;
          if (u.cacheRead) parts.cacheRead = u.cacheRead;
          if (u.cacheWrite) parts.cacheWrite = u.cacheWrite;
        }
        const d = isObject(data.delta) ? data.delta : {};
        const reason = finishReason(d.stop_reason);
        return reason ? [frame(chunk({}, reason))] : [];
      }
      case 'message_stop':
        return finish();
      case 'error': {
        const e = isObject(data.error) ? data.error : {};
        return [
          frame({
            error: {
              message: str(e.message) || 'upstream stream error',
              type: str(e.type) || 'upstream_error',
            },
          }),
        ];
      }
      default:
        // ping and unknown events.
        return [];
    }
  }

  function finish(): Uint8Array[] {
    if (finished) return [];
    finished = true;
    const out: Uint8Array[] = [];
    const u = tallyUsage();
    if (wantsUsage && u)
      out.push(
        frame({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: openAIUsageOf(u) }),
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
      const type = ev.event ?? str(data.type);
      for (const bytes of onEvent(type, data)) controller.enqueue(bytes);
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
    tally: () => ({ usage: tallyUsage(), completionText: text.join(''), sawFirstToken }),
  };
}
