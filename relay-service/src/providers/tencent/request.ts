/**
 * Hunyuan ChatCompletions requests: the body (OpenAI messages as `{Role, Content}`, a system message allowed
 * first) and the signed Tencent Cloud API headers.
 */
import type { Obj } from '../json.ts';
import { channelKeyError, chatMessages, messageText } from '../plain-chat.ts';
import type { ChannelConfig, RelayInput } from '../types.ts';
import { tc3Sign } from './sign.ts';

export const HUNYUAN_DEFAULT_BASE = 'https://hunyuan.tencentcloudapi.com';
export const HUNYUAN_SERVICE = 'hunyuan';
export const HUNYUAN_ACTION = 'ChatCompletions';
export const HUNYUAN_VERSION = '2023-09-01';
const CONTENT_TYPE = 'application/json';

export function parseTencentKey(key: string): { appId: string; secretId: string; secretKey: string } | null {
  const parts = key.trim().split('|');
  if (parts.length !== 3 || parts.some((p) => p === '')) return null;
  return { appId: parts[0]!, secretId: parts[1]!, secretKey: parts[2]! };
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function buildHunyuanBody(input: RelayInput): Obj {
  const body = input.body instanceof FormData ? {} : input.body;
  const messages = chatMessages(input).map((m) => {
    const role = m.role === 'developer' ? 'system' : typeof m.role === 'string' ? m.role : 'user';
    return { Role: role, Content: messageText(m.content) };
  });
  const out: Obj = { Model: input.upstreamModel, Messages: messages, Stream: input.stream };
  const topP = num(body.top_p);
  if (topP !== undefined) out.TopP = topP;
  const temperature = num(body.temperature);
  if (temperature !== undefined) out.Temperature = temperature;
  return out;
}

/** The Tencent Cloud API headers of a ChatCompletions call, signed at `nowMs`. */
export function hunyuanHeaders(
  channel: ChannelConfig,
  host: string,
  payload: string,
  nowMs: number,
  stream: boolean,
): Headers {
  const key = parseTencentKey(channel.key);
  if (!key) throw channelKeyError('"AppId|SecretId|SecretKey" (three parts joined by |)');
  const timestamp = Math.floor(nowMs / 1000);
  const { authorization } = tc3Sign({
    secretId: key.secretId,
    secretKey: key.secretKey,
    service: HUNYUAN_SERVICE,
    timestamp,
    method: 'POST',
    // The action is signed too (lower-cased), as Tencent's own SDKs do.
    signedHeaders: { 'content-type': CONTENT_TYPE, host, 'x-tc-action': HUNYUAN_ACTION.toLowerCase() },
    payload,
  });
  const headers = new Headers({
    authorization,
    'content-type': CONTENT_TYPE,
    'x-tc-action': HUNYUAN_ACTION,
    'x-tc-version': HUNYUAN_VERSION,
    'x-tc-timestamp': String(timestamp),
  });
  if (channel.other.trim()) headers.set('x-tc-region', channel.other.trim());
  if (stream) headers.set('accept', 'text/event-stream');
  return headers;
}
