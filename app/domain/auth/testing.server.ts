/**
 * Test environment of the auth domain and its JSON routes: a real PostgreSQL database (createTestDatabase
 * with a suffix of its own), a real OptionService, the SMTP capture and Turnstile fakes wired through the
 * options and TURNSTILE_VERIFY_URL, and a Redis-backed critical limiter under this worker's key prefix.
 */

import { User } from '@switchyard/db/entities/user.ts';
import type { OptionKey } from '@switchyard/db/options/registry.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub } from '@switchyard/db/pubsub.ts';
import { hashPassword } from '@switchyard/db/security/password.ts';
import { PLAINTEXT_BOX } from '@switchyard/db/security/secrets.ts';
import {
  createTestDatabase,
  type TestDatabase,
  testRedisPrefix,
  testRedisUrl,
} from '@switchyard/db/testing.ts';
import { createClient } from 'redis';
import { CLIENT_IP_HEADER, createRedisRateLimiter } from '#app/domain/security/rate-limit.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { type SmtpCapture, startSmtpCapture } from '#tests/fakes/smtp.ts';
import { startTurnstileFake, type TurnstileFake } from '#tests/fakes/turnstile.ts';

export type AuthEnv = {
  db: TestDatabase;
  services: ConsoleServices;
  smtp: SmtpCapture;
  turnstile: TurnstileFake;
  setOption(key: OptionKey, value: string): Promise<void>;
  /** A user with a password (argon2id), returned as stored. */
  createUser(fields: { username: string; password?: string } & Record<string, unknown>): Promise<User>;
  close(): Promise<void>;
};

let ipCounter = 0;
/** A fresh client address per call, so tests do not share rate-limit windows. */
export function freshIp(): string {
  ipCounter += 1;
  return `10.${process.pid % 250}.${Math.floor(ipCounter / 250)}.${ipCounter % 250}`;
}

export function req(
  url: string,
  init: { method?: string; json?: unknown; headers?: Record<string, string>; ip?: string } = {},
): Request {
  const headers: Record<string, string> = { [CLIENT_IP_HEADER]: init.ip ?? freshIp(), ...init.headers };
  if (init.json !== undefined) headers['Content-Type'] = 'application/json';
  return new Request(url, {
    method: init.method ?? (init.json !== undefined ? 'POST' : 'GET'),
    headers,
    ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
  });
}

export async function createAuthEnv(suffix: string): Promise<AuthEnv> {
  const db = await createTestDatabase({ suffix });
  const options = new OptionService({
    orm: db.orm,
    pubsub: createMemoryPubSub(),
    channel: `switchyard:options:test:${suffix}:${process.pid}`,
  });
  await options.load();
  const smtp = await startSmtpCapture();
  const turnstile = await startTurnstileFake({ secret: 'turnstile-secret' });
  const redis = createClient({ url: testRedisUrl() });
  await redis.connect();
  const prefix = `${testRedisPrefix()}${suffix}:${crypto.randomUUID()}:`;
  const set = (key: OptionKey, value: string) => options.set(key, value as never, null).then(() => undefined);
  await set('SMTPServer', smtp.host);
  await set('SMTPPort', String(smtp.port));
  await set('SMTPFrom', 'noreply@switchyard.test');
  await set('TurnstileSecretKey', 'turnstile-secret');
  await set('ServerAddress', 'https://console.example.com/');
  const services: ConsoleServices = {
    orm: db.orm,
    options,
    secrets: PLAINTEXT_BOX,
    relay: null,
    version: 'test',
    startedAt: 0,
    limiter: createRedisRateLimiter(redis, prefix),
    auth: {
      trustProxy: false,
      turnstileVerifyUrl: turnstile.url,
      criticalLimit: { max: 20, windowSeconds: 1200 },
    },
  };
  let affSeq = 0;
  return {
    db,
    services,
    smtp,
    turnstile,
    setOption: set,
    async createUser({ username, password, ...rest }) {
      const em = db.orm.em.fork();
      affSeq += 1;
      const user = em.create(User, {
        username,
        displayName: username,
        passwordHash: password ? await hashPassword(password) : '',
        affCode: `T${affSeq}${username}`.slice(0, 32),
        ...rest,
      } as never) as User;
      await em.flush();
      return user;
    },
    async close() {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(keys);
      await redis.close();
      await smtp.close();
      await turnstile.close();
      await options.close();
      await db.drop();
    },
  };
}
