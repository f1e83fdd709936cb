/**
 * Spark's reply frames (https://www.xfyun.cn/doc/spark/Web.html, 响应参数): each WebSocket message is
 * `{header:{code, message, sid, status}, payload:{choices:{status, seq, text:[{content, role, index,
 * function_call?}]}, usage:{text:{question_tokens, prompt_tokens, completion_tokens, total_tokens}}}}`. status 0
 * is the first frame, 1 the middle ones, 2 the last, which alone carries `usage`. A header.code other than 0 is an
 * error (the socket closes after it). Core hands the frames over newline-delimited (UpstreamRequest.transport
 * 'ws'); a whole reply is all of them.
 */
import { type Usage, usage } from '../../core/usage.ts';
import { isObject, num, type Obj, str } from '../json.ts';
import { openAIUsage } from '../plain-chat.ts';
import type { ParsedResponse, RelayInput, UpstreamError } from '../types.ts';
import { UpstreamFailure } from '../types.ts';

export type SparkFrame = {
  code: number;
  message: string;
  sid: string;
  /** header.status: 2 on the last frame. */
  status: number;
  text: string;
  functionCall: { name: string; arguments: string } | null;
  usage: Usage | null;
};

/** One frame (a JSON line); a line that is not JSON is an error frame of its own. */
export function parseFrame(line: string): SparkFrame {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    json = null;
  }
  if (!isObject(json))
    return {
      code: -1,
      message: 'the Spark upstream sent a frame that is not JSON',
      sid: '',
      status: 2,
      text: '',
      functionCall: null,
      usage: null,
    };
  const header = isObject(json.header) ? json.header : {};
  const payload = isObject(json.payload) ? json.payload : {};
  const choices = isObject(payload.choices) ? payload.choices : {};
  const items = Array.isArray(choices.text) ? choices.text.filter(isObject) : [];
  let functionCall: SparkFrame['functionCall'] = null;
  for (const it of items)
    if (isObject(it.function_call))
      functionCall = {
        name: str(it.function_call.name),
        arguments:
          typeof it.function_call.arguments === 'string'
            ? it.function_call.arguments
            : JSON.stringify(it.function_call.arguments ?? {}),
      };
  return {
    code: num(header.code),
    message: str(header.message),
    sid: str(header.sid),
    status: num(header.status),
    text: items.map((it) => str(it.content)).join(''),
    functionCall,
    usage: sparkUsage(isObject(payload.usage) ? payload.usage.text : undefined),
  };
}

/** `usage.text` → Usage. prompt_tokens covers the whole history sent (question_tokens only the last question). */
export function sparkUsage(raw: unknown): Usage | null {
  if (!isObject(raw)) return null;
  const prompt = Math.max(0, Math.floor(num(raw.prompt_tokens)));
  const completion = Math.max(0, Math.floor(num(raw.completion_tokens)));
  if (prompt === 0 && completion === 0) return null;
  return usage({ promptTokens: prompt, completionTokens: completion });
}

export function splitFrames(text: string): SparkFrame[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map(parseFrame);
}

/**
 * Spark's error codes → HTTP status: 11200 (no authorization for the app, or its volume used up) 403, 11201–11203
 * (daily, per-second and concurrency limits) 429, the request's own faults (10160/10161 bad JSON or session,
 * 10163 parameter check, 10907 too many tokens, 10013/10014/10019/10022 content audit) 400, anything else 500.
 */
export function sparkError(code: number, message: string, sid: string): UpstreamError {
  const text = `${message || 'Spark error'} (code ${code}${sid ? `, sid ${sid}` : ''})`;
  const c = String(code);
  if (code === 11200) return { status: 403, message: text, type: 'permission_error', code: c };
  if (code >= 11201 && code <= 11203)
    return { status: 429, message: text, type: 'rate_limit_error', code: c };
  if ([10160, 10161, 10163, 10907, 10013, 10014, 10019, 10022].includes(code))
    return { status: 400, message: text, type: 'invalid_request_error', code: c };
  return { status: 500, message: text, type: 'upstream_error', code: c };
}

export const chatId = (sid: string, created: number): string => `chatcmpl-${sid || created.toString(36)}`;

/** All frames → one `chat.completion`; an error frame (or no final frame) fails the call. */
export function parseSparkResponse(input: RelayInput, body: Uint8Array, now: () => number): ParsedResponse {
  const frames = splitFrames(new TextDecoder().decode(body));
  const failed = frames.find((f) => f.code !== 0);
  if (failed) throw new UpstreamFailure(sparkError(failed.code, failed.message, failed.sid));
  const last = frames.at(-1);
  if (last?.status !== 2)
    throw new UpstreamFailure({
      status: 502,
      message: 'the Spark upstream closed the connection before the answer ended',
      type: 'upstream_error',
      code: 'upstream_incomplete',
    });
  const created = Math.floor(now() / 1000);
  const sid = frames.find((f) => f.sid)?.sid ?? '';
  const content = frames.map((f) => f.text).join('');
  const call = frames.find((f) => f.functionCall)?.functionCall ?? null;
  let u: Usage | null = null;
  for (const f of frames) if (f.usage) u = f.usage;
  const message: Obj = { role: 'assistant', content: call && !content ? null : content };
  if (call)
    message.tool_calls = [{ id: `call_${sid || created.toString(36)}`, type: 'function', function: call }];
  const out: Obj = {
    id: chatId(sid, created),
    object: 'chat.completion',
    created,
    model: input.upstreamModel,
    choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop', logprobs: null }],
    ...(u ? { usage: openAIUsage(u) } : {}),
  };
  return {
    body: JSON.stringify(out),
    contentType: 'application/json',
    usage: u,
    completionText: content + (call ? call.name + call.arguments : ''),
  };
}

/**
 * A refused handshake: Spark's gateway answers 401 (`{"message":"HMAC signature does not match"}`, an unknown
 * APIKey, a missing authorization) or 403 (a date more than 300 s off, an IP not on the allow-list) with a JSON
 * `message`.
 */
export function parseSparkError(res: { status: number; bodyText: string }): UpstreamError {
  let message = '';
  try {
    const j: unknown = JSON.parse(res.bodyText);
    if (isObject(j)) message = str(j.message) || (isObject(j.header) ? str(j.header.message) : '');
  } catch {
    // not JSON
  }
  message ||= res.bodyText.slice(0, 200) || `HTTP ${res.status}`;
  // A 403 is the clock or the IP allow-list, not the key: it does not auto-disable the channel.
  const type =
    res.status === 401 ? 'authentication_error' : res.status === 429 ? 'rate_limit_error' : 'upstream_error';
  return { status: res.status, message, type, code: null };
}
