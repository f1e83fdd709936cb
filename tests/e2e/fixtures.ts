/**
 * Shared e2e fixtures: the product's database (inject('databaseURL')) and signed-in users made by inserting a
 * User and a Session row directly, so each test starts from the state it needs without driving the login page.
 */
import { MikroORM } from '@mikro-orm/postgresql';
import { createOrmConfig } from '@switchyard/db/config.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { User } from '@switchyard/db/entities/user.ts';
import { inject } from 'vitest';
import { createSessionToken, SESSION_COOKIE, sha256Hex } from '#app/domain/auth/session.server.ts';
import type { Harness, Mode } from './harness.ts';

export type E2eUser = { id: number; username: string; token: string };

/** An ORM on the product's database (close it in afterAll). */
export function openProductOrm(): Promise<MikroORM> {
  return MikroORM.init(createOrmConfig(inject('databaseURL'), { poolMax: 2 }));
}

/**
 * Inserts a user (any User fields may be given) and, unless `withSession` is false, a one-hour session whose
 * cookie token is returned.
 */
export async function createE2eUser(
  orm: MikroORM,
  username: string,
  fields: Partial<User> & { withSession?: boolean } = {},
): Promise<E2eUser> {
  const { withSession = true, ...over } = fields;
  const em = orm.em.fork();
  const user = em.create(User, {
    username,
    displayName: username,
    affCode: `e2e${username}`.slice(0, 32),
    ...over,
  } as never);
  await em.flush();
  const token = createSessionToken();
  if (withSession) {
    em.create(Session, {
      id: await sha256Hex(token),
      user: user.id,
      expiresAt: new Date(Date.now() + 3_600_000),
    } as never);
    await em.flush();
  }
  return { id: user.id, username, token };
}

/** Puts the user's session cookie into the browser context of `mode`. */
export async function signIn(h: Harness, mode: Mode, who: E2eUser): Promise<void> {
  await h.contexts[mode].addCookies([{ name: SESSION_COOKIE, value: who.token, url: h.baseURL }]);
}
