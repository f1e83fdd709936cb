import { defineEntity, p } from '@mikro-orm/core';
import { nowSeconds } from './common.ts';

/** tokens.status (seed 001 §4): 3 and 4 are set by the server only. */
export const TokenStatus = { Enabled: 1, Disabled: 2, Expired: 3, Exhausted: 4 } as const;
export type TokenStatus = (typeof TokenStatus)[keyof typeof TokenStatus];

/** expired_time value meaning "never expires". */
export const TOKEN_NEVER_EXPIRES = -1;

export const TokenSchema = defineEntity({
  name: 'Token',
  tableName: 'tokens',
  properties: {
    id: p.integer().primary().autoincrement(),
    userId: p.integer(),
    /**
     * The secret without the `sk-` prefix; with SECRETS_KEY sealed for this row (`enc:v1:...`, ADR 035), found by
     * `keyHash` then. Read and written through app/domain/tokens only.
     */
    key: p.string().length(255).unique('tokens_key_unique'),
    /** Keyed lookup hash of the key (`<key id>:<HMAC>`) when `key` is sealed; null for a plaintext key. */
    keyHash: p.string().length(64).nullable().unique('tokens_key_hash_unique'),
    name: p.string().length(128).default('').index('tokens_name_index'),
    status: p.smallint().default(TokenStatus.Enabled),
    remainQuota: p.bigint('number').default(0),
    usedQuota: p.bigint('number').default(0),
    unlimitedQuota: p.boolean().default(false),
    /** unix seconds; -1 never. */
    expiredTime: p.bigint('number').default(TOKEN_NEVER_EXPIRES),
    /** unix seconds */
    createdTime: p
      .bigint('number')
      .default(0)
      .onCreate(() => nowSeconds()),
    /** unix seconds of the last use */
    accessedTime: p.bigint('number').default(0),
    modelLimitsEnabled: p.boolean().default(false),
    /** comma-separated model names */
    modelLimits: p.text().default(''),
    /** one IP or CIDR per line; empty allows all */
    allowIps: p.text().default(''),
    /** '' means the user's group */
    group: p.string().length(64).default(''),
    deletedAt: p.datetime().nullable(),
  },
  indexes: [{ name: 'tokens_user_id_id_index', properties: ['userId', 'id'] }],
});

export class Token extends TokenSchema.class {}
TokenSchema.setClass(Token);
