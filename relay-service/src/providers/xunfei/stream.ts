/**
 * Spark frames (newline-delimited, as core's WebSocket transport hands them over) → OpenAI
 * `chat.completion.chunk` SSE: the first chunk carries the assistant role, each frame's text a content delta, a
 * function_call one tool call delta; the last frame (status 2) closes the choice (stop or tool_calls), then the
 * usage chunk when the client asked for it (stream_options.include_usage) and `[DONE]`. An error frame becomes an
 * OpenAI error chunk (the SDKs throw it), and so does a socket that closes before the last frame.
 */
import type { Usage } from '../../core/usage.ts';
import type { FrameSink } from '../frames.ts';
import type { Obj } from '../json.ts';
import { clientWantsStreamUsage } from '../openai/request.ts';
import { DONE_FRAME, sseFrame, usageChunkFrame } from '../plain-chat.ts';
import type { RelayInput, StreamConversion } from '../types.ts';
import { chatId, parseFrame, sparkError } from './response.ts';

export function sparkStreamConversion(input: RelayInput, now: () => number = Date.now): StreamConversion {
  const decoder = new TextDecoder();
  const wantsUsage = clientWantsStreamUsage(input);
  const created = Math.floor(now() / 1000);
  let buffered = '';
  let sid = '';
  let started = false;
  let ended = false;
  let sawFirstToken = false;
  let u: Usage | null = null;
  let calls = 0;
  const text: string[] = [];

  const chunk = (delta: Obj, finish: string | null): Obj => ({
    id: chatId(sid, created),
    object: 'chat.completion.chunk',
    created,
    model: input.upstreamModel,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  const fail = (out: FrameSink, message: string, type: string, code: string | null) => {
    ended = true;
    out.enqueue(sseFrame({ error: { message, type, param: null, code } }));
    out.enqueue(DONE_FRAME);
  };

  function line(raw: string, out: FrameSink): void {
    if (ended || raw.trim() === '') return;
    const f = parseFrame(raw);
    if (f.sid && !sid) sid = f.sid;
    if (f.code !== 0) {
      const e = sparkError(f.code, f.message, f.sid);
      fail(out, e.message, e.type, e.code);
      return;
    }
    if (!started) {
      started = true;
      out.enqueue(sseFrame(chunk({ role: 'assistant', content: '' }, null)));
    }
    if (f.text) {
      text.push(f.text);
      sawFirstToken = true;
      out.enqueue(sseFrame(chunk({ content: f.text }, null)));
    }
    if (f.functionCall) {
      sawFirstToken = true;
      text.push(f.functionCall.name, f.functionCall.arguments);
      out.enqueue(
        sseFrame(
          chunk(
            {
              tool_calls: [
                {
                  index: calls,
                  id: `call_${sid || created.toString(36)}${calls ? `_${calls}` : ''}`,
                  type: 'function',
                  function: f.functionCall,
                },
              ],
            },
            null,
          ),
        ),
      );
      calls++;
    }
    if (f.usage) u = f.usage;
    if (f.status === 2) {
      ended = true;
      out.enqueue(sseFrame(chunk({}, calls > 0 ? 'tool_calls' : 'stop')));
      if (wantsUsage && u)
        out.enqueue(usageChunkFrame(chatId(sid, created), created, input.upstreamModel, u));
      out.enqueue(DONE_FRAME);
    }
  }

  return {
    transformer: {
      transform(bytes, out) {
        buffered += decoder.decode(bytes, { stream: true });
        let nl = buffered.indexOf('\n');
        while (nl >= 0) {
          line(buffered.slice(0, nl), out);
          buffered = buffered.slice(nl + 1);
          nl = buffered.indexOf('\n');
        }
      },
      flush(out) {
        buffered += decoder.decode();
        if (buffered) line(buffered, out);
        buffered = '';
        if (!ended)
          fail(
            out,
            'the Spark upstream closed the connection before the answer ended',
            'upstream_error',
            'upstream_incomplete',
          );
      },
    },
    tally: () => ({ usage: u, completionText: text.join(''), sawFirstToken }),
  };
}
