/**
 * Test helpers for the auth pages' route tests: real PostgreSQL (createTestDatabase), a real OptionService,
 * the SMTP capture fake wired through the SMTP* options and the Turnstile fake, plus a caller that runs a
 * route's loader or action with a real Request and unwraps its answer.
 */
import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import { bootstrapRoot } from '@switchyard/db/bootstrap.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub } from '@switchyard/db/pubsub.ts';
import { PLAINTEXT_BOX } from '@switchyard/db/security/secrets.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { createMemoryRateLimiter } from '#app/domain/security/rate-limit.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { type SmtpCapture, startSmtpCapture } from '#tests/fakes/smtp.ts';
import { startTurnstileFake, type TurnstileFake } from '#tests/fakes/turnstile.ts';

export type AuthTestEnv = {
  db: TestDatabase;
  services: ConsoleServices;
  smtp: SmtpCapture;
  turnstile: TurnstileFake;
  setOption(key: string, value: string): Promise<void>;
  close(): Promise<void>;
};

export async function createAuthTestEnv(suffix: string): Promise<AuthTestEnv> {
  const db = await createTestDatabase({ suffix });
  const options = new OptionService({
    orm: db.orm,
    pubsub: createMemoryPubSub(),
    channel: `switchyard:options:test:${suffix}:${process.pid}`,
  });
  await options.load();
  await bootstrapRoot(db.orm);
  const smtp = await startSmtpCapture();
  const turnstile = await startTurnstileFake();
  const set = options.set.bind(options) as (key: string, value: string, actor: number) => Promise<unknown>;
  await set('SMTPServer', smtp.host, 1);
  await set('SMTPPort', String(smtp.port), 1);
  await set('SMTPFrom', 'noreply@switchyard.test', 1);
  await set('TurnstileSecretKey', 'secret', 1);
  await set('TurnstileSiteKey', 'site-key', 1);
  const services: ConsoleServices = {
    orm: db.orm,
    options,
    secrets: PLAINTEXT_BOX,
    relay: null,
    version: 'test',
    startedAt: 0,
    limiter: createMemoryRateLimiter(),
    auth: {
      trustProxy: false,
      turnstileVerifyUrl: turnstile.url,
      criticalLimit: { max: 10_000, windowSeconds: 60 },
    },
  };
  return {
    db,
    services,
    smtp,
    turnstile,
    async setOption(key, value) {
      await set(key, value, 1);
    },
    async close() {
      await smtp.close();
      await turnstile.close();
      await db.drop();
    },
  };
}

export type RouteAnswer<T> = { status: number; headers: Headers; data: T | null; location: string | null };

/** Unwraps what a loader/action returned: a Response (redirect) or `data()` (single fetch DataWithResponseInit). */
export async function unwrap<T>(value: unknown): Promise<RouteAnswer<T>> {
  if (value instanceof Response) {
    const location = value.headers.get('Location');
    const text = location ? '' : await value.text();
    return {
      status: value.status,
      headers: value.headers,
      data: text ? (JSON.parse(text) as T) : null,
      location,
    };
  }
  const v = value as { type?: string; data?: unknown; init?: ResponseInit | null };
  if (v && v.type === 'DataWithResponseInit') {
    return {
      status: v.init?.status ?? 200,
      headers: new Headers(v.init?.headers),
      data: v.data as T,
      location: null,
    };
  }
  return { status: 200, headers: new Headers(), data: value as T, location: null };
}

export function formRequest(
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Request {
  return new Request(url, {
    method: 'POST',
    body: new URLSearchParams(fields),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
  });
}

export async function callAction<T>(
  action: (args: ActionFunctionArgs) => unknown,
  request: Request,
  services: ConsoleServices,
): Promise<RouteAnswer<T>> {
  return unwrap<T>(await action({ request, context: { services }, params: {} } as ActionFunctionArgs));
}

export async function callLoader<T>(
  loader: (args: LoaderFunctionArgs) => unknown,
  request: Request,
  services: ConsoleServices,
): Promise<RouteAnswer<T>> {
  return unwrap<T>(await loader({ request, context: { services }, params: {} } as LoaderFunctionArgs));
}

/** The `name=value` pairs of Set-Cookie headers, as a Cookie header. */
export function cookiesOf(headers: Headers): string {
  return headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}
