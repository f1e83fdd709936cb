/**
 * Xunfei Spark (iFlytek 星火, channel type 18) over its WebSocket API (https://www.xfyun.cn/doc/spark/Web.html):
 * the version, its URL path and `domain`, the signed URL (https://www.xfyun.cn/doc/spark/general_url_authentication.html)
 * and the request frame built from an OpenAI chat request.
 *
 * Versions and domains (iFlytek's list; new-api's table for the v* forms): v1.1 Lite → `lite`, v2.1 → `generalv2`,
 * v3.1 Pro → `generalv3`, v3.5 Max → `generalv3.5`, v4.0 Ultra → `4.0Ultra`, at `/<version>/chat`; Pro-128K and
 * Max-32K live at `/chat/pro-128k` and `/chat/max-32k` with the domain of the same name. Any other `vX.Y` gets
 * `general<version>` as new-api does. The version is the model's suffix (`SparkDesk-v3.5`, as new-api reads it),
 * else the channel's `other`, else v2.1 (seed 001 §3).
 */
import { createHmac } from 'node:crypto';
import { RelayError } from '../../core/errors.ts';
import { isObject, type Obj, str } from '../json.ts';
import type { ChannelConfig, RelayInput } from '../types.ts';

export const SPARK_DEFAULT_BASE = 'wss://spark-api.xf-yun.com';
export const SPARK_DEFAULT_VERSION = 'v2.1';

const DOMAINS: Record<string, string> = {
  'v1.1': 'lite',
  'v2.1': 'generalv2',
  'v3.1': 'generalv3',
  'v3.5': 'generalv3.5',
  'v4.0': '4.0Ultra',
  'pro-128k': 'pro-128k',
  'max-32k': 'max-32k',
};
/** The versions served at `/chat/<version>` instead of `/<version>/chat`. */
const CHAT_PREFIXED = new Set(['pro-128k', 'max-32k']);
const VERSION = /^(v\d+(?:\.\d+)?|pro-128k|max-32k)$/i;
const MODEL_SUFFIX = /-(v\d+(?:\.\d+)?|pro-128k|max-32k)$/i;

/** The version for this model on this channel: the model's suffix, the channel's `other`, else v2.1. */
export function sparkVersion(model: string, other: string): string {
  const suffix = MODEL_SUFFIX.exec(model)?.[1];
  if (suffix) return suffix.toLowerCase();
  const o = other.trim();
  if (VERSION.test(o)) return o.toLowerCase();
  return SPARK_DEFAULT_VERSION;
}

export const sparkDomain = (version: string): string => DOMAINS[version] ?? `general${version}`;

export const sparkPath = (version: string): string =>
  CHAT_PREFIXED.has(version) ? `/chat/${version}` : `/${version}/chat`;

/** Models whose domain takes a `system` message (iFlytek: 4.0 Ultra and the Max family). */
const SYSTEM_DOMAINS = new Set(['generalv3.5', '4.0Ultra', 'max-32k']);

export type SparkKey = { appId: string; apiSecret: string; apiKey: string };

/** `APPID|APISecret|APIKey` (seed 001 §5). A malformed key is the administrator's error, said plainly. */
export function parseSparkKey(key: string): SparkKey {
  const parts = key.split('|').map((p) => p.trim());
  if (parts.length !== 3 || parts.some((p) => p === ''))
    throw new RelayError({
      status: 500,
      message: 'the Xunfei Spark channel key must be APPID|APISecret|APIKey',
      type: 'new_api_error',
      code: 'channel_invalid_key',
    });
  return { appId: parts[0]!, apiSecret: parts[1]!, apiKey: parts[2]! };
}

/** The channel's base URL with the WebSocket scheme (http → ws, https → wss), or Spark's own host. */
export function sparkOrigin(baseUrl: string): URL {
  const raw = baseUrl.trim() || SPARK_DEFAULT_BASE;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new RelayError({
      status: 500,
      message: 'the Xunfei Spark channel has an invalid base URL',
      type: 'new_api_error',
      code: 'channel_invalid_base_url',
    });
  }
  const scheme = u.protocol === 'http:' || u.protocol === 'ws:' ? 'ws:' : 'wss:';
  return new URL(`${scheme}//${u.host}`);
}

/**
 * The signed URL: `date` is the RFC 1123 time; the signature is base64(HMAC-SHA256(APISecret,
 * "host: <host>\ndate: <date>\nGET <path> HTTP/1.1")); `authorization` is the base64 of
 * `api_key="<APIKey>", algorithm="hmac-sha256", headers="host date request-line", signature="<sig>"`.
 */
export function signedUrl(origin: URL, path: string, key: SparkKey, nowMs: number): string {
  const host = origin.host;
  const date = new Date(nowMs).toUTCString();
  const signature = createHmac('sha256', key.apiSecret)
    .update(`host: ${host}\ndate: ${date}\nGET ${path} HTTP/1.1`)
    .digest('base64');
  const origin64 = btoa(
    `api_key="${key.apiKey}", algorithm="hmac-sha256", headers="host date request-line", signature="${signature}"`,
  );
  const q = new URLSearchParams({ authorization: origin64, date, host });
  return `${origin.protocol}//${host}${path}?${q.toString()}`;
}

/** The text of an OpenAI message content (a string, or the text parts of a list). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (isObject(p) && (p.type === 'text' || p.type === undefined) ? str(p.text) : ''))
    .join('');
}

/** OpenAI messages → Spark's `[{role, content}]` (roles system, user, assistant). */
export function sparkMessages(messages: unknown, domain: string): { role: string; content: string }[] {
  const out: { role: string; content: string }[] = [];
  const keepSystem = SYSTEM_DOMAINS.has(domain);
  for (const m of Array.isArray(messages) ? messages : []) {
    if (!isObject(m)) continue;
    const role = str(m.role);
    let content = textOf(m.content);
    if (role === 'system' || role === 'developer') {
      if (keepSystem) out.push({ role: 'system', content });
      else {
        // Older versions take no system role: new-api's convention, the instruction as a user turn acknowledged.
        out.push({ role: 'user', content }, { role: 'assistant', content: 'Okay' });
      }
      continue;
    }
    if (role === 'assistant') {
      // A previous function call: Spark's history has text only, so the call is written out.
      if (!content && Array.isArray(m.tool_calls))
        content = m.tool_calls
          .map((c) => (isObject(c) && isObject(c.function) ? JSON.stringify(c.function) : ''))
          .join('\n');
      out.push({ role: 'assistant', content });
      continue;
    }
    // user, and tool / function results (Spark has no such role): the result as the user's turn.
    out.push({ role: 'user', content });
  }
  return out;
}

/** OpenAI tools / functions → Spark's function list (`payload.functions.text`). */
function sparkFunctions(body: Obj): Obj[] {
  const list: Obj[] = [];
  if (Array.isArray(body.tools))
    for (const t of body.tools)
      if (isObject(t) && t.type === 'function' && isObject(t.function)) list.push(t.function);
  if (Array.isArray(body.functions)) for (const f of body.functions) if (isObject(f)) list.push(f);
  return list.map((f) => ({
    name: str(f.name),
    ...(typeof f.description === 'string' ? { description: f.description } : {}),
    parameters: isObject(f.parameters) ? f.parameters : { type: 'object', properties: {} },
  }));
}

/** The request frame: `{header:{app_id, uid?}, parameter:{chat:{domain, ...}}, payload:{message:{text}, functions?}}`. */
export function sparkFrame(channel: ChannelConfig, input: RelayInput, key: SparkKey, domain: string): Obj {
  // param_override applies to the client's (OpenAI) fields, as on every other channel.
  const body: Obj = { ...(input.body as Obj), ...channel.paramOverride };
  const chat: Obj = { domain };
  if (typeof body.temperature === 'number') chat.temperature = body.temperature;
  const max =
    typeof body.max_tokens === 'number'
      ? body.max_tokens
      : typeof body.max_completion_tokens === 'number'
        ? body.max_completion_tokens
        : undefined;
  if (max !== undefined) chat.max_tokens = max;
  if (typeof body.top_k === 'number') chat.top_k = body.top_k;
  const header: Obj = { app_id: key.appId };
  // uid: the end user's id (at most 32 characters).
  if (typeof body.user === 'string' && body.user) header.uid = body.user.slice(0, 32);
  const payload: Obj = { message: { text: sparkMessages(body.messages, domain) } };
  const functions = sparkFunctions(body);
  if (functions.length > 0) payload.functions = { text: functions };
  return { header, parameter: { chat }, payload };
}
