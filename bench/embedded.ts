/**
 * `node bench/embedded.ts [--seconds=8] [--concurrency=32] [--serial=2000]`: the relay in the embedded mode
 * (`npm start` without REDIS_URL: in-process store, its outbox kept on disk in PostgreSQL, ADR 014), billing every
 * call through the console's Billing gRPC service, against the bench fake. Prints one JSON line: c=1 latency,
 * closed-loop throughput, the relay's CPU per request and the PostgreSQL CPU per request (every server process on
 * the machine, so other work on a shared machine shows there too).
 *
 * It reuses bench/lib (the fake, the console side, the relay process and the load client) and is not part of
 * `npm run bench`, whose Switchyard target is the Redis mode. Run it on two commits to see what a change costs.
 */

import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { cpuMicros, postgresCpu, serialLatency, type Target, throughput } from './lib/client.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
/** The service secret the bench's console (Billing) and relay share, as `npm start` makes one (ADR 034). */
const internalSecret = process.env.INTERNAL_API_SECRET || randomBytes(32).toString('base64url');
const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const seconds = arg('seconds', 8);
const concurrency = arg('concurrency', 32);
const serial = arg('serial', 2000);

const children: ChildProcess[] = [];
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

async function freePort(): Promise<number> {
  const srv = createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

function child<T>(
  file: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<[ChildProcess, T]> {
  const { REDIS_URL: _, ...inherited } = process.env;
  const c = fork(path.join(here, 'lib', file), args, {
    cwd: root,
    env: { ...inherited, NODE_ENV: 'production', INTERNAL_API_SECRET: internalSecret, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(c);
  return new Promise((resolve, reject) => {
    const onMsg = (m: T & { ready?: boolean }) => {
      if (!m.ready) return;
      c.off('message', onMsg);
      resolve([c, m]);
    };
    c.on('message', onMsg);
    c.once('exit', (code) => reject(new Error(`${file} exited with ${code} before it was ready`)));
  });
}

const fakePort = await freePort();
await child('fake.ts', [String(fakePort)]);
const [consoleProc, con] = await child<{ databaseUrl: string; billingAddress: string; key: string }>(
  'console.ts',
  [`http://127.0.0.1:${fakePort}`],
);
const [relay, info] = await child<{ url: string; store: string }>('relay.ts', [], {
  RELAY_HOST: '127.0.0.1',
  RELAY_PORT: String(await freePort()),
  RELAY_GRPC_PORT: '0',
  LOG_LEVEL: 'warn',
  DATABASE_URL: con.databaseUrl,
  BILLING_GRPC_URL: con.billingAddress,
});
if (info.store !== 'memory') throw new Error(`relay store is ${info.store}, expected memory`);
const target: Target = {
  name: 'switchyard-embedded',
  origin: info.url,
  path: '/v1/chat/completions',
  headers: { authorization: `Bearer sk-${con.key}` },
  pid: relay.pid as number,
};

const lat = await serialLatency(target, serial);
const pg0 = postgresCpu();
const relay0 = cpuMicros(target.pid);
const tp = await throughput(target, concurrency, seconds, 2);
let pgUs = 0;
for (const [pid, us] of postgresCpu()) pgUs += us - (pg0.get(pid) ?? 0);
// The throughput window is `seconds` long after a 2 s warm-up; the CPU samples here span both, so scale to
// requests over the whole span by the measured rate.
const spanRequests = tp.rps * (seconds + 2);
console.log(
  JSON.stringify({
    serial: { n: lat.n, errors: lat.errors, p50Ms: lat.p50, p99Ms: lat.p99 },
    throughput: {
      concurrency,
      rps: Math.round(tp.rps),
      errors: tp.errors,
      p50Ms: tp.p50,
      p99Ms: tp.p99,
      relayCpuPerReqUs: Math.round(tp.targetCpuPerReqUs),
      relayCpuPerReqUsWithWarmup: Math.round((cpuMicros(target.pid) - relay0) / spanRequests),
      postgresCpuPerReqUs: Math.round(pgUs / spanRequests),
    },
  }),
);

relay.send({ op: 'stop' });
await once(relay, 'exit');
consoleProc.send({ op: 'close' });
await once(consoleProc, 'exit');
process.exit(0);
