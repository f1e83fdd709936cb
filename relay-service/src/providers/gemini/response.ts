/**
 * Gemini GenerateContentResponse → OpenAI chat completion, and Google's error envelope
 * `{"error":{"code":400,"message","status":"INVALID_ARGUMENT","details":[...]}}` → the neutral UpstreamError.
 */

import { isObject, type Obj, str } from '../json.ts';
import type { ParsedResponse, RelayInput, UpstreamError } from '../types.ts';
import { geminiUsage, openAIUsageOf } from './usage.ts';

const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
]);

/** Gemini finishReason → OpenAI finish_reason; a turn that called functions finishes with tool_calls. */
export function finishReason(reason: unknown, calledTools: boolean): string | null {
  if (reason == null || reason === '') return null;
  if (reason === 'MAX_TOKENS') return 'length';
  if (typeof reason === 'string' && FILTERED.has(reason)) return 'content_filter';
  return calledTools ? 'tool_calls' : 'stop';
}

export function chatCompletionId(responseId: string, created: number): string {
  return `chatcmpl-${responseId || `gemini-${created}`}`;
}

/** The parts of one candidate, split the way an OpenAI message carries them. */
export type SplitParts = {
  text: string[];
  thoughts: string[];
  calls: { name: string; args: string; id: string }[];
};

export function splitParts(candidate: unknown): SplitParts {
  const out: SplitParts = { text: [], thoughts: [], calls: [] };
  const content = isObject(candidate) && isObject(candidate.content) ? candidate.content : {};
  for (const part of Array.isArray(content.parts) ? content.parts : []) {
    if (!isObject(part)) continue;
    if (isObject(part.functionCall)) {
      const fc = part.functionCall;
      out.calls.push({ name: str(fc.name), args: JSON.stringify(fc.args ?? {}), id: str(fc.id) });
    } else if (typeof part.text === 'string') {
      (part.thought === true ? out.thoughts : out.text).push(part.text);
    }
  }
  return out;
}

export function parseGeminiJson(body: Uint8Array | string): Obj {
  try {
    const v = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body));
    // The non-SSE stream endpoint answers a JSON array of responses; take the object form either way.
    if (Array.isArray(v)) return isObject(v[0]) ? v[0] : {};
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

export function parseGeminiResponse(input: RelayInput, body: Uint8Array, now: () => number): ParsedResponse {
  const res = parseGeminiJson(body);
  const created = Math.floor(now() / 1000);
  const candidates = Array.isArray(res.candidates) ? res.candidates : [];
  let callNo = 0;
  const completion: string[] = [];
  const choices = candidates.map((c, i) => {
    const cand = isObject(c) ? c : {};
    const parts = splitParts(cand);
    const message: Obj = { role: 'assistant', content: parts.text.length ? parts.text.join('') : null };
    if (parts.thoughts.length) message.reasoning_content = parts.thoughts.join('');
    if (parts.calls.length)
      message.tool_calls = parts.calls.map((call) => ({
        id: call.id || `call_${callNo++}`,
        type: 'function',
        function: { name: call.name, arguments: call.args },
      }));
    completion.push(...parts.thoughts, ...parts.text, ...parts.calls.map((c) => c.args));
    return {
      index: typeof cand.index === 'number' ? cand.index : i,
      message,
      finish_reason: finishReason(cand.finishReason, parts.calls.length > 0) ?? 'stop',
      logprobs: null,
    };
  });
  // A prompt blocked by safety comes back with promptFeedback.blockReason and no candidates.
  const feedback = isObject(res.promptFeedback) ? res.promptFeedback : null;
  if (choices.length === 0 && feedback && str(feedback.blockReason))
    choices.push({
      index: 0,
      message: { role: 'assistant', content: null },
      finish_reason: 'content_filter',
      logprobs: null,
    });
  const u = geminiUsage(res.usageMetadata);
  const out: Obj = {
    id: chatCompletionId(str(res.responseId), created),
    object: 'chat.completion',
    created,
    model: str(res.modelVersion) || input.upstreamModel,
    choices,
  };
  if (u) out.usage = openAIUsageOf(u);
  return {
    body: JSON.stringify(out),
    contentType: 'application/json',
    usage: u,
    completionText: completion.join(''),
  };
}

/** Google status (and ErrorInfo reason) → an error type the auto-disable rules understand. */
function errorType(status: string, reason: string): string {
  if (reason === 'API_KEY_INVALID' || reason === 'API_KEY_EXPIRED' || status === 'UNAUTHENTICATED')
    return 'authentication_error';
  if (status === 'PERMISSION_DENIED') return 'permission_error';
  if (status === 'RESOURCE_EXHAUSTED') return 'rate_limit_error';
  return status ? status.toLowerCase() : 'upstream_error';
}

/** Google's error object of a body (`{"error":…}` or `[{"error":…}]`), or null. */
export function googleError(json: unknown): Obj | null {
  const v = Array.isArray(json) ? json[0] : json;
  return isObject(v) && isObject(v.error) ? v.error : null;
}

export function parseGeminiError(res: { status: number; headers: Headers; bodyText: string }): UpstreamError {
  let json: unknown;
  try {
    json = JSON.parse(res.bodyText);
  } catch {
    json = null;
  }
  const err = googleError(json);
  if (err && str(err.message)) {
    const status = str(err.status);
    const info = (Array.isArray(err.details) ? err.details : []).find((d) => isObject(d) && str(d.reason));
    const reason = isObject(info) ? str(info.reason) : '';
    return {
      status: res.status,
      message: str(err.message),
      type: errorType(status, reason),
      code: reason || status || null,
    };
  }
  const plain = res.bodyText
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 300);
  return {
    status: res.status,
    message: plain || `upstream returned status ${res.status}`,
    type: 'upstream_error',
    code: null,
  };
}
