import { defineEntity, p } from '@mikro-orm/core';
import { nowSeconds } from './common.ts';

/** channels.status (seed 001 §4). */
export const ChannelStatus = { Enabled: 1, ManuallyDisabled: 2, AutoDisabled: 3 } as const;
export type ChannelStatus = (typeof ChannelStatus)[keyof typeof ChannelStatus];

/** Channel type ids of the seeds' catalogue (seed 000 §3). */
export const ChannelType = {
  OpenAI: 1,
  Midjourney: 2,
  Azure: 3,
  Ollama: 4,
  MidjourneyPlus: 5,
  Custom: 8,
  PaLM: 11,
  Anthropic: 14,
  Baidu: 15,
  Zhipu: 16,
  Ali: 17,
  Xunfei: 18,
  AI360: 19,
  AIProxyLibrary: 21,
  FastGPT: 22,
  Tencent: 23,
  Gemini: 24,
  Moonshot: 25,
  ZhipuV4: 26,
  Lingyiwanwu: 31,
  Aws: 33,
  Cohere: 34,
  MiniMax: 35,
  SunoAPI: 36,
  Dify: 37,
  Jina: 38,
  Cloudflare: 39,
  SiliconFlow: 40,
  VertexAi: 41,
  Mistral: 42,
  DeepSeek: 43,
  MokaAI: 44,
  VolcEngine: 45,
  BaiduV2: 46,
} as const;
export type ChannelType = (typeof ChannelType)[keyof typeof ChannelType];

export const ChannelSchema = defineEntity({
  name: 'Channel',
  tableName: 'channels',
  properties: {
    id: p.integer().primary().autoincrement(),
    type: p.integer().default(ChannelType.OpenAI).index('channels_type_index'),
    name: p.string().length(128).default('').index('channels_name_index'),
    key: p.text().default(''),
    openaiOrganization: p.string().length(128).nullable(),
    maxInputTokens: p.integer().default(0),
    baseUrl: p.string().length(512).default(''),
    /** provider-specific extra (api version, region, plugin params ...) */
    other: p.text().default(''),
    /** JSON text: requested model -> upstream model */
    modelMapping: p.text().default(''),
    /** JSON text: upstream status code -> returned status code */
    statusCodeMapping: p.text().default(''),
    /** JSON text */
    setting: p.text().default(''),
    /** comma-separated model names */
    models: p.text().default(''),
    /** comma-separated groups */
    group: p.string().length(255).default('default'),
    /** 1 auto-disable on documented errors, 0 never */
    autoBan: p.smallint().default(1),
    testModel: p.string().length(128).default(''),
    priority: p.bigint('number').default(0).index('channels_priority_index'),
    weight: p.integer().default(0),
    tag: p.string().length(128).nullable().index('channels_tag_index'),
    status: p.smallint().default(ChannelStatus.Enabled).index('channels_status_index'),
    /** milliseconds of the last test */
    responseTime: p.integer().default(0),
    usedQuota: p.bigint('number').default(0),
    /** upstream balance in USD (informational, not a quota balance) */
    balance: p.double().default(0),
    /** unix seconds */
    balanceUpdatedTime: p.bigint('number').default(0),
    /** unix seconds */
    createdTime: p
      .bigint('number')
      .default(0)
      .onCreate(() => nowSeconds()),
    /** unix seconds of the last test */
    testTime: p.bigint('number').default(0),
    /** JSON text: status_reason, status_time */
    otherInfo: p.text().default(''),
  },
});

export class Channel extends ChannelSchema.class {}
ChannelSchema.setClass(Channel);
