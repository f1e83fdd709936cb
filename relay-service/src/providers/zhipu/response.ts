/**
 * Zhipu v3 answers → OpenAI. Every reply is `{code, msg, success, data}`: `data` holds `{task_id, request_id,
 * task_status, choices: [{role, content}], usage}` for chat (content arrives JSON-quoted, e.g. "\"Hi\"", so it is
 * unquoted as new-api does) and `{embedding, usage}` for text_embedding. `success: false` (also with HTTP 200) is
 * an UpstreamFailure; the codes are Zhipu's (1000–1004 authentication, 111x account, 12xx call, 13xx policy).
 */
import { type Usage, usage } from '../../core/usage.ts';
import { isObject, type Obj, str } from '../json.ts';
import { encodeEmbedding, openAIUsage, parseJson, tokens, wantsBase64 } from '../plain-chat.ts';
import { type ParsedResponse, type RelayInput, type UpstreamError, UpstreamFailure } from '../types.ts';

export function zhipuUsage(raw: unknown): Usage | null {
  if (!isObject(raw)) return null;
  const prompt = tokens(raw.prompt_tokens);
  const completion = tokens(raw.completion_tokens) || Math.max(tokens(raw.total_tokens) - prompt, 0);
  if (prompt === 0 && completion === 0) return null;
  return usage({ promptTokens: prompt, completionTokens: completion });
}

/** Zhipu business code → HTTP status and error type (https://open.bigmodel.cn/dev/api#error-code). */
function classify(code: number): { status: number; type: string } {
  if (code >= 1000 && code <= 1004) return { status: 401, type: 'authentication_error' };
  if (code === 1113) return { status: 402, type: 'insufficient_quota' };
  if (code >= 1100 && code < 1200) return { status: 403, type: 'permission_error' };
  if (code === 1220 || code === 1221 || code === 1222) return { status: 403, type: 'permission_error' };
  if (code === 1211) return { status: 404, type: 'invalid_request_error' };
  if (code >= 1210 && code < 1300) return { status: 400, type: 'invalid_request_error' };
  if (code === 1301) return { status: 400, type: 'content_filter' };
  if (code >= 1302 && code < 1400) return { status: 429, type: 'rate_limit_error' };
  if (code >= 400 && code < 600) return { status: code, type: 'upstream_error' };
  return { status: 500, type: 'upstream_error' };
}

/** The failure a `{code, msg, success}` envelope reports, or null when it reports success. */
export function zhipuFailure(json: unknown): UpstreamError | null {
  if (!isObject(json)) return null;
  if (json.success === true || json.code === 200) return null;
  const code = typeof json.code === 'number' ? json.code : 500;
  const { status, type } = classify(code);
  return { status, message: str(json.msg) || `Zhipu error ${code}`, type, code: String(code) };
}

/** v3 content comes JSON-quoted ("\"text\""): the text inside, or the content as it is. */
export function unquote(content: string): string {
  if (content.length >= 2 && content.startsWith('"') && content.endsWith('"')) {
    const v = parseJson(content);
    return typeof v === 'string' ? v : content.slice(1, -1);
  }
  return content;
}

function envelope(body: Uint8Array): Obj {
  const json = parseJson(body);
  if (!isObject(json))
    throw new UpstreamFailure({
      status: 502,
      message: 'Zhipu answered no JSON',
      type: 'upstream_error',
      code: null,
    });
  const failure = zhipuFailure(json);
  if (failure) throw new UpstreamFailure(failure);
  return isObject(json.data) ? json.data : {};
}

export function parseZhipuChat(input: RelayInput, body: Uint8Array, now: () => number): ParsedResponse {
  const data = envelope(body);
  const created = Math.floor(now() / 1000);
  const texts: string[] = [];
  const list = (Array.isArray(data.choices) ? data.choices : []).filter(isObject);
  const choices = list.map((c, index) => {
    const content = unquote(str(c.content));
    texts.push(content);
    return {
      index,
      message: { role: str(c.role) || 'assistant', content },
      finish_reason: 'stop',
      logprobs: null,
    };
  });
  const u = zhipuUsage(data.usage);
  const out: Obj = {
    id: str(data.task_id) || str(data.request_id) || `zhipu-${created}`,
    object: 'chat.completion',
    created,
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

export function parseZhipuEmbeddings(input: RelayInput, body: Uint8Array): ParsedResponse {
  const data = envelope(body);
  const values = Array.isArray(data.embedding) ? (data.embedding as number[]) : [];
  const u = zhipuUsage(data.usage);
  const prompt = u ? u.promptTokens + u.completionTokens : 0;
  return {
    body: JSON.stringify({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: encodeEmbedding(values, wantsBase64(input)) }],
      model: input.upstreamModel,
      usage: { prompt_tokens: prompt, total_tokens: prompt },
    }),
    contentType: 'application/json',
    // An embedding has no completion: whatever Zhipu counted is input.
    usage: prompt > 0 ? usage({ promptTokens: prompt }) : null,
    completionText: '',
  };
}

export function parseZhipuError(res: { status: number; headers: Headers; bodyText: string }): UpstreamError {
  const json = parseJson(res.bodyText);
  const failure = zhipuFailure(json);
  if (failure) return { ...failure, status: res.status };
  // v4-style `{"error":{"code","message"}}` (the gateway in front of both APIs answers it for some refusals).
  if (isObject(json) && isObject(json.error) && str(json.error.message))
    return {
      status: res.status,
      message: str(json.error.message),
      type: res.status === 401 ? 'authentication_error' : 'upstream_error',
      code: str(json.error.code) || null,
    };
  const plain = res.bodyText.replace(/\s+/g, ' ').trim().slice(0, 300);
  return {
    status: res.status,
    message: plain || `upstream returned status ${res.status}`,
    type: 'upstream_error',
    code: null,
  };
}
