/**
 * The README's first quick-start command: `npm start` with no configuration runs the whole product with an
 * embedded PostgreSQL and the in-process relay store, creates the root account exactly once across restarts,
 * answers gRPC health on both processes, serves the relay paths through the console's origin, and stops
 * cleanly on Ctrl-C (SIGINT). It runs as `NODE_ENV=production npm start` does (issue 23 item 9): the built
 * console in production mode, a page and /api/status answered. (The install step that NODE_ENV=production broke
 * is covered by scripts/ensure.test.ts.)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { checkHealth } from '../../relay-service/src/grpc/health.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

type Launch = { child: ChildProcess; output: () => string; exited: Promise<number | null> };

function launch(env: Record<string, string>): Launch {
  const clean = { ...process.env };
  delete clean.DATABASE_URL;
  delete clean.REDIS_URL;
  const child = spawn(process.execPath, ['scripts/start.ts'], {
    cwd: root,
    // The README's `NODE_ENV=production npm start`, not vitest's NODE_ENV=test.
    env: { ...clean, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c) => (output += c));
  child.stderr?.on('data', (c) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function waitUntilUp(url: string, l: Launch, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (l.child.exitCode !== null) throw new Error(`launcher exited early:\n${l.output()}`);
    // The launcher prints "ready" once both processes answer gRPC health; the relay may start after the console.
    if (!l.output().includes('[switchyard] ready')) {
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    try {
      const res = await fetch(`${url}/api/status`);
      if (res.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`product did not come up in time:\n${l.output()}`);
}

async function rootAccounts(pgPort: number): Promise<{ role: number; count: number }> {
  const client = new pg.Client({
    connectionString: `postgres://postgres:switchyard@127.0.0.1:${pgPort}/switchyard`,
  });
  await client.connect();
  try {
    const r = await client.query<{ role: number; n: string }>(
      "select max(role) as role, count(*) as n from users where username = 'root'",
    );
    return { role: Number(r.rows[0]?.role), count: Number(r.rows[0]?.n) };
  } finally {
    await client.end();
  }
}

describe('npm start with no configuration', () => {
  // The embedded cluster runs as the unprivileged `postgres` user, which must be able to enter the directory.
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sy-launch-'));
  chmodSync(dataDir, 0o755);
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('runs both processes on an embedded database, bootstraps root once, and stops cleanly', async () => {
    const ports = {
      PORT: await freePort(),
      RELAY_PORT: await freePort(),
      CONSOLE_GRPC_PORT: await freePort(),
      RELAY_GRPC_PORT: await freePort(),
      EMBEDDED_PG_PORT: await freePort(),
    };
    const env = {
      SWITCHYARD_DATA_DIR: dataDir,
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    };
    const url = `http://127.0.0.1:${ports.PORT}`;

    for (const round of [1, 2]) {
      const l = launch(env);
      try {
        await waitUntilUp(url, l);
        const status = (await (await fetch(`${url}/api/status`)).json()) as { success: boolean };
        expect(status.success).toBe(true);
        // A page of the built console, rendered in production mode.
        const page = await fetch(`${url}/login`);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toMatch(/text\/html/);
        expect(await page.text()).toMatch(/<html[^>]*>/);

        expect(await checkHealth(`127.0.0.1:${ports.CONSOLE_GRPC_PORT}`)).toBe('SERVING');
        expect(await checkHealth(`127.0.0.1:${ports.RELAY_GRPC_PORT}`)).toBe('SERVING');

        // Relay paths reach the relay through the console's origin (OpenAI-shaped 404 for an unknown path).
        const relayed = await fetch(`${url}/v1/no-such-endpoint`);
        expect(relayed.status).toBe(404);
        expect(((await relayed.json()) as { error: { type: string } }).error.type).toBe(
          'invalid_request_error',
        );

        // Root exists exactly once, also after the second start on the same data directory.
        expect(await rootAccounts(ports.EMBEDDED_PG_PORT)).toEqual({ role: 100, count: 1 });
      } finally {
        l.child.kill('SIGINT');
      }
      const code = await Promise.race([l.exited, new Promise((r) => setTimeout(() => r('timeout'), 30_000))]);
      expect(code, `round ${round} shutdown:\n${l.output()}`).toBe(0);
      // Everything it started is gone: the ports are free again.
      await expect(fetch(`${url}/api/status`)).rejects.toThrow();
    }
  }, 240_000);
});
