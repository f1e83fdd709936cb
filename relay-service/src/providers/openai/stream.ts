import type { Usage } from '../../core/usage.ts';
import type { FrameSink, FrameTransformer } from '../frames.ts';
import { isObject, type Obj, str } from '../json.ts';
import { encodeSseEvent, SseDecoder, type SseEvent } from '../sse.ts';
import type { RelayInput, StreamConversion, StreamTally } from '../types.ts';
import { clientWantsStreamUsage } from './request.ts';
import { toolCallText } from './response.ts';
import { parseOpenAIUsage } from './usage.ts';

const DONE = new TextEncoder().encode('data: [DONE]\n\n');

/** Tally state shared by the chat and Responses handlers. */
class Tally {
  usage: Usage | null = null;
  parts: string[] = [];
  sawFirstToken = false;

  add(text: string, isToken: boolean): void {
    if (text) this.parts.push(text);
    if (isToken) this.sawFirstToken = true;
  }

  snapshot(): StreamTally {
    return { usage: this.usage, completionText: this.parts.join(''), sawFirstToken: this.sawFirstToken };
  }
}

type Handler = {
  /** Returns the bytes to send to the client for this event, or null to drop it. */
  event(ev: SseEvent, json: Obj | null): Uint8Array | null;
  /** Bytes to append when the upstream ends. */
  end(): Uint8Array | null;
};

/**
 * Chat and legacy completions: events pass through in canonical `data: ...\n\n` framing (comments and `id:`
 * lines are dropped); `data: [DONE]` is sent exactly once, at the end, even when the upstream omitted it. The
 * usage-only chunk the relay forced with include_usage is withheld from a client that did not ask for it.
 */
function chatHandler(input: RelayInput, tally: Tally): Handler {
  const stripUsageChunk = !clientWantsStreamUsage(input);
  let done = false;
  return {
    event(ev, json) {
      if (done) return null;
      if (ev.data.trim() === '[DONE]') {
        done = true;
        return DONE;
      }
      if (!json) return encodeSseEvent(ev);
      const u = parseOpenAIUsage(json.usage);
      if (u) tally.usage = u;
      const choices = Array.isArray(json.choices) ? json.choices : [];
      for (const c of choices) {
        if (!isObject(c)) continue;
        if (isObject(c.delta)) {
          const d = c.delta;
          const calls = Array.isArray(d.tool_calls) && d.tool_calls.length > 0;
          const text =
            str(d.reasoning_content) + str(d.reasoning) + str(d.content) + toolCallText(d.tool_calls);
          tally.add(text, text !== '' || calls);
        } else if (typeof c.text === 'string') {
          tally.add(c.text, c.text !== '');
        }
      }
      if (stripUsageChunk && choices.length === 0 && isObject(json.usage)) return null;
      return encodeSseEvent(ev);
    },
    end: () => (done ? null : DONE),
  };
}

const TEXT_DELTAS = new Set([
  'response.output_text.delta',
  'response.reasoning_text.delta',
  'response.reasoning_summary_text.delta',
  'response.function_call_arguments.delta',
  'response.refusal.delta',
]);
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * Responses API: typed events (`event: <type>` + `data: {"type": ...}`) pass through with their event line.
 * Text deltas feed the tally; usage comes from the final `response.completed` (or incomplete/failed). OpenAI
 * ends these streams without `data: [DONE]`, so none is added; one the upstream sends is kept.
 */
function responsesHandler(tally: Tally): Handler {
  return {
    event(ev, json) {
      const type = str(json?.type) || ev.event || '';
      if (json && TEXT_DELTAS.has(type)) tally.add(str(json.delta), true);
      if (json && FINAL_EVENTS.has(type) && isObject(json.response)) {
        const u = parseOpenAIUsage(json.response.usage);
        if (u) tally.usage = u;
      }
      return encodeSseEvent(ev);
    },
    end: () => null,
  };
}

function parseJson(data: string): Obj | null {
  if (!data.trimStart().startsWith('{')) return null;
  try {
    const v: unknown = JSON.parse(data);
    return isObject(v) ? v : null;
  } catch {
    return null;
  }
}

/** The stream conversion of the whole OpenAI family (Azure included). */
export function openAIStreamConversion(input: RelayInput): StreamConversion {
  const tally = new Tally();
  const handler = input.endpoint === 'responses' ? responsesHandler(tally) : chatHandler(input, tally);
  const decoder = new SseDecoder();
  const forward = (events: SseEvent[], controller: FrameSink) => {
    for (const ev of events) {
      const out = handler.event(ev, parseJson(ev.data));
      if (out) controller.enqueue(out);
    }
  };
  const transformer: FrameTransformer = {
    transform(chunk, controller) {
      forward(decoder.push(chunk), controller);
    },
    flush(controller) {
      forward(decoder.end(), controller);
      const tail = handler.end();
      if (tail) controller.enqueue(tail);
    },
  };
  return { transformer, tally: () => tally.snapshot() };
}
