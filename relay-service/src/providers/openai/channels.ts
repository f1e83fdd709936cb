import type { ChannelConfig, Endpoint } from '../types.ts';

/**
 * The OpenAI-compatible channel types (seed 000 §3) with their default base URL and API root. Most serve the
 * OpenAI paths under `/v1`; a few put the same API under another root. channel.baseUrl replaces the default.
 */
type CompatChannel = { base: string; root: string; paths?: Partial<Record<Endpoint, string>> };

export const OPENAI_COMPATIBLE: Readonly<Record<number, CompatChannel>> = {
  1: { base: 'https://api.openai.com', root: '/v1' }, // OpenAI
  4: { base: 'http://localhost:11434', root: '/v1' }, // Ollama (its OpenAI-compatible API)
  8: { base: '', root: '' }, // Custom: baseUrl is the full URL, see upstreamUrl
  19: { base: 'https://ai.360.cn', root: '/v1' }, // 360
  22: { base: 'https://fastgpt.run/api/openapi', root: '/v1' }, // FastGPT
  25: { base: 'https://api.moonshot.cn', root: '/v1' }, // Moonshot
  26: { base: 'https://open.bigmodel.cn', root: '/api/paas/v4' }, // Zhipu v4
  31: { base: 'https://api.lingyiwanwu.com', root: '/v1' }, // Yi
  35: { base: 'https://api.minimax.chat', root: '/v1', paths: { chat: '/text/chatcompletion_v2' } }, // MiniMax
  38: { base: 'https://api.jina.ai', root: '/v1' }, // Jina (embeddings, rerank)
  40: { base: 'https://api.siliconflow.cn', root: '/v1' }, // SiliconFlow
  42: { base: 'https://api.mistral.ai', root: '/v1' }, // Mistral
  43: { base: 'https://api.deepseek.com', root: '/v1' }, // DeepSeek
  45: { base: 'https://ark.cn-beijing.volces.com', root: '/api/v3' }, // VolcEngine (Doubao)
  46: { base: 'https://qianfan.baidubce.com', root: '/v2' }, // Baidu v2 (Qianfan)
};

export const CUSTOM_CHANNEL = 8;

/** OpenAI's path of each endpoint below the API root; Azure derives its `{task}` from the same table. */
export const ENDPOINT_PATHS: Readonly<Record<Endpoint, string>> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  images: '/images/generations',
  imageEdits: '/images/edits',
  speech: '/audio/speech',
  transcriptions: '/audio/transcriptions',
  translations: '/audio/translations',
  moderations: '/moderations',
  rerank: '/rerank',
  responses: '/responses',
  // Not an OpenAI endpoint: Claude-format calls reach OpenAI channels through the chat bridge.
  messages: '/chat/completions',
  generate: '/chat/completions',
  // Gemini-format embeddings reach OpenAI channels through the embeddings bridge.
  embed: '/embeddings',
};

export function channelBase(channel: ChannelConfig): string {
  const base = channel.baseUrl || OPENAI_COMPATIBLE[channel.type]?.base || OPENAI_COMPATIBLE[1]!.base;
  return base.replace(/\/+$/, '');
}

/** The API root URL (`https://api.openai.com/v1`), for endpoint, model-list and balance URLs. */
export function apiRoot(channel: ChannelConfig): string {
  const base = channelBase(channel);
  const root = OPENAI_COMPATIBLE[channel.type]?.root ?? '/v1';
  // A base URL that already ends in the root (`https://host/v1`) is accepted as well.
  return root && base.endsWith(root) ? base : base + root;
}

/**
 * The relay URL. Custom channels (type 8) take baseUrl as the complete URL with an optional `{model}`
 * placeholder (new-api's behaviour: any gateway path can be reached).
 */
export function upstreamUrl(channel: ChannelConfig, endpoint: Endpoint, model: string): string {
  if (channel.type === CUSTOM_CHANNEL) {
    if (!channel.baseUrl) throw new Error(`channel ${channel.id}: a custom channel needs a base URL`);
    return channelBase(channel).replaceAll('{model}', model);
  }
  const path = OPENAI_COMPATIBLE[channel.type]?.paths?.[endpoint] ?? ENDPOINT_PATHS[endpoint];
  return apiRoot(channel) + path;
}
