/**
 * Console routes against a relay stack (relay-stack.ts): the services a route sees (the stack's database and
 * options, and a relay client), signed-in users with a real session row, and JSON requests the way the browser
 * sends them (session cookie + New-Api-User, or a system access token).
 */
import { Session } from '@switchyard/db/entities/session.ts';
import { accessTokenHash, createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { createMemoryRateLimiter } from '#app/domain/security/rate-limit.server.ts';
import type { RelayClient } from '#app/grpc/relay-client.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { loadConsoleConfig } from '../../server/config.ts';
import { type RunningConsole, startConsole } from '../../server/console.ts';
import { freePort } from './cluster/procs.ts';
import { type Stack, seedUser } from './relay-stack.ts';

export type Who = { id: number; username: string; session: string; accessToken?: string };

export function consoleServices(stack: Stack, relay: RelayClient | null): ConsoleServices {
  return {
    orm: stack.orm,
    options: stack.options,
    secrets: stack.secrets,
    relay,
    version: 'test',
    startedAt: 0,
    limiter: createMemoryRateLimiter(),
    auth: { trustProxy: false, turnstileVerifyUrl: '', criticalLimit: { max: 1000, windowSeconds: 60 } },
  };
}

/** A user with a live console session (and a system access token when asked). */
export async function signedInUser(
  stack: Stack,
  fields: { quota: number; role?: number; group?: string; accessToken?: boolean },
): Promise<Who> {
  const user = await seedUser(stack, fields);
  const em = stack.orm.em.fork();
  const session = createSessionToken();
  em.create(Session, {
    id: await sha256Hex(session),
    user: user.id,
    expiresAt: new Date(Date.now() + 3_600_000),
  } as never);
  await em.flush();
  let accessToken: string | undefined;
  if (fields.accessToken) {
    accessToken = `at${crypto.randomUUID().replaceAll('-', '')}`;
    await stack.sql(`update users set access_token = ? where id = ?`, [
      await accessTokenHash(accessToken),
      user.id,
    ]);
  }
  return { ...user, session, accessToken };
}

/** A JSON request as the console's browser code sends it; `via: 'access_token'` uses the system token only. */
export function apiRequest(
  who: Who | null,
  path: string,
  init: { method?: string; body?: unknown; via?: 'session' | 'access_token'; signal?: AbortSignal } = {},
): Request {
  const headers = new Headers({ 'Accept-Language': 'en' });
  if (who && (init.via ?? 'session') === 'session') {
    headers.set('Cookie', `sy_session=${who.session}`);
    headers.set('New-Api-User', String(who.id));
  } else if (who) headers.set('Authorization', `Bearer ${who.accessToken}`);
  if (init.body !== undefined) headers.set('Content-Type', 'application/json');
  return new Request(`http://localhost${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: init.signal,
  });
}

type RouteFn = (args: never) => unknown;

/** Calls a route's loader or action directly with the given services. */
export function callRoute(
  fn: RouteFn,
  services: ConsoleServices,
  request: Request,
  params: Record<string, string> = {},
): Promise<Response> {
  return Promise.resolve(fn({ request, context: { services }, params } as never) as Response);
}

// biome-ignore lint/suspicious/noExplicitAny: envelope payloads are checked field by field in the tests
export type EnvelopeBody = { success: boolean; message: string; data: any };

export async function envelopeOf(res: Response): Promise<{ status: number; body: EnvelopeBody }> {
  return { status: res.status, body: (await res.json()) as EnvelopeBody };
}

/**
 * The real console HTTP server (server/console.ts; Remix through Vite's dev server, so no build is needed) in
 * front of the stack's first relay, as `npm start` runs it: the relay paths are forwarded, `/api` and pages
 * served. `env` adds or overrides console variables.
 */
export async function startForwardingConsole(
  stack: Stack,
  env: Record<string, string> = {},
): Promise<RunningConsole> {
  const relay = stack.relays[0]!;
  return startConsole(
    loadConsoleConfig({
      NODE_ENV: 'test',
      DATABASE_URL: stack.db.url,
      PORT: String(await freePort()),
      CONSOLE_GRPC_PORT: '0',
      RELAY_URL: relay.httpUrl,
      RELAY_GRPC_URL: relay.grpcAddress,
      INTERNAL_API_SECRET: stack.internalSecret,
      MIGRATE_ON_START: 'false',
      ...env,
    }),
    { dev: true },
  );
}
