/**
 * Hunyuan answers → OpenAI. Success: `{Response: {Id, Created, Note, Choices: [{FinishReason, Message: {Role,
 * Content}}], Usage: {PromptTokens, CompletionTokens, TotalTokens}, RequestId}}`. Failure (HTTP 200 like every
 * Tencent Cloud API): `{Response: {Error: {Code, Message}, RequestId}}`, thrown as an UpstreamFailure with a
 * status from the code (AuthFailure.* → 401).
 */
import { type Usage, usage } from '../../core/usage.ts';
import { isObject, type Obj, str } from '../json.ts';
import { openAIUsage, parseJson, tokens } from '../plain-chat.ts';
import { type ParsedResponse, type RelayInput, type UpstreamError, UpstreamFailure } from '../types.ts';

export function hunyuanUsage(raw: unknown): Usage | null {
  if (!isObject(raw)) return null;
  const prompt = tokens(raw.PromptTokens);
  const completion = tokens(raw.CompletionTokens) || Math.max(tokens(raw.TotalTokens) - prompt, 0);
  if (prompt === 0 && completion === 0) return null;
  return usage({ promptTokens: prompt, completionTokens: completion });
}

/** Tencent error code → status and type (https://cloud.tencent.com/document/api/1729/101838 and common codes). */
function classify(code: string): { status: number; type: string } {
  if (code.startsWith('AuthFailure')) return { status: 401, type: 'authentication_error' };
  if (code.startsWith('UnauthorizedOperation') || code === 'FailedOperation.ServiceNotActivated')
    return { status: 403, type: 'permission_error' };
  if (
    code.startsWith('ResourceInsufficient') ||
    code.includes('Arrear') ||
    code === 'FailedOperation.ServiceStop'
  )
    return { status: 402, type: 'insufficient_quota' };
  if (
    code.startsWith('RequestLimitExceeded') ||
    code.startsWith('LimitExceeded') ||
    code.includes('EngineServerLimit')
  )
    return { status: 429, type: 'rate_limit_error' };
  if (
    code.startsWith('InvalidParameter') ||
    code.startsWith('MissingParameter') ||
    code.startsWith('UnknownParameter') ||
    code === 'InvalidAction' ||
    code === 'UnsupportedOperation'
  )
    return { status: 400, type: 'invalid_request_error' };
  if (code.startsWith('OperationDenied')) return { status: 400, type: 'content_filter' };
  return { status: 500, type: 'upstream_error' };
}

/** The `Response.Error` of a body as the neutral error, or null. */
export function hunyuanFailure(json: unknown): UpstreamError | null {
  const res = isObject(json) && isObject(json.Response) ? json.Response : null;
  const err = res && isObject(res.Error) ? res.Error : null;
  if (!err || !str(err.Code)) return null;
  const code = str(err.Code);
  const { status, type } = classify(code);
  return { status, message: str(err.Message) || code, type, code };
}

const FINISH: Readonly<Record<string, string>> = {
  stop: 'stop',
  length: 'length',
  sensitive: 'content_filter',
  tool_calls: 'tool_calls',
};
export const hunyuanFinish = (v: unknown): string | null => {
  const s = str(v);
  return s ? (FINISH[s] ?? 'stop') : null;
};

export function parseHunyuanChat(input: RelayInput, body: Uint8Array, now: () => number): ParsedResponse {
  const json = parseJson(body);
  const failure = hunyuanFailure(json);
  if (failure) throw new UpstreamFailure(failure);
  const res = isObject(json) && isObject(json.Response) ? json.Response : {};
  const texts: string[] = [];
  const choices = (Array.isArray(res.Choices) ? res.Choices : []).filter(isObject).map((c, index) => {
    const msg = isObject(c.Message) ? c.Message : {};
    const content = str(msg.Content);
    texts.push(content);
    return {
      index,
      message: { role: 'assistant', content },
      finish_reason: hunyuanFinish(c.FinishReason) ?? 'stop',
      logprobs: null,
    };
  });
  const u = hunyuanUsage(res.Usage);
  const out: Obj = {
    id: str(res.Id) || str(res.RequestId),
    object: 'chat.completion',
    created: typeof res.Created === 'number' ? res.Created : Math.floor(now() / 1000),
    model: input.upstreamModel,
    choices,
  };
  if (u) out.usage = openAIUsage(u);
  return {
    body: JSON.stringify(out),
    contentType: 'application/json',
    usage: u,
    completionText: texts.join(''),
  };
}

export function parseHunyuanError(res: {
  status: number;
  headers: Headers;
  bodyText: string;
}): UpstreamError {
  const failure = hunyuanFailure(parseJson(res.bodyText));
  if (failure) return { ...failure, status: res.status };
  const plain = res.bodyText.replace(/\s+/g, ' ').trim().slice(0, 300);
  return {
    status: res.status,
    message: plain || `upstream returned status ${res.status}`,
    type: 'upstream_error',
    code: null,
  };
}
