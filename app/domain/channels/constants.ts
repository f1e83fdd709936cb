/** Client-safe channel constants (seed 001 §3, §4, §5, §9): type labels, key hints, colours, templates. */

import { MIDJOURNEY_MODELS } from '#app/domain/midjourney/constants.ts';
import { formatTimestamp } from '#app/utils/time.ts';

/**
 * Labels and display order of the provider types (ids of ChannelType in @switchyard/db). Which of them the form
 * offers is the relay's answer (ListChannelTypes, see served-types.server.ts): typeOptions() filters this list.
 */
export const CHANNEL_TYPES: readonly { value: number; label: string }[] = [
  { value: 1, label: 'OpenAI' },
  { value: 3, label: 'Azure OpenAI' },
  { value: 14, label: 'Anthropic Claude' },
  { value: 24, label: 'Google Gemini' },
  { value: 41, label: 'Vertex AI' },
  { value: 33, label: 'AWS Claude' },
  { value: 43, label: 'DeepSeek' },
  { value: 42, label: 'Mistral AI' },
  { value: 34, label: 'Cohere' },
  { value: 4, label: 'Ollama' },
  { value: 8, label: 'Custom' },
  { value: 15, label: 'Baidu Wenxin' },
  { value: 46, label: 'Baidu Wenxin V2' },
  { value: 16, label: 'Zhipu ChatGLM' },
  { value: 26, label: 'Zhipu GLM-4V' },
  { value: 17, label: 'Ali Qwen' },
  { value: 18, label: 'Xunfei Spark' },
  { value: 19, label: '360 AI' },
  { value: 23, label: 'Tencent Hunyuan' },
  { value: 25, label: 'Moonshot' },
  { value: 31, label: 'Lingyiwanwu' },
  { value: 35, label: 'MiniMax' },
  { value: 45, label: 'VolcEngine' },
  { value: 40, label: 'SiliconFlow' },
  { value: 39, label: 'Cloudflare' },
  { value: 37, label: 'Dify' },
  { value: 38, label: 'Jina' },
  { value: 44, label: 'MokaAI' },
  { value: 21, label: 'AI Proxy Library' },
  { value: 22, label: 'FastGPT' },
  { value: 11, label: 'Google PaLM2' },
  { value: 2, label: 'Midjourney Proxy' },
  { value: 5, label: 'Midjourney Proxy Plus' },
  { value: 36, label: 'Suno API' },
];

export type ChannelTypeOption = { value: number; label: string };

/**
 * The form's type options for the types the relay serves: the known ones in CHANNEL_TYPES order with their
 * labels, then any type the console has no label for yet ("#<id>"), ascending. `keep` (the type of a channel
 * being edited) stays offered even when the relay does not serve it, so the form shows what is saved.
 */
export function typeOptions(served: readonly number[], keep?: number): ChannelTypeOption[] {
  const set = new Set(served);
  if (keep !== undefined) set.add(keep);
  const known = CHANNEL_TYPES.filter((t) => set.has(t.value));
  const labelled = new Set(known.map((t) => t.value));
  const unknown = [...set]
    .filter((v) => !labelled.has(v))
    .sort((a, b) => a - b)
    .map((value) => ({ value, label: `#${value}` }));
  return [...known, ...unknown];
}

/**
 * Preset model lists by channel type (new-api's channel form): choosing the type fills the models with these,
 * and they are offered as model options for a channel of that type.
 */
export const TYPE_PRESET_MODELS: Readonly<Partial<Record<number, readonly string[]>>> = {
  2: MIDJOURNEY_MODELS,
  5: MIDJOURNEY_MODELS,
  36: ['suno_music', 'suno_lyrics'],
};

/** The preset model list of a channel type (filled on type change and by "fill related models"), else []. */
export function presetModelsForType(type: number): readonly string[] {
  return TYPE_PRESET_MODELS[type] ?? [];
}

export function channelTypeLabel(type: number): string {
  return CHANNEL_TYPES.find((t) => t.value === type)?.label ?? `#${type}`;
}

/** The i18n key (under `form.keyHint.`) of the key prompt of a type (seed §5 "Key hints by type"). */
export function keyHintKey(type: number): string {
  switch (type) {
    case 15:
      return 't15';
    case 18:
      return 't18';
    case 22:
      return 't22';
    case 23:
      return 't23';
    case 33:
      return 't33';
    case 41:
      return 't41';
    default:
      return 'generic';
  }
}

export type ChannelStatusKey = 'enabled' | 'manual' | 'auto' | 'unknown';
export function channelStatusKey(status: number): ChannelStatusKey {
  return status === 1 ? 'enabled' : status === 2 ? 'manual' : status === 3 ? 'auto' : 'unknown';
}

/** Seed §4: 0 untested; up to 1 s green; up to 3 s lime; up to 5 s yellow; above red. `ms` is milliseconds. */
export function responseTimeColor(ms: number): 'grey' | 'green' | 'lime' | 'yellow' | 'red' {
  if (!ms) return 'grey';
  if (ms <= 1000) return 'green';
  if (ms <= 3000) return 'lime';
  if (ms <= 5000) return 'yellow';
  return 'red';
}

/** other_info's auto-disable reason and time (unix seconds), when present. */
export function statusReason(otherInfo: string): { reason: string; time: number } | null {
  if (!otherInfo) return null;
  try {
    const v = JSON.parse(otherInfo) as { status_reason?: unknown; status_time?: unknown };
    if (!v || typeof v !== 'object' || (!v.status_reason && !v.status_time)) return null;
    return { reason: String(v.status_reason ?? ''), time: Number(v.status_time ?? 0) || 0 };
  } catch {
    return null;
  }
}

/** Seed §3 "Default channel-type model templates" (the filler buttons of the form). */
export const MODEL_MAPPING_TEMPLATE = JSON.stringify({ 'gpt-3.5-turbo': 'gpt-3.5-turbo-0125' }, null, 2);
export const STATUS_CODE_MAPPING_TEMPLATE = JSON.stringify({ '400': '500' }, null, 2);
export const VERTEX_REGION_TEMPLATE = JSON.stringify(
  { default: 'us-central1', 'claude-3-5-sonnet-20240620': 'europe-west1' },
  null,
  2,
);

export const DRAWER_WIDTH = 600;

/** Unix seconds as 'YYYY-MM-DD HH:mm:ss' in the user's zone (app/utils/time.ts); 0 is '-'. */
export function formatTime(seconds: number, timeZone: string): string {
  if (!seconds) return '-';
  return formatTimestamp(seconds, timeZone);
}
