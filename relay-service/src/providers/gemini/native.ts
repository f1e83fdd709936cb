/**
 * Gemini-format clients on a Gemini channel (endpoint 'generate'): the GenerateContentRequest body and the answer
 * pass through (param_override merged; the model travels in the URL), so thought signatures, cached content,
 * Google-only tools and anything newer survive. Usage and text are read on the way for billing.
 */
import type { Usage } from '../../core/usage.ts';
import { SseDecoder } from '../sse.ts';
import type { ChannelConfig, ParsedResponse, RelayInput, StreamConversion } from '../types.ts';
import { parseGeminiJson, splitParts } from './response.ts';
import { geminiUsage } from './usage.ts';

type Obj = Record<string, unknown>;

export function nativeBody(channel: ChannelConfig, input: RelayInput): string {
  const body: Obj = { ...(input.body as Obj), ...channel.paramOverride };
  // Not fields of GenerateContentRequest's JSON body: the model is in the path, streaming in the method.
  delete body.model;
  delete body.stream;
  return JSON.stringify(body);
}

/** The generated text of a response (thoughts, text, function call arguments), for local counting. */
function responseText(res: Obj): string {
  const candidates = Array.isArray(res.candidates) ? res.candidates : [];
  return candidates
    .map((c) => {
      const p = splitParts(c);
      return [...p.thoughts, ...p.text, ...p.calls.map((call) => call.args)].join('');
    })
    .join('');
}

export function parseNativeResponse(body: Uint8Array): ParsedResponse {
  const res = parseGeminiJson(body);
  return {
    body: body as Uint8Array<ArrayBuffer>,
    contentType: 'application/json',
    usage: geminiUsage(res.usageMetadata),
    completionText: responseText(res),
  };
}

/** Passes Gemini's SSE through unchanged, tallying the last usageMetadata and the text. */
export function nativeStream(): StreamConversion {
  const decoder = new SseDecoder();
  let usage: Usage | null = null;
  let sawFirstToken = false;
  const text: string[] = [];
  const read = (events: ReturnType<SseDecoder['push']>) => {
    for (const ev of events) {
      const res = parseGeminiJson(ev.data);
      const u = geminiUsage(res.usageMetadata);
      if (u) usage = u;
      const t = responseText(res);
      if (t) {
        text.push(t);
        sawFirstToken = true;
      }
    }
  };
  return {
    transformer: {
      transform(bytes, controller) {
        read(decoder.push(bytes));
        controller.enqueue(bytes);
      },
      flush() {
        read(decoder.end());
      },
    },
    tally: () => ({ usage, completionText: text.join(''), sawFirstToken }),
  };
}
