import { defineEntity, p } from '@mikro-orm/core';
import { nowSeconds } from './common.ts';

/** logs.type (seed 001 §4). */
export const LogType = { TopUp: 1, Consume: 2, Manage: 3, System: 4 } as const;
export type LogType = (typeof LogType)[keyof typeof LogType];

export const LogSchema = defineEntity({
  name: 'Log',
  tableName: 'logs',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    userId: p.integer().default(0),
    /** unix seconds */
    createdAt: p
      .bigint('number')
      .default(0)
      .onCreate(() => nowSeconds())
      .index('logs_created_at_index'),
    type: p.smallint(),
    content: p.text().default(''),
    username: p.string().length(64).default(''),
    tokenName: p.string().length(128).default(''),
    tokenId: p.integer().default(0),
    modelName: p.string().length(255).default(''),
    quota: p.bigint('number').default(0),
    promptTokens: p.integer().default(0),
    completionTokens: p.integer().default(0),
    /** seconds */
    useTime: p.integer().default(0),
    isStream: p.boolean().default(false),
    /** wire name `channel` */
    channelId: p.integer().default(0),
    channelName: p.string().length(128).default(''),
    group: p.string().length(64).default(''),
    /** JSON text (model_ratio, group_ratio, frt, admin_info.use_channel, ...) */
    other: p.text().default(''),
    /** relay request id; unique so that billing a usage event twice is impossible */
    requestId: p.string().length(64).nullable().unique('logs_request_id_unique'),
    ip: p.string().length(64).default(''),
  },
  indexes: [
    { name: 'logs_user_id_created_at_index', properties: ['userId', 'createdAt'] },
    { name: 'logs_type_created_at_index', properties: ['type', 'createdAt'] },
    { name: 'logs_channel_id_created_at_index', properties: ['channelId', 'createdAt'] },
    // Filters of the log pages are equality + newest first: each filter column leads an index with created_at,
    // so a rare value never makes PostgreSQL walk created_at backwards over millions of rows.
    { name: 'logs_username_created_at_index', properties: ['username', 'createdAt'] },
    { name: 'logs_token_name_created_at_index', properties: ['tokenName', 'createdAt'] },
    { name: 'logs_model_name_created_at_index', properties: ['modelName', 'createdAt'] },
  ],
});

export class Log extends LogSchema.class {}
LogSchema.setClass(Log);
