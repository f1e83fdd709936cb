/**
 * Baidu Wenxin (Qianfan v1, "wenxinworkshop") requests: the endpoint path of a model name, the chat body
 * (system messages lifted into the top-level `system` field, OpenAI tools as `functions`), the embeddings body,
 * and the OAuth client-credentials exchange of the `APIKey|SecretKey` channel key.
 */
import { isObject, type Obj } from '../json.ts';
import { chatMessages, embeddingInputs, messageText } from '../plain-chat.ts';
import type { ChannelConfig, RelayInput } from '../types.ts';

export const BAIDU_DEFAULT_BASE = 'https://aip.baidubce.com';

/** Model names whose endpoint is not the lower-cased name (new-api's table). */
const ENDPOINTS: Readonly<Record<string, string>> = {
  'ERNIE-4.0': 'completions_pro',
  'ERNIE-Bot-4': 'completions_pro',
  'ERNIE-Bot': 'completions',
  'ERNIE-Bot-turbo': 'eb-instant',
  'ERNIE-Speed': 'ernie_speed',
  'ERNIE-4.0-8K': 'completions_pro',
  'ERNIE-3.5-8K': 'completions',
  'ERNIE-3.5-8K-0205': 'ernie-3.5-8k-0205',
  'ERNIE-3.5-8K-1222': 'ernie-3.5-8k-1222',
  'ERNIE-Bot-8K': 'ernie_bot_8k',
  'ERNIE-3.5-4K-0205': 'ernie-3.5-4k-0205',
  'ERNIE-Speed-8K': 'ernie_speed',
  'ERNIE-Speed-128K': 'ernie-speed-128k',
  'ERNIE-Lite-8K-0922': 'eb-instant',
  'ERNIE-Lite-8K-0308': 'ernie-lite-8k',
  'ERNIE-Tiny-8K': 'ernie-tiny-8k',
  'BLOOMZ-7B': 'bloomz_7b1',
  'Embedding-V1': 'embedding-v1',
  'bge-large-zh': 'bge_large_zh',
  'bge-large-en': 'bge_large_en',
  'tao-8k': 'tao_8k',
};

/** The endpoint name of a model: the table above, else the name lower-cased (as new-api does). */
export const baiduEndpoint = (model: string): string => ENDPOINTS[model] ?? model.toLowerCase();

export const baiduBase = (channel: ChannelConfig): string => channel.baseUrl || BAIDU_DEFAULT_BASE;

/** `{base}/rpc/2.0/ai_custom/v1/wenxinworkshop/{chat|embeddings}/{endpoint}?access_token=…` */
export function baiduUrl(channel: ChannelConfig, kind: 'chat' | 'embeddings', model: string): string {
  const token = encodeURIComponent(channel.credential ?? '');
  return `${baiduBase(channel)}/rpc/2.0/ai_custom/v1/wenxinworkshop/${kind}/${encodeURIComponent(baiduEndpoint(model))}?access_token=${token}`;
}

/** The two halves of `APIKey|SecretKey`, or null when the key has another shape. */
export function parseBaiduKey(key: string): { apiKey: string; secretKey: string } | null {
  const parts = key.trim().split('|');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return null;
  return { apiKey: parts[0], secretKey: parts[1] };
}

/** `POST {base}/oauth/2.0/token?grant_type=client_credentials&client_id=<APIKey>&client_secret=<SecretKey>` */
export function tokenUrl(channel: ChannelConfig): string {
  const key = parseBaiduKey(channel.key);
  if (!key) throw new Error('a Baidu key is "APIKey|SecretKey" (two parts joined by |)');
  const q = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: key.apiKey,
    client_secret: key.secretKey,
  });
  return `${baiduBase(channel)}/oauth/2.0/token?${q}`;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** OpenAI tools (type function) → Baidu `functions` ({name, description, parameters}). */
function functionsOf(tools: unknown): Obj[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  const out = tools.flatMap((t) => {
    const fn = isObject(t) && isObject(t.function) ? t.function : null;
    if (!fn || typeof fn.name !== 'string') return [];
    const f: Obj = { name: fn.name, parameters: isObject(fn.parameters) ? fn.parameters : {} };
    if (typeof fn.description === 'string') f.description = fn.description;
    return [f];
  });
  return out.length > 0 ? out : undefined;
}

/** OpenAI chat → the Wenxin chat body. */
export function buildBaiduChatBody(input: RelayInput): Obj {
  const body = input.body instanceof FormData ? {} : input.body;
  const system: string[] = [];
  const messages: Obj[] = [];
  // Tool results name the function they answer; OpenAI's carry only the call id.
  const callNames = new Map<string, string>();
  for (const m of chatMessages(input)) {
    const role = typeof m.role === 'string' ? m.role : 'user';
    const text = messageText(m.content);
    if (role === 'system' || role === 'developer') {
      system.push(text);
      continue;
    }
    // A tool result goes back as Wenxin's `function` role, named after the function it answers.
    if (role === 'tool') {
      const name = typeof m.name === 'string' ? m.name : (callNames.get(String(m.tool_call_id)) ?? '');
      messages.push({ role: 'function', name, content: text });
      continue;
    }
    const out: Obj = { role, content: text };
    for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : [])
      if (isObject(c) && isObject(c.function) && typeof c.function.name === 'string')
        callNames.set(String(c.id), c.function.name);
    const call = Array.isArray(m.tool_calls) && isObject(m.tool_calls[0]) ? m.tool_calls[0] : null;
    if (role === 'assistant' && call && isObject(call.function))
      out.function_call = { name: call.function.name, arguments: call.function.arguments };
    messages.push(out);
  }
  const out: Obj = { messages, stream: input.stream };
  if (system.length) out.system = system.join('\n');
  const temperature = num(body.temperature);
  if (temperature !== undefined) out.temperature = temperature;
  const topP = num(body.top_p);
  if (topP !== undefined) out.top_p = topP;
  // Wenxin's penalty_score (1.0–2.0) is the closest to frequency_penalty; passed as new-api passes it.
  const penalty = num(body.frequency_penalty);
  if (penalty !== undefined) out.penalty_score = penalty;
  const maxTokens = num(body.max_completion_tokens) ?? num(body.max_tokens);
  if (maxTokens !== undefined) out.max_output_tokens = maxTokens;
  if (typeof body.user === 'string' && body.user) out.user_id = body.user;
  if (Array.isArray(body.stop)) out.stop = body.stop;
  else if (typeof body.stop === 'string') out.stop = [body.stop];
  const functions = functionsOf(body.tools);
  if (functions) out.functions = functions;
  return out;
}

/** OpenAI embeddings → `{input: [...]}` (Wenxin takes a list of texts). */
export function buildBaiduEmbedBody(input: RelayInput): Obj {
  const body = input.body instanceof FormData ? {} : input.body;
  const out: Obj = { input: embeddingInputs(input) };
  if (typeof body.user === 'string' && body.user) out.user_id = body.user;
  return out;
}
