import { defineEntity, p } from '@mikro-orm/core';

/** users.status (seed 000 §4): 1 activated, 2 banned. */
export const UserStatus = { Enabled: 1, Banned: 2 } as const;
export type UserStatus = (typeof UserStatus)[keyof typeof UserStatus];

/** users.role (seed 000 §6). */
export const Role = { User: 1, Admin: 10, Root: 100 } as const;
export type Role = (typeof Role)[keyof typeof Role];

export const DEFAULT_GROUP = 'default';

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  // A bound e-mail or third-party id belongs to one account: unique where set (empty means unbound), so two
  // concurrent binds or sign-ups cannot both claim it.
  indexes: (['email', 'github_id', 'wechat_id', 'telegram_id', 'linux_do_id'] as const).map((column) => ({
    name: `users_${column}_unique`,
    expression: `create unique index "users_${column}_unique" on "users" ("${column}") where "${column}" <> ''`,
  })),
  properties: {
    id: p.integer().primary().autoincrement(),
    username: p.string().length(64).unique('users_username_unique'),
    displayName: p.string().length(64).default(''),
    /** argon2id PHC string; never serialized. */
    passwordHash: p.string().length(255).default('').hidden(),
    /** SHA-256 (hex) of the user's system access token (console API; shown once at generation); never serialized. */
    accessToken: p.string().length(64).nullable().unique('users_access_token_unique').hidden(),
    /** Invite code used in /register?aff=CODE. */
    affCode: p.string().length(32).unique('users_aff_code_unique'),
    group: p.string().length(64).default(DEFAULT_GROUP).index('users_group_index'),
    quota: p.bigint('number').default(0),
    usedQuota: p.bigint('number').default(0),
    requestCount: p.integer().default(0),
    affCount: p.integer().default(0),
    /** Pending invitation earnings, transferable into quota. */
    affQuota: p.bigint('number').default(0),
    affHistoryQuota: p.bigint('number').default(0),
    /** 0 means nobody invited this user. */
    inviterId: p.integer().default(0).index('users_inviter_id_index'),
    role: p.smallint().default(Role.User),
    status: p.smallint().default(UserStatus.Enabled).index('users_status_index'),
    email: p.string().length(255).default(''),
    githubId: p.string().length(64).default(''),
    wechatId: p.string().length(64).default(''),
    telegramId: p.string().length(64).default(''),
    linuxDoId: p.string().length(64).default(''),
    /** JSON text: notify_type, quota_warning_threshold, webhook_url, webhook_secret, notification_email. */
    setting: p.text().default(''),
    /**
     * The quota warning was sent since the balance was last at or above the user's warning threshold (Billing sets
     * it when a charge takes the balance below; ADR 022). Not part of the user object on the wire.
     */
    quotaWarned: p.boolean().default(false).hidden(),
    createdAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date()),
    /** Non-null means deregistered (soft delete). */
    deletedAt: p.datetime().nullable(),
  },
});

export class User extends UserSchema.class {}
UserSchema.setClass(User);
