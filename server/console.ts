/**
 * The console process (ARCHITECTURE.md §1): Remix pages and the /api JSON contract over HTTP, the Billing gRPC
 * service, option cache with cross-process invalidation, and the relay paths forwarded for a single origin.
 */
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getRequestListener, serve } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { createRequestHandler, type ServerBuild } from '@remix-run/node';
import { bootstrapRoot } from '@switchyard/db/bootstrap.ts';
import { migrateUp } from '@switchyard/db/migrate.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { initOrm } from '@switchyard/db/orm.ts';
import { createPgPubSub, createRedisPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import { assertSecretsReadable, createSecretBox } from '@switchyard/db/security/secrets.ts';
import { grpcSecurityFrom } from '@switchyard/relay/grpc/security.ts';
import { Hono } from 'hono';
import { createClient } from 'redis';
import { authTFor } from '#app/domain/auth/i18n.server.ts';
import { schedulePruning } from '#app/domain/billing/ledger-retention.server.ts';
import { scheduleQuotaDataJob } from '#app/domain/dashboard/reconcile.server.ts';
import { scheduleNotificationSweep } from '#app/domain/notify/outbox.server.ts';
import { createQuotaWarningQueue, deliverQuotaWarning } from '#app/domain/notify/quota-warning.server.ts';
import { scheduleOrderSweep } from '#app/domain/payments/orders.server.ts';
import {
  CLIENT_IP_HEADER,
  createMemoryRateLimiter,
  createRedisRateLimiter,
  type RateLimiter,
} from '#app/domain/security/rate-limit.server.ts';
import { createRelayClient } from '#app/grpc/relay-client.server.ts';
import { startConsoleGrpc } from '#app/grpc/server.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { apiContract } from './api-contract.ts';
import { consoleBodyLimit } from './body-limit.ts';
import { compression } from './compression.ts';
import type { ConsoleConfig } from './config.ts';
import { crossOriginGuard } from './csrf.ts';
import { pageInputGuard } from './page-input.ts';
import { createRelayProxy, createRelayUpgradeProxy, isRelayPath } from './relay-proxy.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export type RunningConsole = {
  url: string;
  grpcAddress: string;
  services: ConsoleServices;
  stop(): Promise<void>;
};

async function readVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { version: string };
  return process.env.SWITCHYARD_VERSION ?? `v${pkg.version}`;
}

/**
 * Passes the socket's address to the app in CLIENT_IP_HEADER (clientIp() reads it), after removing any value
 * a client sent under that name.
 */
export function withClientIp(request: Request, remoteAddress: string | undefined): Request {
  const address = (remoteAddress ?? '').replace(/^::ffff:/, '');
  try {
    request.headers.delete(CLIENT_IP_HEADER);
    if (address) request.headers.set(CLIENT_IP_HEADER, address);
    return request;
  } catch {
    const headers = new Headers(request.headers);
    headers.delete(CLIENT_IP_HEADER);
    if (address) headers.set(CLIENT_IP_HEADER, address);
    return new Request(request, { headers });
  }
}

export async function startConsole(
  config: ConsoleConfig,
  opts: { dev?: boolean } = {},
): Promise<RunningConsole> {
  const log = (msg: string) => console.log(`[console] ${msg}`);
  const secrets = await createSecretBox({ key: config.SECRETS_KEY, previous: config.SECRETS_KEY_PREVIOUS });
  // Every gRPC call both ways carries the service secret (and uses mutual TLS when configured; ADR 034).
  const grpcSecurity = grpcSecurityFrom(config);
  const orm = await initOrm(config.DATABASE_URL, { poolMax: config.DATABASE_POOL_MAX });
  if (config.MIGRATE_ON_START) {
    await migrateUp(orm);
    await bootstrapRoot(orm);
  }
  // Refuse to start when stored secrets are sealed with a key this process does not have (ADR 019).
  try {
    await assertSecretsReadable(
      async (sql, params) => orm.em.getConnection().execute(sql, params ?? [], 'all'),
      secrets,
    );
  } catch (err) {
    await orm.close();
    throw err;
  }

  // Option changes reach every console and relay as they are made: over Redis when there is one, else over
  // PostgreSQL's LISTEN/NOTIFY on the same database (ADR 020).
  let pubsub: PubSub;
  if (config.REDIS_URL) {
    pubsub = await createRedisPubSub(config.REDIS_URL);
  } else {
    pubsub = await createPgPubSub(config.DATABASE_URL);
    log('REDIS_URL is not set: option changes are announced over PostgreSQL LISTEN/NOTIFY');
  }
  const options = new OptionService({ orm, pubsub, secrets });
  await options.load();

  // Critical-endpoint limits (login, register, e-mail code, reset, OAuth callbacks) and the login back-off
  // per account: shared through Redis when there is one, so every replica counts the same client and account.
  let limiter: RateLimiter;
  let limiterRedis: ReturnType<typeof createClient> | null = null;
  if (config.REDIS_URL) {
    limiterRedis = createClient({ url: config.REDIS_URL });
    limiterRedis.on('error', (err: unknown) => console.error('[console] redis (limiter) error', err));
    await limiterRedis.connect();
    limiter = createRedisRateLimiter(limiterRedis, 'switchyard:');
  } else {
    limiter = createMemoryRateLimiter();
  }

  const relay = createRelayClient(config.RELAY_GRPC_URL, {
    internalSecret: grpcSecurity.secret,
    tls: grpcSecurity.tls,
  });
  const services: ConsoleServices = {
    orm,
    options,
    secrets,
    relay,
    version: await readVersion(),
    startedAt: Math.floor(Date.now() / 1000),
    releasesUrl: config.RELEASES_URL,
    limiter,
    payments: {
      alipayGateway: config.ALIPAY_GATEWAY_URL,
      wechatPayBase: config.WECHATPAY_API_URL,
      orderTimeoutSeconds: config.ORDER_TIMEOUT,
    },
    auth: {
      trustProxy: config.TRUST_PROXY,
      turnstileVerifyUrl: config.TURNSTILE_VERIFY_URL,
      criticalLimit: { max: config.CRITICAL_RATE_LIMIT, windowSeconds: config.CRITICAL_RATE_LIMIT_DURATION },
      loginBackoff: { failures: config.LOGIN_BACKOFF_FAILURES, maxSeconds: config.LOGIN_BACKOFF_MAX },
      sessionSecret: config.SESSION_SECRET,
    },
  };

  // Quota warnings go out after Billing commits (ADR 022): mail through the SMTP options. Billing wrote each one
  // into notification_outbox; what is not delivered here (a crash, a failure) the sweeper retries (ADR 028).
  const quotaWarnings = createQuotaWarningQueue({ options, secrets }, { em: () => orm.em.fork() });
  const notificationSweep = scheduleNotificationSweep(
    () => orm.em.fork(),
    (w) => deliverQuotaWarning({ options, secrets }, w),
    { log: (msg, detail) => console.warn(`[notify] ${msg}`, detail ?? '') },
  );
  const grpc = await startConsoleGrpc({
    host: config.CONSOLE_GRPC_HOST,
    port: config.CONSOLE_GRPC_PORT,
    security: grpcSecurity,
    billing: { em: () => orm.em.fork(), options, quotaWarnings: (w) => quotaWarnings.push(w) },
  });

  // Pending orders close after ORDER_TIMEOUT (at the gateway first); card codes whose mail failed go again.
  const stopOrderSweep = scheduleOrderSweep(() => ({
    em: orm.em.fork(),
    options,
    t: authTFor(),
    payments: services.payments,
    relay,
    mail: { options },
  }));

  const pruning = schedulePruning(() => orm.em.fork(), {
    retentionDays: config.USAGE_LEDGER_RETENTION_DAYS,
    log,
  });

  // The data dashboard's quota_data reconciliation, every DataExportInterval minutes (ADR 026).
  const quotaData = scheduleQuotaDataJob({ em: () => orm.em.fork(), options, log });

  // Remix: the built server bundle in production; Vite's dev server (HMR) with --dev.
  let build: ServerBuild | (() => Promise<ServerBuild>);
  let vite: import('vite').ViteDevServer | undefined;
  if (opts.dev) {
    const { createServer } = await import('vite');
    // cors: false: Vite would answer preflights itself; the relay paths answer them as in production.
    vite = await createServer({ root, server: { middlewareMode: true, cors: false } });
    const devServer = vite;
    build = () => devServer.ssrLoadModule('virtual:remix/server-build') as Promise<ServerBuild>;
  } else {
    const buildPath = path.join(root, 'build/server/index.js');
    build = (await import(buildPath)) as ServerBuild;
  }
  const remix = createRequestHandler(build, opts.dev ? 'development' : 'production');
  const proxy = createRelayProxy(config.RELAY_URL, {
    trustProxy: config.TRUST_PROXY,
    secret: config.INTERNAL_API_SECRET,
    maxBodyBytes: config.RELAY_MAX_BODY_BYTES,
  });

  const app = new Hono<{ Bindings: { incoming: import('node:http').IncomingMessage } }>();
  app.use('*', async (c, next) => {
    const { pathname } = new URL(c.req.url);
    if (isRelayPath(pathname)) return proxy(c.req.raw, c.env.incoming.socket.remoteAddress);
    await next();
  });
  // Pages, JS, CSS and JSON go out brotli/gzip-encoded; event streams never (the relay paths returned above).
  app.use('*', compression());
  // Any TRUST_PROXY setting but false says a proxy in front sets X-Forwarded-Host. A browser cannot forge that
  // header on a cross-origin request (custom headers need a CORS preflight, which the console never allows).
  const behindProxy = config.TRUST_PROXY !== false && config.TRUST_PROXY !== 0;
  app.use('*', crossOriginGuard({ trustedOrigins: config.TRUSTED_ORIGINS, trustProxy: behindProxy }));
  app.use('*', consoleBodyLimit(config.MAX_BODY_BYTES));
  // Page forms: NUL anywhere or a line break in redirectTo/intent is a 400 naming the field (ADR 038).
  app.use('*', pageInputGuard());
  // Under /api: OPTIONS answered here, Remix's own refusals (a method without a handler) in the envelope.
  app.use('*', apiContract());
  if (!opts.dev) {
    const clientRoot = path.relative(process.cwd(), path.join(root, 'build/client'));
    app.use(
      '/assets/*',
      serveStatic({
        root: clientRoot,
        onFound: (_p, c) => {
          c.header('Cache-Control', 'public, max-age=31536000, immutable');
        },
      }),
    );
    app.use('*', serveStatic({ root: clientRoot }));
  }
  app.all('*', (c) => remix(withClientIp(c.req.raw, c.env.incoming?.socket.remoteAddress), { services }));

  const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST });
  // WebSocket upgrades on the relay paths (/v1/realtime) are forwarded as well; others are not the console's.
  const upgradeProxy = createRelayUpgradeProxy(config.RELAY_URL, {
    trustProxy: config.TRUST_PROXY,
    secret: config.INTERNAL_API_SECRET,
  });
  server.on(
    'upgrade',
    (req: import('node:http').IncomingMessage, socket: import('node:stream').Duplex, head) => {
      if (!upgradeProxy(req, socket, head as Buffer) && server.listenerCount('upgrade') === 1)
        socket.destroy();
    },
  );
  if (vite) {
    // In dev, Vite's middlewares (HMR, module transforms) run first; everything else reaches the app.
    const devVite = vite;
    const listener = getRequestListener(app.fetch);
    server.removeAllListeners('request');
    server.on('request', (req, res) => devVite.middlewares(req, res, () => listener(req, res)));
  }
  await new Promise<void>((resolve) =>
    server.listening ? resolve() : server.once('listening', () => resolve()),
  );
  const addr = server.address() as AddressInfo;
  const url = `http://${config.HOST}:${addr.port}`;
  log(`HTTP on ${url}, gRPC on ${grpc.address}`);

  return {
    url,
    grpcAddress: grpc.address,
    services,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive sockets would hold close() open.
        (server as import('node:http').Server).closeIdleConnections?.();
      });
      await grpc.stop();
      // Quota warnings already queued get a few seconds to go out; what is left then stays in the outbox for the
      // next sweep (ADR 028).
      await Promise.race([
        quotaWarnings.idle(),
        new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref()),
      ]);
      await pruning.stop();
      await notificationSweep.stop();
      await quotaData.stop();
      stopOrderSweep();
      relay.close();
      await vite?.close();
      await pubsub.close();
      await limiterRedis?.close();
      await orm.close();
    },
  };
}
