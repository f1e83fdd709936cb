import type { MikroORM } from '@mikro-orm/postgresql';
import { Session } from '@switchyard/db/entities/session.ts';
import { User } from '@switchyard/db/entities/user.ts';
import {
  defaultOptionValues,
  type OptionKey,
  serializeOptionValue,
} from '@switchyard/db/options/registry.ts';
import { PLAINTEXT_BOX } from '@switchyard/db/security/secrets.ts';
import { createSessionToken, sha256Hex, toSessionUser } from '#app/domain/auth/session.server.ts';
import { i18next } from '#app/i18n/i18n.server.ts';
import type { AccountCtx } from './account.server.ts';

/** Test helpers for the account domain: users, sessions, a typed option stand-in and an English `t`. */
export function fakeOptions(overrides: Partial<Record<OptionKey, unknown>> = {}) {
  const values = { ...defaultOptionValues(), ...overrides } as Record<string, unknown>;
  return {
    get: (key: string) => values[key],
    getRaw: (key: OptionKey) => serializeOptionValue(key, values[key] as never),
  } as unknown as AccountCtx['options'];
}

let seq = 0;
export async function makeUser(orm: MikroORM, over: Partial<User> = {}): Promise<User> {
  seq++;
  const em = orm.em.fork();
  const user = em.create(User, {
    username: `u${Date.now() % 100000}_${seq}`,
    affCode: `aff${Date.now() % 100000}x${seq}`,
    ...over,
  } as never);
  await em.flush();
  return user;
}

export async function makeSession(orm: MikroORM, user: User): Promise<{ token: string; id: string }> {
  const token = createSessionToken();
  const id = await sha256Hex(token);
  const em = orm.em.fork();
  em.create(Session, {
    id,
    user: em.getReference(User, user.id),
    expiresAt: new Date(Date.now() + 3600_000),
  } as never);
  await em.flush();
  return { token, id };
}

export async function makeCtx(
  orm: MikroORM,
  user: User | null,
  options = fakeOptions(),
): Promise<AccountCtx> {
  const t = await i18next.getFixedT('en', 'common');
  return {
    em: orm.em.fork() as AccountCtx['em'],
    actor: user ? toSessionUser(user) : null,
    options,
    secrets: PLAINTEXT_BOX,
    t,
  };
}
