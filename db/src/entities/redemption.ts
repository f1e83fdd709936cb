import { defineEntity, p } from '@mikro-orm/core';
import { nowSeconds } from './common.ts';

/** redemptions.status (seed 001 §4). */
export const RedemptionStatus = { Unused: 1, Disabled: 2, Used: 3 } as const;
export type RedemptionStatus = (typeof RedemptionStatus)[keyof typeof RedemptionStatus];

export const RedemptionSchema = defineEntity({
  name: 'Redemption',
  tableName: 'redemptions',
  properties: {
    id: p.integer().primary().autoincrement(),
    /** creator (admin) */
    userId: p.integer().default(0),
    key: p.string().length(64).unique('redemptions_key_unique'),
    status: p.smallint().default(RedemptionStatus.Unused),
    name: p.string().length(128).default('').index('redemptions_name_index'),
    quota: p.bigint('number').default(100000),
    /** unix seconds */
    createdTime: p
      .bigint('number')
      .default(0)
      .onCreate(() => nowSeconds()),
    /** unix seconds; 0 not redeemed */
    redeemedTime: p.bigint('number').default(0),
    /** 0 means none */
    usedUserId: p.integer().default(0),
    deletedAt: p.datetime().nullable(),
  },
});

export class Redemption extends RedemptionSchema.class {}
RedemptionSchema.setClass(Redemption);
