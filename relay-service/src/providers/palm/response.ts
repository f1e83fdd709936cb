/**
 * PaLM 2 `generateMessage` reply `{candidates:[{author, content}], messages, filters}` → an OpenAI chat
 * completion. PaLM reports no token usage (core counts locally). A prompt or answer blocked by the safety
 * filters comes back without candidates and with `filters:[{reason, message}]`: one empty choice finishing with
 * `content_filter`. Errors use Google's envelope `{error:{code, message, status}}` (parseGeminiError reads it).
 */
import { parseGeminiError } from '../gemini/response.ts';
import { isObject, type Obj, str } from '../json.ts';
import type { ParsedResponse, RelayInput, UpstreamError } from '../types.ts';

export type PalmAnswer = { texts: string[]; filtered: boolean };

export function readPalmAnswer(body: Uint8Array | string): PalmAnswer {
  let json: unknown;
  try {
    json = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body));
  } catch {
    json = null;
  }
  const res: Obj = isObject(json) ? json : {};
  const candidates = Array.isArray(res.candidates) ? res.candidates.filter(isObject) : [];
  return { texts: candidates.map((c) => str(c.content)), filtered: candidates.length === 0 };
}

export const palmCompletionId = (created: number): string => `chatcmpl-palm-${created}`;

export function parsePalmResponse(input: RelayInput, body: Uint8Array, now: () => number): ParsedResponse {
  const answer = readPalmAnswer(body);
  const created = Math.floor(now() / 1000);
  const choices = answer.filtered
    ? [
        {
          index: 0,
          message: { role: 'assistant', content: '' },
          finish_reason: 'content_filter',
          logprobs: null,
        },
      ]
    : answer.texts.map((text, index) => ({
        index,
        message: { role: 'assistant', content: text },
        finish_reason: 'stop',
        logprobs: null,
      }));
  return {
    body: JSON.stringify({
      id: palmCompletionId(created),
      object: 'chat.completion',
      created,
      model: input.upstreamModel,
      choices,
    }),
    contentType: 'application/json',
    usage: null,
    completionText: answer.texts.join(''),
  };
}

export const parsePalmError = (res: { status: number; headers: Headers; bodyText: string }): UpstreamError =>
  parseGeminiError(res);
