/**
 * Starts the product under test once for the e2e run:
 * - E2E_BASE_URL set: use that running product (nothing is started).
 * - otherwise: build the console if needed, create a fresh database, run `node scripts/start.ts` on free ports
 *   and wait until GET /api/status answers success. The base URL reaches the tests via `inject('baseURL')`.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startAlipayFake } from '../fakes/alipay.ts';
import { startOAuthFake } from '../fakes/oauth.ts';
import { startFakeOpenAI } from '../fakes/openai-upstream.ts';
import { startTurnstileFake } from '../fakes/turnstile.ts';
import { startWeChatPayFake } from '../fakes/wechatpay.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    baseURL: string;
    /** The product's database (tests may read rows or change options through OptionService + redisURL). */
    databaseURL: string;
    redisURL: string;
    /** Turnstile siteverify fake the product uses (accepts tokens starting with `pass`). */
    turnstileURL: string;
    /** OAuth2 fake playing GitHub and LinuxDO (tests/fakes/oauth.ts); its authorize URL is `${oauthURL}/authorize`. */
    oauthURL: string;
    /** Fake OpenAI upstream (tests/fakes/openai-upstream.ts) that channels in e2e journeys point at. */
    openaiURL: string;
    /** Alipay gateway fake (tests/fakes/alipay.ts) the product pays through: its keys and control URL. */
    alipay: { controlUrl: string; appId: string; merchantPrivateKey: string; platformPublicKey: string };
    /** WeChat Pay v3 fake (tests/fakes/wechatpay.ts): the option values the product needs, and its control URL. */
    wechatPay: { controlUrl: string; options: Record<string, string> };
  }
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A free TCP port below the ephemeral range (see toolchain.md: TIME-WAIT collisions above 32768). */
async function freePort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port found');
}

type TestDb = { url: string; drop(): Promise<void> };
type PgClient = { connect(): Promise<void>; query(sql: string): Promise<unknown>; end(): Promise<void> };
type PgModule = { default: { Client: new (config: { connectionString: string }) => PgClient } };

/** `createTestDatabase()` from @switchyard/db/testing.ts when it exists, else a database `sy_e2e` made here. */
async function createDatabase(): Promise<TestDb> {
  const testing = path.join(root, 'db/src/testing.ts');
  if (existsSync(testing)) {
    const mod = (await import(testing)) as { createTestDatabase?: (...args: unknown[]) => Promise<unknown> };
    if (mod.createTestDatabase) {
      const db = (await mod.createTestDatabase()) as
        | string
        | { url?: string; databaseUrl?: string; drop?: () => Promise<void> };
      if (typeof db === 'string') return { url: db, drop: async () => {} };
      const url = db.url ?? db.databaseUrl;
      if (url) return { url, drop: async () => db.drop?.() };
    }
  }
  const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const pg = (await import('pg' as string)) as PgModule;
  const admin = new pg.default.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query('drop database if exists sy_e2e with (force)');
  await admin.query('create database sy_e2e');
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = '/sy_e2e';
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.default.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query('drop database if exists sy_e2e with (force)');
      await c.end();
    },
  };
}

async function waitForStatus(baseURL: string, child: ChildProcess | null, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`scripts/start.ts exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${baseURL}/api/status`);
      const body = (await res.json()) as { success?: boolean };
      if (res.ok && body.success === true) return;
      last = `HTTP ${res.status}`;
    } catch (e) {
      last = String(e);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the product did not answer GET /api/status in time (${last})`);
}

/**
 * The local Redis, in a logical database of its own per TEST_NAMESPACE (1..15; 0 without one): the relay's keys
 * have a fixed prefix, so two e2e products on one machine would otherwise share their scheduler leases (one
 * product's task poller would hold the lease while the other's tasks are never polled) and cached balances.
 */
function e2eRedisUrl(): string {
  const ns = process.env.TEST_NAMESPACE ?? '';
  if (!ns) return 'redis://127.0.0.1:6379';
  let hash = 0;
  for (const c of ns) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
  return `redis://127.0.0.1:6379/${1 + (hash % 15)}`;
}

export default async function setup(project: TestProject) {
  const external = process.env.E2E_BASE_URL;
  if (external) {
    const baseURL = external.replace(/\/$/, '');
    await waitForStatus(baseURL, null, 30_000);
    project.provide('baseURL', baseURL);
    project.provide('databaseURL', process.env.E2E_DATABASE_URL ?? '');
    project.provide('redisURL', process.env.E2E_REDIS_URL ?? '');
    project.provide('turnstileURL', process.env.E2E_TURNSTILE_URL ?? '');
    project.provide('oauthURL', process.env.E2E_OAUTH_URL ?? '');
    project.provide('openaiURL', process.env.E2E_OPENAI_URL ?? '');
    project.provide('alipay', { controlUrl: '', appId: '', merchantPrivateKey: '', platformPublicKey: '' });
    project.provide('wechatPay', { controlUrl: '', options: {} });
    return;
  }

  if (!existsSync(path.join(root, 'build/server/index.js'))) {
    const built = spawnSync(path.join(root, 'node_modules/.bin/remix'), ['vite:build'], {
      cwd: root,
      stdio: 'inherit',
    });
    if (built.status !== 0) throw new Error('npm run build failed');
  }

  const db = await createDatabase();
  const turnstile = await startTurnstileFake();
  const oauth = await startOAuthFake();
  const openai = await startFakeOpenAI();
  const alipay = await startAlipayFake();
  const wechatPay = await startWeChatPayFake();
  const redisURL = process.env.E2E_REDIS_URL ?? process.env.TEST_REDIS_URL ?? e2eRedisUrl();
  const [port, relayPort, consoleGrpc, relayGrpc] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    PORT: String(port),
    RELAY_PORT: String(relayPort),
    CONSOLE_GRPC_PORT: String(consoleGrpc),
    RELAY_GRPC_PORT: String(relayGrpc),
    DATABASE_URL: db.url,
    REDIS_URL: redisURL,
    TURNSTILE_VERIFY_URL: turnstile.url,
    ALIPAY_GATEWAY_URL: alipay.gatewayUrl,
    WECHATPAY_API_URL: wechatPay.baseUrl,
    // Nothing listens there: the update check answers 'failed to check for updates' as when offline.
    RELEASES_URL: 'http://127.0.0.1:9/releases/latest',
    // Every e2e file signs in from 127.0.0.1; the per-IP limit on critical endpoints (20 per 20 minutes by
    // default) is covered by unit tests, so here it must not throttle the suite.
    CRITICAL_RATE_LIMIT: '100000',
    // A trusted sibling origin for tests/e2e/csrf.e2e.ts (ADR 016).
    TRUSTED_ORIGINS: 'http://trusted.switchyard.test',
    // Drawing and music tasks are polled every 0.5 s instead of new-api's 15 s, so tests/e2e/task-journey.e2e.ts
    // sees the fakes' tasks finish within seconds.
    RELAY_TASK_POLL_INTERVAL_MS: '500',
    ...oauth.env,
  };
  const output: string[] = [];
  // Node 22 from node_modules (conventions.md): the system node (20) cannot run .ts files.
  const localNode = path.join(root, 'node_modules/.bin/node');
  const node = existsSync(localNode) ? localNode : process.execPath;
  const child = spawn(node, ['scripts/start.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 200) output.shift();
    if (process.env.E2E_VERBOSE) process.stderr.write(chunk);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  const baseURL = `http://127.0.0.1:${port}`;
  try {
    await waitForStatus(baseURL, child, 120_000);
  } catch (error) {
    child.kill('SIGTERM');
    await oauth.close().catch(() => {});
    await openai.close().catch(() => {});
    await db.drop().catch(() => {});
    throw new Error(`${(error as Error).message}\n--- product output ---\n${output.join('')}`);
  }
  project.provide('baseURL', baseURL);
  project.provide('databaseURL', db.url);
  project.provide('redisURL', redisURL);
  project.provide('turnstileURL', turnstile.url);
  project.provide('oauthURL', oauth.issuer);
  project.provide('openaiURL', openai.url);
  project.provide('alipay', {
    controlUrl: alipay.controlUrl,
    appId: alipay.appId,
    merchantPrivateKey: alipay.merchant.privateKey,
    platformPublicKey: alipay.platform.publicKey,
  });
  project.provide('wechatPay', {
    controlUrl: wechatPay.controlUrl,
    options: {
      WeChatPayAppId: wechatPay.appId,
      WeChatPayMchId: wechatPay.mchId,
      WeChatPayCertSerial: wechatPay.certSerial,
      WeChatPayApiV3Key: wechatPay.apiV3Key,
      WeChatPayApiCertKey: wechatPay.merchant.privateKey,
      WeChatPayPublicKey: wechatPay.platform.publicKey,
      WeChatPayPublicKeyId: wechatPay.platformKeyId,
    },
  });

  return async () => {
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
    await turnstile.close();
    await oauth.close();
    await openai.close();
    await alipay.close();
    await wechatPay.close();
    await db.drop().catch((e) => console.error('dropping the e2e database failed:', e));
  };
}
