/**
 * Zhipu ChatGLM v3 ("model-api") requests. The channel key `id.secret` is signed into a short-lived JWT (HS256,
 * protected header `{alg: "HS256", sign_type: "SIGN"}`, claims `api_key`, `exp` and `timestamp` in MILLISECONDS
 * as Zhipu documents) with `jose`, sent bare in `Authorization`. A new token is signed per request, so the
 * adaptor stays pure and holds no cache.
 */
import { SignJWT } from 'jose';
import type { Obj } from '../json.ts';
import {
  channelKeyError,
  chatMessages,
  clientInputError,
  embeddingInputs,
  messageText,
} from '../plain-chat.ts';
import type { ChannelConfig, RelayInput } from '../types.ts';

export const ZHIPU_DEFAULT_BASE = 'https://open.bigmodel.cn';
/** The embeddings model of the v3 API. */
export const ZHIPU_EMBEDDING_MODEL = 'text_embedding';
/** Lifetime of a signed token; it is only checked when a call starts. */
export const TOKEN_TTL_MS = 30 * 60_000;

export function parseZhipuKey(key: string): { id: string; secret: string } | null {
  const parts = key.trim().split('.');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return null;
  return { id: parts[0], secret: parts[1] };
}

/** The JWT Zhipu expects for `id.secret`, valid from `nowMs` for TOKEN_TTL_MS. */
export async function zhipuToken(key: string, nowMs: number): Promise<string> {
  const parsed = parseZhipuKey(key);
  if (!parsed) throw channelKeyError('"id.secret" (the Zhipu API key, two parts joined by a dot)');
  return new SignJWT({ api_key: parsed.id, exp: nowMs + TOKEN_TTL_MS, timestamp: nowMs })
    .setProtectedHeader({ alg: 'HS256', sign_type: 'SIGN' })
    .sign(new TextEncoder().encode(parsed.secret));
}

/** `{base}/api/paas/v3/model-api/{model}/{invoke|sse-invoke}` */
export function zhipuUrl(channel: ChannelConfig, model: string, stream: boolean): string {
  const base = channel.baseUrl || ZHIPU_DEFAULT_BASE;
  return `${base}/api/paas/v3/model-api/${encodeURIComponent(model)}/${stream ? 'sse-invoke' : 'invoke'}`;
}

/** Zhipu takes temperature and top_p within [0, 1] (as new-api clamps them). */
const unit = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? Math.min(Math.max(v, 0), 1) : undefined;

/** OpenAI chat → `{prompt: [{role, content}], temperature, top_p, incremental}` (request_id is optional). */
export function buildZhipuChatBody(input: RelayInput): Obj {
  const body = input.body instanceof FormData ? {} : input.body;
  const prompt = chatMessages(input).map((m) => ({
    role: m.role === 'developer' ? 'system' : typeof m.role === 'string' ? m.role : 'user',
    content: messageText(m.content),
  }));
  const out: Obj = { prompt };
  const temperature = unit(body.temperature);
  if (temperature !== undefined) out.temperature = temperature;
  const topP = unit(body.top_p);
  if (topP !== undefined) out.top_p = topP;
  // Stream deltas, not the whole text so far on every event.
  if (input.stream) out.incremental = true;
  return out;
}

/** OpenAI embeddings → `{prompt}`: the v3 API embeds one text per call. */
export function buildZhipuEmbedBody(input: RelayInput): Obj {
  const inputs = embeddingInputs(input);
  if (inputs.length !== 1) throw clientInputError('Zhipu embeds exactly one input text per request', 'input');
  return { prompt: inputs[0] };
}
