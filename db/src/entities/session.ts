import { defineEntity, p } from '@mikro-orm/core';
import { User } from './user.ts';

/**
 * A console login session. The cookie holds an opaque random token; `id` is the sha-256 hex of that token,
 * so a leaked table reveals no usable cookie. Deleting the row revokes the session.
 */
export const SessionSchema = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  properties: {
    id: p.string().length(64).primary(),
    user: () => p.manyToOne(User).index('sessions_user_id_index').deleteRule('cascade'),
    expiresAt: p.datetime().index('sessions_expires_at_index'),
    createdAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date()),
    lastSeenAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date()),
    ip: p.string().length(64).default(''),
    userAgent: p.string().length(512).default(''),
  },
});

export class Session extends SessionSchema.class {}
SessionSchema.setClass(Session);
