/**
 * Child processes for the multi-process relay tests: a private redis-server, the Billing process and relay
 * processes (`node relay-service/src/main.ts`), each restartable on the same port and SIGKILLable. Every child
 * is registered so `killAll` (afterAll, and process exit as a last resort) leaves nothing running.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const RELAY_MAIN = `${ROOT}relay-service/src/main.ts`;
export const BILLING_MAIN = fileURLToPath(new URL('./billing-process.ts', import.meta.url));
export const REDIS_SERVER = '/usr/bin/redis-server';

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/** A port the OS just handed out (closed again; the child binds it right after). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Thrown by a `check` to stop polling at once. */
export class GiveUp extends Error {}

/** Polls `check` until it returns a truthy value or the deadline passes (then throws with `what`). */
export async function until<T>(what: string, check: () => Promise<T>, timeoutMs = 15_000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      if (err instanceof GiveUp) throw err;
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await sleep(everyMs);
  }
}

export class Proc {
  readonly name: string;
  readonly #cmd: string;
  readonly #args: string[];
  readonly #env: Record<string, string>;
  child: ChildProcess | null = null;
  /** Recent output (both streams), for failure messages. */
  output = '';
  #exited: Promise<void> = Promise.resolve();

  constructor(name: string, cmd: string, args: string[], env: Record<string, string> = {}) {
    this.name = name;
    this.#cmd = cmd;
    this.#args = args;
    this.#env = env;
  }

  start(): void {
    if (this.child) throw new Error(`${this.name} is already running`);
    this.output = '';
    const child = spawn(this.#cmd, this.#args, {
      cwd: ROOT,
      // Only what a process needs from ours: variables set in the test runner (TRUST_PROXY, NODE_ENV, ...) would
      // otherwise reach the relay's configuration.
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...this.#env } as Record<
        string,
        string
      > as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (b: Buffer) => {
      this.output = (this.output + b.toString()).slice(-20_000);
      if (process.env.CLUSTER_LOG) process.stderr.write(`[${this.name}] ${b}`);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    live.add(child);
    this.child = child;
    this.#exited = new Promise((resolve) => {
      child.once('exit', () => {
        live.delete(child);
        if (this.child === child) this.child = null;
        resolve();
      });
    });
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** Sends `signal` and waits for the exit (SIGKILL after `graceMs` if it lingers). */
  async kill(signal: NodeJS.Signals = 'SIGKILL', graceMs = 5_000): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.#exited;
    clearTimeout(timer);
  }

  /** Waits for `check`, failing early (with the child's output) when the child exits. */
  async waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 45_000): Promise<void> {
    await until(
      `${this.name} ${what}`,
      async () => {
        if (!this.child) throw new GiveUp(`${this.name} exited:\n${this.output}`);
        return check();
      },
      timeoutMs,
    );
  }
}

/** One raw RESP PING; true on +PONG. */
export function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.once('error', () => done(false));
    s.once('data', (b) => done(b.toString().startsWith('+PONG')));
    s.connect(port, '127.0.0.1', () => s.write('PING\r\n'));
  });
}

export function redisProc(port: number): Proc {
  return new Proc(`redis:${port}`, REDIS_SERVER, [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
}

export async function startRedis(p: Proc, port: number): Promise<void> {
  p.start();
  await p.waitFor('answering PING', () => redisPing(port));
}

/** The service secret the cluster's Billing and relays share (ADR 034). */
export const CLUSTER_INTERNAL_SECRET = 'cluster-internal-secret-0123456789abcdef';

export function billingProc(port: number, databaseUrl: string): Proc {
  return new Proc('billing', process.execPath, [BILLING_MAIN], {
    INTERNAL_API_SECRET: CLUSTER_INTERNAL_SECRET,
    DATABASE_URL: databaseUrl,
    BILLING_PORT: String(port),
  });
}

export async function startBilling(p: Proc): Promise<void> {
  p.start();
  await p.waitFor('serving', async () => p.output.includes('BILLING_READY'));
}

export function relayProc(name: string, env: Record<string, string>): Proc {
  return new Proc(name, process.execPath, [RELAY_MAIN], {
    LOG_LEVEL: 'warn',
    INTERNAL_API_SECRET: CLUSTER_INTERNAL_SECRET,
    ...env,
  });
}

/** Starts a relay and waits until /readyz answers 200 (store reachable, pipeline loaded). */
export async function startRelayProc(p: Proc, httpUrl: string): Promise<void> {
  p.start();
  await p.waitFor('ready', async () => (await fetch(`${httpUrl}/readyz`)).status === 200);
}

export async function killAll(procs: readonly Proc[]): Promise<void> {
  await Promise.all(procs.map((p) => p.kill('SIGKILL').catch(() => {})));
}
