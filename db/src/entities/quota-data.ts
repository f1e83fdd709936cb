import { defineEntity, p } from '@mikro-orm/core';

/** Hourly usage aggregate per user x model (data dashboard). */
export const QuotaDataSchema = defineEntity({
  name: 'QuotaData',
  tableName: 'quota_data',
  properties: {
    id: p.integer().primary().autoincrement(),
    userId: p.integer(),
    username: p.string().length(64).default(''),
    modelName: p.string().length(255).default(''),
    /** unix seconds, truncated to the hour */
    createdAt: p.bigint('number').index('quota_data_created_at_index'),
    tokenUsed: p.bigint('number').default(0),
    count: p.integer().default(0),
    quota: p.bigint('number').default(0),
  },
  uniques: [{ name: 'quota_data_user_model_hour_unique', properties: ['userId', 'modelName', 'createdAt'] }],
});

export class QuotaData extends QuotaDataSchema.class {}
QuotaDataSchema.setClass(QuotaData);
