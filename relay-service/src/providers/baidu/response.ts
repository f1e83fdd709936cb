/**
 * Wenxin answers → OpenAI. A chat answer is `{id, object, created, result, is_truncated, need_clear_history,
 * finish_reason?, function_call?, usage}`; a failure comes as HTTP 200 `{error_code, error_msg}` and is thrown as
 * an UpstreamFailure (110/111, the access token is invalid or expired, as 401 so core drops the cached token).
 * The OAuth exchange answers `{access_token, expires_in}` or `{error, error_description}`.
 */
import { RelayError } from '../../core/errors.ts';
import { type Usage, usage } from '../../core/usage.ts';
import { isObject, type Obj, str } from '../json.ts';
import { encodeEmbedding, openAIUsage, parseJson, tokens, wantsBase64 } from '../plain-chat.ts';
import {
  type Credential,
  type ParsedResponse,
  type RelayInput,
  type UpstreamError,
  UpstreamFailure,
} from '../types.ts';

/** Wenxin usage (`completion_tokens` may be missing in stream frames: total − prompt then). */
export function baiduUsage(raw: unknown): Usage | null {
  if (!isObject(raw)) return null;
  const prompt = tokens(raw.prompt_tokens);
  const total = tokens(raw.total_tokens);
  const completion = tokens(raw.completion_tokens) || Math.max(total - prompt, 0);
  if (prompt === 0 && completion === 0) return null;
  return usage({ promptTokens: prompt, completionTokens: completion });
}

/** error_code → HTTP status and error type (https://cloud.baidu.com/doc/WENXINWORKSHOP/s/tlmyncueh). */
function classify(code: number): { status: number; type: string } {
  // 110 Access token invalid or no longer valid, 111 Access token expired; 14/15 (IAM) and 13 are also auth.
  if (code === 110 || code === 111 || code === 13 || code === 14 || code === 15)
    return { status: 401, type: 'authentication_error' };
  // 6 No permission to access data, 3 Unsupported openapi method.
  if (code === 6) return { status: 403, type: 'permission_error' };
  // 4 / 17 / 18 / 19 and 336501 / 336502: request, daily, QPS, total and token rate limits.
  if (code === 4 || code === 17 || code === 18 || code === 19 || code === 336501 || code === 336502)
    return { status: 429, type: 'rate_limit_error' };
  // 336000 internal error, 336100 "try again later".
  if (code === 336000 || code === 336100 || code === 1 || code === 2)
    return { status: 500, type: 'upstream_error' };
  // 336001–336xxx: invalid arguments, prompt too long, messages with a wrong shape.
  if (code >= 336001 && code < 337000) return { status: 400, type: 'invalid_request_error' };
  return { status: 500, type: 'upstream_error' };
}

/** `{error_code, error_msg}` of a body, as the neutral error; null when the body carries none. */
export function baiduFailure(json: unknown): UpstreamError | null {
  if (!isObject(json) || typeof json.error_code !== 'number' || json.error_code === 0) return null;
  const { status, type } = classify(json.error_code);
  return {
    status,
    message: str(json.error_msg) || `Wenxin error ${json.error_code}`,
    type,
    code: String(json.error_code),
  };
}

const FINISH: Readonly<Record<string, string>> = {
  normal: 'stop',
  stop: 'stop',
  length: 'length',
  content_filter: 'content_filter',
  function_call: 'tool_calls',
};

export function finishReason(res: Obj): string {
  if (isObject(res.function_call)) return 'tool_calls';
  const reason = FINISH[str(res.finish_reason)];
  if (reason) return reason;
  return res.is_truncated === true ? 'length' : 'stop';
}

/** Wenxin's function_call → an OpenAI tool call. */
export function toolCallOf(res: Obj, id: string): Obj | null {
  const fc = isObject(res.function_call) ? res.function_call : null;
  if (!fc) return null;
  return {
    id: `call_${id}`,
    type: 'function',
    function: { name: str(fc.name), arguments: str(fc.arguments) || '{}' },
  };
}

export function parseBaiduChat(input: RelayInput, body: Uint8Array, now: () => number): ParsedResponse {
  const json = parseJson(body);
  const failure = baiduFailure(json);
  if (failure) throw new UpstreamFailure(failure);
  const res = isObject(json) ? json : {};
  const id = str(res.id) || `as-${Math.floor(now() / 1000)}`;
  const call = toolCallOf(res, id);
  const text = str(res.result);
  const message: Obj = { role: 'assistant', content: call && !text ? null : text };
  if (call) message.tool_calls = [call];
  const u = baiduUsage(res.usage);
  const out: Obj = {
    id,
    object: 'chat.completion',
    created: typeof res.created === 'number' ? res.created : Math.floor(now() / 1000),
    model: input.upstreamModel,
    choices: [{ index: 0, message, finish_reason: finishReason(res), logprobs: null }],
  };
  if (u) out.usage = openAIUsage(u);
  return {
    body: JSON.stringify(out),
    contentType: 'application/json',
    usage: u,
    completionText: text + (call ? str((call.function as Obj).arguments) : ''),
  };
}

export function parseBaiduEmbeddings(input: RelayInput, body: Uint8Array): ParsedResponse {
  const json = parseJson(body);
  const failure = baiduFailure(json);
  if (failure) throw new UpstreamFailure(failure);
  const res = isObject(json) ? json : {};
  const base64 = wantsBase64(input);
  const data = (Array.isArray(res.data) ? res.data : []).filter(isObject).map((d, i) => ({
    object: 'embedding',
    index: typeof d.index === 'number' ? d.index : i,
    embedding: encodeEmbedding(Array.isArray(d.embedding) ? (d.embedding as number[]) : [], base64),
  }));
  // Embeddings have no completion: prompt_tokens (or total_tokens) is the whole bill.
  const raw = isObject(res.usage) ? res.usage : {};
  const prompt = tokens(raw.prompt_tokens) || tokens(raw.total_tokens);
  const u = prompt > 0 ? usage({ promptTokens: prompt }) : null;
  return {
    body: JSON.stringify({
      object: 'list',
      data,
      model: input.upstreamModel,
      usage: { prompt_tokens: prompt, total_tokens: prompt },
    }),
    contentType: 'application/json',
    usage: u,
    completionText: '',
  };
}

/** The token exchange reply: `{access_token, expires_in}` (seconds; Baidu grants 30 days). */
export function parseBaiduToken(res: { status: number; bodyText: string }, nowMs: number): Credential {
  const json = parseJson(res.bodyText);
  const obj = isObject(json) ? json : {};
  const token = str(obj.access_token);
  if (!token) {
    const why = str(obj.error) ? `${str(obj.error)}: ${str(obj.error_description)}` : 'no access_token';
    // A RelayError, like core's own for a refused exchange: the channel is skipped with this reason.
    throw new RelayError({
      status: 401,
      message: `the upstream refused the channel credential: ${why}`,
      type: 'authentication_error',
      code: str(obj.error) || null,
    });
  }
  const expiresIn = tokens(obj.expires_in) || 86_400;
  return { value: token, expiresAtMs: nowMs + expiresIn * 1000 };
}

/** A non-2xx reply: the OAuth `{error, error_description}`, Wenxin's `{error_code, error_msg}`, or text. */
export function parseBaiduError(res: { status: number; headers: Headers; bodyText: string }): UpstreamError {
  const json = parseJson(res.bodyText);
  const failure = baiduFailure(json);
  if (failure) return { ...failure, status: res.status };
  if (isObject(json) && str(json.error))
    return {
      status: res.status,
      message: `${str(json.error)}: ${str(json.error_description)}`,
      type: res.status === 401 || res.status === 400 ? 'authentication_error' : 'upstream_error',
      code: str(json.error),
    };
  const plain = res.bodyText.replace(/\s+/g, ' ').trim().slice(0, 300);
  return {
    status: res.status,
    message: plain || `upstream returned status ${res.status}`,
    type: 'upstream_error',
    code: null,
  };
}
