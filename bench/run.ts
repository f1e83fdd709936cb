/**
 * `npm run bench [-- --quick]`: Switchyard against the direct path, a bare keep-alive proxy floor and the Portkey
 * gateway, in one run, interleaved and repeated (protocol: /work/shared/reference/performance.md §4, layout A,
 * co-located). Writes bench/RESULTS.md and bench/results.json. A benchmark, not a test: nothing here asserts.
 *
 * Processes: fake upstream, floor proxy, console (PostgreSQL + Billing gRPC), Switchyard relay (real Redis,
 * full auth, rate limit, holds, billing), Portkey (installed into bench/peers/portkey on first use), and for the
 * scale scenario a second console (10k users/tokens, 1k channels) with its own relay ("switchyard-10k"). The
 * load client runs here.
 *
 * Flags: --quick; --no-portkey; --no-scale (skip the scale and reload scenario, on by default);
 * --scale-account-ttl-ms=N (the scale relay's account cache TTL, default the product's); --soak[=minutes]
 * (billing soak on the plain stack after everything else, default 10 min); --soak-only[=minutes] (just the soak
 * on a fresh stack; merges into the existing results.json instead of replacing it); --profile;
 * --big-prompt-only (just the big-prompt scenario of issue 13 on a fresh stack; prints, writes nothing).
 */

import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import {
  bigPromptUnderLoad,
  eachKey,
  memoryStreams,
  pollUntil,
  rssMb,
  serialLatency,
  sleep,
  soak,
  streamCpu,
  streamLatency,
  type Target,
  throughput,
} from './lib/client.ts';
import {
  type BillingSnapshot,
  drainBilling,
  type FakeStats,
  type LogReconcile,
  reconcileChecks,
} from './lib/soak.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
/** The service secret the bench's console (Billing) and relay share, as `npm start` makes one (ADR 034). */
const internalSecret = process.env.INTERNAL_API_SECRET || randomBytes(32).toString('base64url');
const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const skipPortkey = argv.includes('--no-portkey');
const soakOnly = argv.some((a) => a === '--soak-only' || a.startsWith('--soak-only='));
const bigPromptOnly = argv.includes('--big-prompt-only');
const soakArg = argv.find((a) => /^--soak(-only)?(=|$)/.test(a));
/** Soak length in minutes, 0 = no soak. Fractions are accepted (a short check of the machinery). */
const soakMinutes = soakArg ? Number(soakArg.split('=')[1] ?? 10) : 0;
if (!(soakMinutes >= 0) || (soakArg && soakMinutes === 0)) throw new Error(`bad soak length in ${soakArg}`);
const runScale = !soakOnly && !argv.includes('--no-scale');
/**
 * --scale-account-ttl-ms=N: RELAY_ACCOUNT_TTL_MS of the scale relay only (default: the product's, 10 s). A long
 * TTL keeps all 10k accounts cached, which isolates the cost of the bigger tables from the cost of cache misses.
 */
const scaleTtlArg = argv.find((a) => a.startsWith('--scale-account-ttl-ms='))?.split('=')[1];
/** The soak (issue 7 "billing under load"): the sustained rate is the c=64 closed loop; 1 call in 20 streams. */
const SOAK = { concurrency: 64, streamEvery: 20, windowSeconds: 60 };
/**
 * Issue 13 item 1: a 1 MB prompt without spaces next to 200 small calls per second; 2 s of small calls before
 * it and 2 s after the phase it is in flight (at least 1 s).
 */
const BIG_PROMPT = { rate: 200, beforeMs: 2000, afterMs: 2000, promptChars: 1 << 20 };
/** Reload probes: the relay is polled this often until it serves the change. */
const RELOAD = { intervalMs: 5, timeoutMs: 10_000, repeats: 3 };
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

const P = quick
  ? {
      rounds: 3,
      serialN: 300,
      warm: 0.5,
      tputSeconds: 1.5,
      conc: 64,
      streamN: 10,
      cpuSeconds: 1,
      streams: 1000,
    }
  : {
      rounds: 5,
      serialN: 2000,
      warm: 2,
      tputSeconds: 10,
      conc: 64,
      streamN: 60,
      cpuSeconds: 5,
      streams: 1000,
    };
// Sequential streams: frames and gap (the buffering check needs gaps well above scheduling noise).
const STREAM_SHAPE = { frames: 6, gapMs: 20 };
// Memory run: slow streams that stay open while RSS is sampled.
const MEM_SHAPE = { frames: 40, gapMs: 1000 };
const profile = process.argv.includes('--profile');
const profileDir = path.join(os.tmpdir(), 'switchyard-bench-profiles');

const log = (msg: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const children: ChildProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Forks a bench child and waits for its {ready} message. */
function child<T>(
  file: string,
  args: string[],
  env: Record<string, string> = {},
  execArgv: string[] = [],
): Promise<[ChildProcess, T]> {
  const c = fork(path.join(here, 'lib', file), args, {
    cwd: root,
    execArgv,
    env: { ...process.env, NODE_ENV: 'production', INTERNAL_API_SECRET: internalSecret, ...env },
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

function request<T>(c: ChildProcess, msg: unknown, key: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: Record<string, unknown>) => {
      if (!(key in m)) return;
      c.off('message', on);
      resolve(m[key] as T);
    };
    c.on('message', on);
    c.send(msg as object);
  });
}

async function startPortkey(): Promise<{ proc: ChildProcess; port: number; version: string }> {
  const dir = path.join(here, 'peers', 'portkey');
  const entry = path.join(dir, 'node_modules/@portkey-ai/gateway/build/start-server.js');
  if (!existsSync(entry)) {
    log('installing the Portkey peer into bench/peers/portkey (npm install --prefix)');
    execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund'], { stdio: 'inherit' });
  }
  const version = JSON.parse(
    readFileSync(path.join(dir, 'node_modules/@portkey-ai/gateway/package.json'), 'utf8'),
  ).version;
  const nodeServer = JSON.parse(
    readFileSync(path.join(dir, 'node_modules/@hono/node-server/package.json'), 'utf8'),
  ).version;
  const port = await freePort();
  const proc = spawn(process.execPath, [entry, `--port=${port}`, '--headless'], {
    cwd: dir,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(proc);
  for (let i = 0; i < 200; i++) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/`);
      await r.arrayBuffer();
      return { proc, port, version: `${version} (@hono/node-server ${nodeServer})` };
    } catch {
      await sleep(100);
    }
  }
  throw new Error('Portkey did not start');
}

const setShape = (
  fakePort: number,
  shape: { frames: number; gapMs: number; ttftMs?: number; finish?: boolean },
) =>
  fetch(`http://127.0.0.1:${fakePort}/__config`, {
    method: 'POST',
    body: JSON.stringify({ ttftMs: 0, ...shape }),
  }).then((r) => r.arrayBuffer());

const median = (xs: number[]) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const spread = (xs: number[]) => {
  const s = xs.filter((x) => Number.isFinite(x));
  return s.length ? [Math.min(...s), Math.max(...s)] : [Number.NaN, Number.NaN];
};

function sh(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

const newRedis = () => createClient({ url: redisUrl });
type Redis = ReturnType<typeof newRedis>;

type RelayReady = {
  url: string;
  grpcAddress: string;
  store: string;
  startRelayMs: number;
  readyAtMs: number;
};

/** Fails loudly when a console op answered {error} instead of its result. */
function ok<T>(x: T | { error: string }): T {
  if (x && typeof x === 'object' && 'error' in x) throw new Error(String(x.error));
  return x as T;
}

const fakeStats = (fakeUrl: string): Promise<FakeStats> =>
  fetch(`${fakeUrl}/__stats`).then((r) => r.json() as Promise<FakeStats>);

/**
 * Issue 7 "billing under load": the plain Switchyard target at the sustained rate for `minutes`, then wait for
 * billing to drain and reconcile the client's counts, the fake's usage, the consume logs and the balances.
 */
async function runSoak(
  sw: Target,
  consoleProc: ChildProcess,
  fakeUrl: string,
  rc: Redis,
  prefix: string,
  minutes: number,
) {
  log('soak: waiting for earlier calls to be billed');
  await drainBilling(rc, prefix);
  const before = ok(await request<BillingSnapshot>(consoleProc, { op: 'snapshot' }, 'snapshot'));
  const fake0 = await fakeStats(fakeUrl);
  const rssStartMb = rssMb(sw.pid);
  log(`soak: ${minutes} min at c=${SOAK.concurrency}, 1 call in ${SOAK.streamEvery} streamed`);
  const run = await soak(sw, {
    concurrency: SOAK.concurrency,
    seconds: minutes * 60,
    streamEvery: SOAK.streamEvery,
    windowSeconds: Math.min(SOAK.windowSeconds, minutes * 60),
  });
  log(`soak: ${run.requests} calls (${run.rps.toFixed(0)} req/s); waiting for billing to drain`);
  const drain = await drainBilling(rc, prefix);
  const after = ok(await request<BillingSnapshot>(consoleProc, { op: 'snapshot' }, 'snapshot'));
  const fake1 = await fakeStats(fakeUrl);
  const logs = ok(
    await request<LogReconcile>(consoleProc, { op: 'reconcile', sinceId: before.maxLogId }, 'reconcile'),
  );
  const { windows, ...totals } = run;
  const checks = reconcileChecks(totals, before, after, fake0, fake1, logs);
  const failed = checks.filter((c) => !c.ok);
  log(
    failed.length
      ? `soak: reconciliation FAILED: ${failed.map((c) => c.check).join('; ')}`
      : `soak: reconciliation exact (${checks.length} equalities)`,
  );
  return {
    date: new Date().toISOString(),
    minutes,
    params: SOAK,
    rssStartMb,
    windows,
    totals,
    drainMs: drain.ms,
    before,
    after,
    fake: { before: fake0, after: fake1 },
    logs,
    checks,
    exact: failed.length === 0,
  };
}

/** The big-prompt scenario on the plain Switchyard target, logged as it ends. */
async function runBigPrompt(sw: Target): Promise<BigPromptResults> {
  log(`big prompt: ${BIG_PROMPT.promptChars} chars without spaces next to ${BIG_PROMPT.rate} small calls/s`);
  const r = await bigPromptUnderLoad(sw, BIG_PROMPT);
  const ph = (x: BigPromptResults['before']) =>
    `p50 ${x.p50.toFixed(2)} p99 ${x.p99.toFixed(2)} max ${x.max.toFixed(1)} ms (${x.n} calls, ${x.errors} errors)`;
  log(`big prompt: answered ${r.bigStatus || r.bigError} in ${r.bigMs.toFixed(0)} ms`);
  log(`big prompt: small calls before ${ph(r.before)}`);
  log(`big prompt: small calls during ${ph(r.during)}`);
  log(`big prompt: small calls after  ${ph(r.after)}`);
  return r;
}

/**
 * Issue 7 "cache reload after an admin change": with the 10k/1k configuration live, the console's own domain
 * functions make the change (and notify the relay as the admin pages do); the relay is polled every ~5 ms until
 * it serves it. Figures run from just before the change is asked for to the first answer showing it.
 */
async function reloadTimes(t: Target, scaleConsole: ChildProcess, keys: string[]) {
  type Probe = { ms: number; domainMs: number; polls: number; status: number; timedOut: boolean };
  const out: {
    tokenDisable: Probe[];
    channelAdd: Probe[];
    channelDisable: Probe[];
    routableBefore: number[];
  } = {
    tokenDisable: [],
    channelAdd: [],
    channelDisable: [],
    routableBefore: [],
  };
  const probe = (seen: Awaited<ReturnType<typeof pollUntil>>, t0: number, domainMs: number): Probe => ({
    ms: seen.at - t0,
    domainMs,
    polls: seen.polls,
    status: seen.status,
    timedOut: seen.timedOut,
  });
  for (let i = 0; i < RELOAD.repeats; i++) {
    // (a) A token is disabled: its key must start getting 401. It works (and is cached) right before.
    const one = { ...t, keys: [keys[i] as string] };
    await pollUntil(one, 'gpt-4o-mini', (s) => s === 200, { intervalMs: RELOAD.intervalMs, timeoutMs: 2000 });
    const t0 = performance.now();
    const [op, seen] = await Promise.all([
      request<{ domainMs: number }>(scaleConsole, { op: 'disableToken', key: keys[i] }, 'disableToken'),
      pollUntil(one, 'gpt-4o-mini', (s) => s === 401, RELOAD),
    ]);
    out.tokenDisable.push(probe(seen, t0, ok(op).domainMs));
  }
  const caller = { ...t, keys: [keys[keys.length - 1] as string] };
  for (let i = 0; i < RELOAD.repeats; i++) {
    // (b) A channel serving a new model is added: the model must become routable (200).
    const pre = await pollUntil(caller, 'gpt-bench-new', () => true, { intervalMs: 0, timeoutMs: 0 });
    out.routableBefore.push(pre.status);
    let t0 = performance.now();
    const [added, seen] = await Promise.all([
      request<{ channelId: number; domainMs: number }>(
        scaleConsole,
        { op: 'createChannel', model: 'gpt-bench-new' },
        'createChannel',
      ),
      pollUntil(caller, 'gpt-bench-new', (s) => s === 200, RELOAD),
    ]);
    out.channelAdd.push(probe(seen, t0, ok(added).domainMs));
    // (c) That channel is disabled: the model must stop being served.
    t0 = performance.now();
    const [disabled, gone] = await Promise.all([
      request<{ domainMs: number }>(
        scaleConsole,
        { op: 'setChannelStatus', id: ok(added).channelId, status: 2 },
        'setChannelStatus',
      ),
      pollUntil(caller, 'gpt-bench-new', (s) => s !== 200, RELOAD),
    ]);
    out.channelDisable.push(probe(gone, t0, ok(disabled).domainMs));
  }
  return out;
}

async function main() {
  const startedAt = new Date();
  log(
    `${soakOnly ? 'soak-only' : bigPromptOnly ? 'big-prompt-only' : quick ? 'quick' : 'full'} mode; load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const rc = newRedis();
  await rc.connect();
  const redisServerInfo = await rc.info('server');
  const redisVersion = /redis_version:(\S+)/.exec(redisServerInfo)?.[1] ?? '';
  // Stack CPU counts the machine's redis-server by its pid (the one every relay of the run uses).
  const redisPid = Number(/process_id:(\d+)/.exec(redisServerInfo)?.[1] ?? 0);
  const redisPrefix = `sy_bench:${process.pid}:`;
  try {
    await run(startedAt, rc, redisVersion, redisPid, redisPrefix);
  } finally {
    // Remove the relays' bench keys (the scale relay's prefix extends this one).
    const keys: string[] = [];
    for await (const batch of rc.scanIterator({ MATCH: `${redisPrefix}*`, COUNT: 1000 })) keys.push(...batch);
    for (let i = 0; i < keys.length; i += 500) await rc.del(keys.slice(i, i + 500));
    await rc.quit();
  }
}

async function run(startedAt: Date, rc: Redis, redisVersion: string, redisPid: number, redisPrefix: string) {
  const fakePort = await freePort();
  const [fake] = await child<{ port: number }>('fake.ts', [String(fakePort)]);
  const fakeUrl = `http://127.0.0.1:${fakePort}`;
  log('starting the console (fresh database, migrations, Billing gRPC) and the relay');
  const [consoleProc, con] = await child<{
    databaseUrl: string;
    billingAddress: string;
    key: string;
    pgVersion?: string;
  }>('console.ts', [fakeUrl]);
  const relayEnv = {
    RELAY_HOST: '127.0.0.1',
    RELAY_GRPC_PORT: '0',
    REDIS_URL: redisUrl,
    LOG_LEVEL: 'warn',
  };
  const relayPort = await freePort();
  const relayT0 = performance.now();
  const [relay, relayInfo] = await child<RelayReady>(
    'relay.ts',
    [],
    {
      ...relayEnv,
      RELAY_PORT: String(relayPort),
      DATABASE_URL: con.databaseUrl,
      BILLING_GRPC_URL: con.billingAddress,
      BENCH_REDIS_PREFIX: redisPrefix,
    },
    profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  );
  const relayBootMs = performance.now() - relayT0;
  if (relayInfo.store !== 'redis') throw new Error(`relay store is ${relayInfo.store}, expected redis`);
  const relayIdleMb = rssMb(relay.pid as number);
  const sw: Target = {
    name: 'switchyard',
    origin: relayInfo.url,
    path: '/v1/chat/completions',
    headers: { authorization: `Bearer sk-${con.key}` },
    pid: relay.pid as number,
    stack: { consolePid: consoleProc.pid as number, redisPid },
  };
  const stopStack = async (r: ChildProcess, c: ChildProcess) => {
    r.send({ op: 'stop' });
    await new Promise((res) => r.once('exit', res));
    c.send({ op: 'close' });
    await new Promise((res) => c.once('exit', res));
  };

  if (bigPromptOnly) {
    await setShape(fakePort, { frames: 8, gapMs: 0 });
    log('warm-up (3 s at c=8)');
    await throughput(sw, 8, 3, 0);
    const big = await runBigPrompt(sw);
    console.log(JSON.stringify(big, null, 2));
    await stopStack(relay, consoleProc);
    return;
  }

  if (soakOnly) {
    await setShape(fakePort, { frames: 8, gapMs: 0 });
    log('warm-up (5 s at c=8)');
    await throughput(sw, 8, 5, 0);
    const soakResult = await runSoak(sw, consoleProc, fakeUrl, rc, redisPrefix, soakMinutes);
    // Merge: the other sections of results.json stay as the last full or quick run left them.
    const file = path.join(here, 'results.json');
    const prev = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<Results>) : {};
    const merged = { ...prev, soak: soakResult } as Results;
    writeFileSync(file, `${JSON.stringify(merged, null, 2)}\n`);
    writeFileSync(path.join(here, 'RESULTS.md'), renderMarkdown(merged));
    log('merged the soak into bench/results.json and re-rendered bench/RESULTS.md');
    console.log(renderSoakChecks(soakResult));
    await stopStack(relay, consoleProc);
    return;
  }

  const [floor, floorInfo] = await child<{ port: number }>('floor.ts', [String(fakePort)]);
  const portkey = skipPortkey ? undefined : await startPortkey();

  const targets: Target[] = [
    { name: 'direct', origin: fakeUrl, path: '/v1/chat/completions', headers: {}, pid: fake.pid as number },
    {
      name: 'floor',
      origin: `http://127.0.0.1:${floorInfo.port}`,
      path: '/v1/chat/completions',
      headers: {},
      pid: floor.pid as number,
    },
    sw,
  ];
  if (portkey)
    targets.push({
      name: 'portkey',
      origin: `http://127.0.0.1:${portkey.port}`,
      path: '/v1/chat/completions',
      headers: {
        authorization: 'Bearer sk-fake',
        'x-portkey-provider': 'openai',
        'x-portkey-custom-host': `${fakeUrl}/v1`,
      },
      pid: portkey.proc.pid as number,
    });

  // The scale stack: its own database (10k users/tokens, 1k channels) and its own relay on it. Its console
  // knows the relay's gRPC address the product's way (RELAY_GRPC_URL; the relay listens on that port).
  let scale:
    | {
        target: Target;
        console: ChildProcess;
        relay: ChildProcess;
        keys: string[];
        seedMs: number;
        consoleReadyMs: number;
        bootToReadyMs: number;
        startRelayMs: number;
        readyAtMs: number;
        idleRssMb: number;
      }
    | undefined;
  if (runScale) {
    log('scale: seeding 10,000 users and tokens and 1,000 channels into a second database');
    const grpcPort = await freePort();
    const c0 = performance.now();
    const [scaleConsole, sc] = await child<{
      databaseUrl: string;
      billingAddress: string;
      keys: string[];
      seedMs: number;
    }>('console.ts', [fakeUrl, '--scale'], { RELAY_GRPC_URL: `127.0.0.1:${grpcPort}` });
    const consoleReadyMs = performance.now() - c0;
    const port = await freePort();
    const t0 = performance.now();
    const [relay10k, r10k] = await child<RelayReady>('relay.ts', [], {
      ...relayEnv,
      RELAY_PORT: String(port),
      RELAY_GRPC_PORT: String(grpcPort),
      DATABASE_URL: sc.databaseUrl,
      BILLING_GRPC_URL: sc.billingAddress,
      BENCH_REDIS_PREFIX: `${redisPrefix}10k:`,
      ...(scaleTtlArg ? { RELAY_ACCOUNT_TTL_MS: scaleTtlArg } : {}),
    });
    const bootToReadyMs = performance.now() - t0;
    scale = {
      target: {
        name: 'switchyard-10k',
        origin: r10k.url,
        path: '/v1/chat/completions',
        headers: {},
        pid: relay10k.pid as number,
        keys: sc.keys,
        stack: { consolePid: scaleConsole.pid as number, redisPid },
      },
      console: scaleConsole,
      relay: relay10k,
      keys: sc.keys,
      seedMs: sc.seedMs,
      consoleReadyMs,
      bootToReadyMs,
      startRelayMs: r10k.startRelayMs,
      readyAtMs: r10k.readyAtMs,
      idleRssMb: rssMb(relay10k.pid as number),
    };
    log(
      `scale: seeded in ${sc.seedMs.toFixed(0)} ms; relay ready ${bootToReadyMs.toFixed(0)} ms after fork (startRelay ${r10k.startRelayMs.toFixed(0)} ms)`,
    );
  }

  // Sanity: every target answers 200 before anything is timed.
  for (const t of targets) {
    const r = await serialLatency(t, 5);
    if (r.errors) throw new Error(`${t.name} answered errors on a plain call`);
  }
  log(`warm-up (${P.warm * 4}s per target)`);
  await setShape(fakePort, { frames: 8, gapMs: 0 });
  for (const t of targets) {
    await throughput(t, 8, P.warm * 4, 0);
    await streamLatency(t, 10);
  }

  // Scale: the first pass over all 10k keys is the cold-cache figure (every call loads its token and owner).
  let scaleWarm: Awaited<ReturnType<typeof eachKey>> | undefined;
  let scaleWarmRssMb = Number.NaN;
  if (scale) {
    scaleWarm = await eachKey(scale.target, scale.keys, 64);
    scaleWarmRssMb = rssMb(scale.relay.pid as number);
    log(
      `scale: cold pass over ${scale.keys.length} keys in ${scaleWarm.ms.toFixed(0)} ms (${scaleWarm.perSecond.toFixed(0)} req/s, ${scaleWarm.errors} errors, relay ${scaleWarm.relayCpuPerCallUs.toFixed(0)} us and stack ${(scaleWarm.stackCpuPerCallUs ?? Number.NaN).toFixed(0)} us CPU per call); relay RSS ${scaleWarmRssMb.toFixed(1)} MB`,
    );
    if (scaleWarm.errors) throw new Error('switchyard-10k answered errors while warming its keys');
  }

  const relayWarmMb = rssMb(relay.pid as number);
  // Memory first, on warmed but otherwise fresh processes: later rounds grow the heaps and would hide the delta.
  log(`memory: ${P.streams} open streams per proxy`);
  await setShape(fakePort, MEM_SHAPE);
  const memory: Record<string, unknown> = {};
  for (const t of targets.filter((x) => x.name !== 'direct')) {
    await sleep(500);
    memory[t.name] = await memoryStreams(t, P.streams, () =>
      setShape(fakePort, { ...MEM_SHAPE, finish: true }),
    );
  }
  await setShape(fakePort, { frames: 8, gapMs: 0 });

  type Row = Record<string, Record<string, unknown>[]>;
  const rounds: { serial: Row; tput: Row; stream: Row; frameCpu: Row } = {
    serial: {},
    tput: {},
    stream: {},
    frameCpu: {},
  };
  const push = (bucket: Row, name: string, value: Record<string, unknown>) => {
    bucket[name] ??= [];
    bucket[name].push(value);
  };
  // The scale target joins the latency and throughput rotation (not the streaming runs: the stream path does
  // not depend on how many tokens or channels there are). It is not warmed again before each run: the relay
  // keeps an account for RELAY_ACCOUNT_TTL_MS (10 s by default) and a pass over 10k keys takes longer than
  // that here, so a warm cache of all 10k cannot be held; the runs measure the steady state at their rate.
  const loadTargets = scale ? [...targets, scale.target] : targets;
  const loadSamples: number[] = [];
  for (let round = 0; round < P.rounds; round++) {
    // Rotate the order every round so no target always runs first (or right after the heaviest one).
    const order = targets.map((_, i) => targets[(i + round) % targets.length] as Target);
    const loadOrder = loadTargets.map((_, i) => loadTargets[(i + round) % loadTargets.length] as Target);
    log(`round ${round + 1}/${P.rounds}: ${loadOrder.map((t) => t.name).join(', ')}`);
    loadSamples.push(os.loadavg()[0] as number);
    for (const t of loadOrder) push(rounds.serial, t.name, await serialLatency(t, P.serialN));
    for (const t of loadOrder) push(rounds.tput, t.name, await throughput(t, P.conc, P.tputSeconds, P.warm));
    await setShape(fakePort, STREAM_SHAPE);
    for (const t of order) push(rounds.stream, t.name, await streamLatency(t, P.streamN));
    await setShape(fakePort, { frames: 64, gapMs: 2 });
    for (const t of order) push(rounds.frameCpu, t.name, await streamCpu(t, 32, P.cpuSeconds));
  }
  await setShape(fakePort, { frames: 8, gapMs: 0 });

  await sleep(1000);
  const relayAfterMb = rssMb(relay.pid as number);
  const scaleAfterMb = scale ? rssMb(scale.relay.pid as number) : Number.NaN;

  let reload: Awaited<ReturnType<typeof reloadTimes>> | undefined;
  if (scale) {
    log('scale: reload after admin changes (token disable, channel add, channel disable)');
    reload = await reloadTimes(scale.target, scale.console, scale.keys);
    const all = [...reload.tokenDisable, ...reload.channelAdd, ...reload.channelDisable];
    log(
      `scale: reload times ${all.map((p) => `${p.ms.toFixed(0)}${p.timedOut ? '(timeout)' : ''}`).join(', ')} ms`,
    );
    // Done with the scale stack: it should not share the machine with the settle run or the soak.
    await stopStack(scale.relay, scale.console);
  }

  await setShape(fakePort, { frames: 8, gapMs: 0 });
  const bigPrompt = await runBigPrompt(sw);

  log('billing settle rate (reportUsage into PostgreSQL, batches of 1000)');
  // One uncounted batch first (JIT, connection pool).
  await request(consoleProc, { op: 'settle', batches: 1, batchSize: 1000, parallel: 1 }, 'settle');
  const settle = {
    sequential: await request<Record<string, number>>(
      consoleProc,
      { op: 'settle', batches: quick ? 5 : 20, batchSize: 1000, parallel: 1 },
      'settle',
    ),
    parallel4: await request<Record<string, number>>(
      consoleProc,
      { op: 'settle', batches: quick ? 8 : 40, batchSize: 1000, parallel: 4 },
      'settle',
    ),
  };

  const soakResult =
    soakMinutes > 0 ? await runSoak(sw, consoleProc, fakeUrl, rc, redisPrefix, soakMinutes) : undefined;

  // Summaries: medians of per-round figures and their min-max; "added" = target minus direct in that round.
  const names = loadTargets.map((t) => t.name);
  const per = (bucket: Row, name: string, key: string) => (bucket[name] ?? []).map((r) => Number(r[key]));
  const added = (bucket: Row, name: string, key: string) =>
    per(bucket, name, key).map((v, i) => v - (per(bucket, 'direct', key)[i] as number));
  // Percent change of `name` over the plain switchyard target, round by round.
  const vsPlain = (bucket: Row, name: string, key: string) =>
    per(bucket, name, key).map((v, i) => (v / (per(bucket, 'switchyard', key)[i] as number) - 1) * 100);
  const summary: Record<string, Record<string, { median: number; min: number; max: number }>> = {};
  const put = (name: string, metric: string, xs: number[]) => {
    const [min, max] = spread(xs);
    summary[name] ??= {};
    summary[name][metric] = { median: median(xs), min: min as number, max: max as number };
  };
  for (const n of names) {
    put(n, 'latency_p50_ms', per(rounds.serial, n, 'p50'));
    put(n, 'latency_p99_ms', per(rounds.serial, n, 'p99'));
    put(n, 'added_p50_ms', added(rounds.serial, n, 'p50'));
    put(n, 'added_p99_ms', added(rounds.serial, n, 'p99'));
    put(n, 'rps', per(rounds.tput, n, 'rps'));
    put(n, 'tput_p50_ms', per(rounds.tput, n, 'p50'));
    put(n, 'tput_p99_ms', per(rounds.tput, n, 'p99'));
    put(n, 'cpu_per_req_us', per(rounds.tput, n, 'targetCpuPerReqUs'));
    put(n, 'stack_cpu_per_req_us', per(rounds.tput, n, 'stackCpuPerReqUs'));
    put(n, 'stack_relay_us', per(rounds.tput, n, 'stackRelayUs'));
    put(n, 'stack_console_us', per(rounds.tput, n, 'stackConsoleUs'));
    put(n, 'stack_redis_us', per(rounds.tput, n, 'stackRedisUs'));
    put(n, 'stack_postgres_us', per(rounds.tput, n, 'stackPostgresUs'));
    put(n, 'client_cpu_cores', per(rounds.tput, n, 'clientCpuCores'));
    put(n, 'ttfb_p50_ms', per(rounds.stream, n, 'ttfbP50'));
    put(n, 'added_ttfb_p50_ms', added(rounds.stream, n, 'ttfbP50'));
    put(n, 'added_ttfb_p99_ms', added(rounds.stream, n, 'ttfbP99'));
    put(n, 'frame_delay_p50_ms', per(rounds.stream, n, 'frameDelayP50'));
    put(n, 'frame_delay_p99_ms', per(rounds.stream, n, 'frameDelayP99'));
    put(n, 'frames_late', per(rounds.stream, n, 'framesLate'));
    put(n, 'frame_pairs', per(rounds.stream, n, 'framePairs'));
    put(n, 'cpu_per_frame_us', per(rounds.frameCpu, n, 'targetCpuPerFrameUs'));
    put(n, 'frames_per_s', per(rounds.frameCpu, n, 'framesPerSecond'));
  }
  if (scale) {
    const n = scale.target.name;
    put(n, 'cpu_vs_plain_pct', vsPlain(rounds.tput, n, 'targetCpuPerReqUs'));
    put(n, 'stack_cpu_vs_plain_pct', vsPlain(rounds.tput, n, 'stackCpuPerReqUs'));
    put(n, 'tput_p99_vs_plain_pct', vsPlain(rounds.tput, n, 'p99'));
    put(n, 'rps_vs_plain_pct', vsPlain(rounds.tput, n, 'rps'));
    put(n, 'latency_p50_vs_plain_pct', vsPlain(rounds.serial, n, 'p50'));
  }
  const errors: Record<string, number> = {};
  for (const n of names)
    errors[n] = [rounds.serial, rounds.tput, rounds.stream, rounds.frameCpu]
      .flatMap((b) => b[n] ?? [])
      .reduce((s, r) => s + Number(r.errors ?? 0), 0);

  // Bottleneck flags (per round): the direct path must be well above the proxied figures, and the client
  // must not saturate a core, or the figures describe the load generator rather than the proxy.
  const flags: string[] = [];
  const clientCores = names.flatMap((n) => per(rounds.tput, n, 'clientCpuCores'));
  if (Math.max(...clientCores) > 0.9)
    flags.push(
      `load client near saturation: up to ${Math.max(...clientCores).toFixed(2)} cores during throughput runs`,
    );
  const swRps = summary.switchyard?.rps;
  const dirRps = summary.direct?.rps;
  if (swRps && dirRps && dirRps.median < 2 * swRps.median)
    flags.push(
      `direct-to-fake throughput (${dirRps.median.toFixed(0)} req/s) is under 2x Switchyard's (${swRps.median.toFixed(0)}): the fake or the client may cap the proxied figure`,
    );
  const fakeCores = per(rounds.tput, 'direct', 'targetCpuCores');
  if (Math.max(...fakeCores) > 0.9)
    flags.push(
      `fake upstream near one core (${Math.max(...fakeCores).toFixed(2)}) in direct throughput runs`,
    );
  const load = median(loadSamples);
  if (load > 0.5)
    flags.push(
      `machine loaded: 1-min load average median ${load.toFixed(2)} on ${os.cpus().length} CPUs during the rounds (other work shares the cores)`,
    );

  const gitSha = sh('git', ['-C', root, 'rev-parse', '--short', 'HEAD']);
  const dirty = sh('git', ['-C', root, 'status', '--porcelain']).length > 0;

  // A run without --soak keeps the last soak section (it has its own date): a soak is 10 minutes of machine.
  const file = path.join(here, 'results.json');
  const prevSoak = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<Results>).soak
    : undefined;

  const results = {
    date: startedAt.toISOString(),
    mode: quick ? 'quick' : 'full',
    params: P,
    machine: {
      cpu: os.cpus()[0]?.model,
      cpus: os.cpus().length,
      memGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
      kernel: os.release(),
      loadAverageAtStart: os.loadavg(),
      loadAverageMedianDuringRounds: load,
    },
    versions: {
      node: process.version,
      git: `${gitSha}${dirty ? ' (dirty tree)' : ''}`,
      redis: redisVersion,
      postgres: sh('psql', [
        '-At',
        '-h',
        '127.0.0.1',
        '-U',
        'postgres',
        '-d',
        'postgres',
        '-c',
        'show server_version',
      ]),
      portkey: portkey?.version ?? 'skipped',
      undici: JSON.parse(readFileSync(path.join(root, 'node_modules/undici/package.json'), 'utf8')).version,
    },
    relay: {
      idleRssMb: relayIdleMb,
      warmRssMb: relayWarmMb,
      rssAfterLoadMb: relayAfterMb,
      store: relayInfo.store,
      bootToReadyMs: relayBootMs,
      startRelayMs: relayInfo.startRelayMs,
    },
    summary,
    errors,
    flags,
    memory,
    settle,
    bigPrompt,
    ...(scale && scaleWarm && reload
      ? {
          scale: {
            users: scale.keys.length,
            tokens: scale.keys.length,
            channels: 1000,
            accountTtlMs: scaleTtlArg ? Number(scaleTtlArg) : 'default (10000)',
            seedMs: scale.seedMs,
            consoleReadyMs: scale.consoleReadyMs,
            relay: {
              bootToReadyMs: scale.bootToReadyMs,
              startRelayMs: scale.startRelayMs,
              processReadyAtMs: scale.readyAtMs,
              idleRssMb: scale.idleRssMb,
              warmRssMb: scaleWarmRssMb,
              rssAfterLoadMb: scaleAfterMb,
            },
            coldPass: scaleWarm,
            reload,
          },
        }
      : {}),
    ...(soakResult ? { soak: soakResult } : prevSoak ? { soak: prevSoak } : {}),
    rounds,
  };
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(here, 'RESULTS.md'), renderMarkdown(results));
  log('wrote bench/RESULTS.md and bench/results.json');
  console.log(renderTargets(results));

  await stopStack(relay, consoleProc);
  if (profile) {
    const { topOfNewestProfile } = await import('./lib/profile-top.ts');
    console.log(topOfNewestProfile(profileDir, 25));
  }
}

type Results = {
  date: string;
  mode: string;
  params: typeof P;
  machine: Record<string, unknown>;
  versions: Record<string, unknown>;
  relay: {
    idleRssMb: number;
    warmRssMb: number;
    rssAfterLoadMb: number;
    store: string;
    bootToReadyMs?: number;
    startRelayMs?: number;
  };
  summary: Record<string, Record<string, { median: number; min: number; max: number }>>;
  errors: Record<string, number>;
  flags: string[];
  memory: Record<string, unknown>;
  settle: Record<string, Record<string, number>>;
  bigPrompt?: BigPromptResults;
  scale?: ScaleResults;
  soak?: SoakResults;
};

type Probe = { ms: number; domainMs: number; polls: number; status: number; timedOut: boolean };
type ScaleResults = {
  users: number;
  tokens: number;
  channels: number;
  accountTtlMs?: number | string;
  seedMs: number;
  consoleReadyMs: number;
  relay: {
    bootToReadyMs: number;
    startRelayMs: number;
    processReadyAtMs: number;
    idleRssMb: number;
    warmRssMb: number;
    rssAfterLoadMb: number;
  };
  coldPass: {
    keys: number;
    concurrency: number;
    ms: number;
    perSecond: number;
    errors: number;
    relayCpuPerCallUs: number;
    stackCpuPerCallUs?: number;
    stackConsoleUs?: number;
    stackRedisUs?: number;
    stackPostgresUs?: number;
  };
  reload: { tokenDisable: Probe[]; channelAdd: Probe[]; channelDisable: Probe[]; routableBefore: number[] };
};
type SoakResults = Awaited<ReturnType<typeof runSoak>>;
type BigPromptResults = Awaited<ReturnType<typeof bigPromptUnderLoad>>;

const f = (x: number | undefined, d = 2) => (x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(d));

function targetRows(r: Results): [string, string, string, boolean | null][] {
  const sw = r.summary.switchyard ?? {};
  const pk = r.summary.portkey;
  const fl = r.summary.floor ?? {};
  const mem = r.memory.switchyard as { mbPer1000?: number; allOpen?: boolean } | undefined;
  const settle = r.settle.sequential?.perSecond;
  const m = (k: string) => sw[k]?.median;
  const rows: [string, string, string, boolean | null][] = [
    ['Added latency c=1, p50', '<= 1 ms', `${f(m('added_p50_ms'), 3)} ms`, (m('added_p50_ms') ?? 99) <= 1],
    ['Added latency c=1, p99', '<= 3 ms', `${f(m('added_p99_ms'), 3)} ms`, (m('added_p99_ms') ?? 99) <= 3],
    [
      'Throughput, non-streaming (c=64)',
      '>= 2,500 req/s',
      `${f(m('rps'), 0)} req/s`,
      (m('rps') ?? 0) >= 2500,
    ],
    [
      'Throughput vs Portkey',
      '>= 2.5x',
      pk ? `${f((m('rps') ?? 0) / (pk.rps?.median ?? Number.NaN))}x` : 'skipped',
      pk ? (m('rps') ?? 0) / (pk.rps?.median ?? 1) >= 2.5 : null,
    ],
    [
      'Throughput vs floor (F1)',
      '>= 60%',
      `${f(((m('rps') ?? 0) / (fl.rps?.median ?? Number.NaN)) * 100, 0)}%`,
      (m('rps') ?? 0) / (fl.rps?.median ?? 1) >= 0.6,
    ],
    [
      'Added stream TTFB, p50',
      '<= 1.5 ms',
      `${f(m('added_ttfb_p50_ms'), 3)} ms`,
      (m('added_ttfb_p50_ms') ?? 99) <= 1.5,
    ],
    [
      'No buffering (frame i reaches the client before frame i+1 is sent)',
      '0 late',
      `${f(m('frames_late'), 0)} of ${f(m('frame_pairs'), 0)} frames late per round (floor: ${f(fl.frames_late?.median, 0)})`,
      (m('frames_late') ?? 1) === 0,
    ],
    [
      'CPU per relayed frame',
      '<= 90 us',
      `${f(m('cpu_per_frame_us'), 1)} us`,
      (m('cpu_per_frame_us') ?? 999) <= 90,
    ],
    [
      'Memory per 1,000 open streams',
      '<= 100 MB',
      `${f(mem?.mbPer1000, 1)} MB${mem?.allOpen === false ? ' (not all open at once)' : ''}`,
      mem ? (mem.mbPer1000 ?? 999) <= 100 && mem.allOpen !== false : null,
    ],
    [
      'Idle memory (relay RSS after start)',
      '<= 150 MB',
      `${f(r.relay.idleRssMb, 1)} MB`,
      r.relay.idleRssMb <= 150,
    ],
    [
      'Billing settle rate (sequential batches of 1000)',
      '>= 5,000 events/s',
      `${f(settle, 0)} events/s`,
      (settle ?? 0) >= 5000,
    ],
  ];
  const big = r.bigPrompt;
  if (big) {
    const rise = big.during.p99 - big.before.p99;
    rows.push(
      [
        'Small calls next to a 1 MB prompt without spaces: p99 during minus before (issue 13)',
        '<= +5 ms',
        `${rise >= 0 ? '+' : ''}${f(rise)} ms (p99 before ${f(big.before.p99)}, during ${f(big.during.p99)}, after ${f(big.after.p99)} ms; max during ${f(big.during.max, 1)} ms; ${big.during.errors} errors)`,
        rise <= 5 && big.during.errors === 0,
      ],
      [
        'The 1 MB prompt answered or refused',
        '<= 1 s',
        `${big.bigStatus || big.bigError} in ${f(big.bigMs, 0)} ms`,
        big.bigStatus > 0 && big.bigMs <= 1000,
      ],
    );
  }
  const k10 = r.summary['switchyard-10k'];
  if (k10 && r.scale) {
    const cpu = k10.cpu_vs_plain_pct?.median ?? Number.NaN;
    const stack = k10.stack_cpu_vs_plain_pct?.median ?? Number.NaN;
    const p99 = k10.tput_p99_vs_plain_pct?.median ?? Number.NaN;
    const pct = (x: number) => `${x >= 0 ? '+' : ''}${f(x, 1)}%`;
    rows.push(
      [
        'CPU per request, 10k tokens / 1k channels / 10k users vs one of each (relay, same round)',
        '<= +5%',
        `${pct(cpu)} (median of per-round ratios; ${f(k10.cpu_per_req_us?.median, 0)} vs ${f(m('cpu_per_req_us'), 0)} us; rounds ${pct(k10.cpu_vs_plain_pct?.min ?? Number.NaN)} to ${pct(k10.cpu_vs_plain_pct?.max ?? Number.NaN)}); whole stack ${pct(stack)}`,
        Number.isFinite(cpu) ? cpu <= 5 : null,
      ],
      [
        'p99 at c=64, 10k tokens / 1k channels / 10k users vs one of each',
        '<= +10%',
        `${pct(p99)} (median of per-round ratios; p99 ${f(k10.tput_p99_ms?.median)} vs ${f(m('tput_p99_ms'))} ms)`,
        Number.isFinite(p99) ? p99 <= 10 : null,
      ],
    );
    const rl = r.scale.reload;
    const all = [...rl.tokenDisable, ...rl.channelAdd, ...rl.channelDisable];
    const worst = Math.max(...all.map((x) => x.ms));
    const mx = (xs: Probe[]) => `${f(Math.max(...xs.map((x) => x.ms)), 0)}`;
    rows.push(
      [
        'Cache reload after an admin change (token disable / channel add / channel disable, worst of each)',
        '< 1 s',
        `${mx(rl.tokenDisable)} / ${mx(rl.channelAdd)} / ${mx(rl.channelDisable)} ms`,
        all.every((x) => !x.timedOut) && worst < 1000,
      ],
      [
        'Relay start with 1k channels (startRelay: Redis, options, routing table)',
        '<= 1 s',
        `${f(r.scale.relay.startRelayMs, 0)} ms (fork to ready ${f(r.scale.relay.bootToReadyMs, 0)} ms)`,
        r.scale.relay.startRelayMs <= 1000,
      ],
    );
  }
  if (r.soak) {
    const bad = r.soak.checks.filter((c) => !c.ok).length;
    rows.push([
      `Billing reconciles exactly after a ${r.soak.minutes}-min soak at c=${r.soak.params.concurrency}`,
      'every equality holds',
      `${r.soak.checks.length - bad} of ${r.soak.checks.length} hold; ${r.soak.totals.requests} calls, ${f(r.soak.totals.rps, 0)} req/s (soak of ${r.soak.date})`,
      bad === 0,
    ]);
  }
  return rows;
}

/** The soak's equalities as console lines. */
function renderSoakChecks(s: SoakResults): string {
  return s.checks
    .map(
      (c) => `${c.ok ? '  OK ' : 'FAIL '} ${c.check}: ${c.left} ${c.leftValue} vs ${c.right} ${c.rightValue}`,
    )
    .join('\n');
}

/** The scale and reload section of RESULTS.md. */
function renderScale(r: Results): string {
  const sc = r.scale as ScaleResults;
  const k = r.summary['switchyard-10k'] ?? {};
  const cell = (m: string, d = 1) => {
    const x = k[m];
    return x ? `${f(x.median, d)} (${f(x.min, d)}–${f(x.max, d)})` : '—';
  };
  const probes = (label: string, xs: Probe[]) =>
    `| ${label} | ${xs.map((x) => `${f(x.ms, 0)}${x.timedOut ? ' (timed out)' : ''}`).join(', ')} | ${xs.map((x) => f(x.domainMs, 0)).join(', ')} | ${xs.map((x) => x.polls).join(', ')} | ${xs.map((x) => x.status).join(', ')} |`;
  const cp = sc.coldPass;
  return `## Scale: 10,000 tokens, 1,000 channels, 10,000 users ("switchyard-10k")

A second console seeded its own database with ${sc.users} users, one token each, and ${sc.channels} enabled channels on the fake serving gpt-4o-mini (a quarter at priority 1, the serving tier; weights 0–9), each with its ability row, in ${f(sc.seedMs, 0)} ms of SQL (console ready ${f(sc.consoleReadyMs, 0)} ms after fork, migrations included). Its relay ran on the same Redis under its own key prefix, with RELAY_ACCOUNT_TTL_MS ${sc.accountTtlMs ?? 'default (10000)'}. Every request picks one of the 10,000 keys uniformly at random.

- Relay fork to ready: ${f(sc.relay.bootToReadyMs, 0)} ms (startRelay ${f(sc.relay.startRelayMs, 0)} ms; process up ${f(sc.relay.processReadyAtMs, 0)} ms at ready). Plain relay: ${f(r.relay.bootToReadyMs, 0)} ms (startRelay ${f(r.relay.startRelayMs, 0)} ms).
- Relay RSS: ${f(sc.relay.idleRssMb, 1)} MB idle, ${f(sc.relay.warmRssMb, 1)} MB with all 10k accounts cached, ${f(sc.relay.rssAfterLoadMb, 1)} MB after the rounds (plain relay: ${f(r.relay.idleRssMb, 1)} / ${f(r.relay.warmRssMb, 1)} / ${f(r.relay.rssAfterLoadMb, 1)} MB).
- Cold pass before the rounds (one call per key, c=${cp.concurrency}; every call is a miss: token and owner from PostgreSQL, both balances loaded into Redis): ${f(cp.ms, 0)} ms, ${f(cp.perSecond, 0)} req/s, ${cp.errors} errors; CPU per call: relay ${f(cp.relayCpuPerCallUs, 0)} µs, whole stack ${f(cp.stackCpuPerCallUs, 0)} µs (console ${f(cp.stackConsoleUs, 0)}, Redis ${f(cp.stackRedisUs, 0)}, PostgreSQL ${f(cp.stackPostgresUs, 0)}).
- After the cold pass every key is known: the relay re-reads the tokens and owners in use in bulk once per RELAY_ACCOUNT_TTL_MS (a thousand keys per query) instead of per expired key, and balances stay in Redis for RELAY_BALANCE_TTL_MS (10 min), so the rounds below run on a warm cache whatever the key. What still grows with the configuration is billing: each event updates its own user and token rows (one row per batch with a single account) and the rate-limit and balance keys spread over 10,000 accounts.

| vs the plain switchyard target of the same round | median (min–max) |
|---|---|
| CPU per request, relay (%) | ${cell('cpu_vs_plain_pct')} |
| CPU per request, whole stack (%) | ${cell('stack_cpu_vs_plain_pct')} |
| req/s at c=64 (%) | ${cell('rps_vs_plain_pct')} |
| p99 at c=64 (%) | ${cell('tput_p99_vs_plain_pct')} |
| p50 one at a time (%) | ${cell('latency_p50_vs_plain_pct')} |

### Reload after an admin change (${sc.reload.tokenDisable.length} repeats each; relay polled every ${RELOAD.intervalMs} ms)

The change goes through the console's domain functions (setTokenStatus, createChannels, setChannelStatus: what the token and channel pages call), which commit and then notify the relay over its gRPC API (RELAY_GRPC_URL, as server/console.ts wires it). Time runs from just before the change is asked for to the first answer that shows it.

| Change | until the relay serves it (ms) | domain call incl. relay notice (ms) | polls | last status |
|---|---|---|---|---|
${probes('token disabled → its key gets 401', sc.reload.tokenDisable)}
${probes('channel for gpt-bench-new added → 200', sc.reload.channelAdd)}
${probes('that channel disabled → not 200', sc.reload.channelDisable)}

Status of gpt-bench-new before each channel add: ${sc.reload.routableBefore.join(', ')}.
`;
}

/** The soak section of RESULTS.md. */
function renderSoak(s: SoakResults): string {
  const w = s.windows.map(
    (x) =>
      `| ${f(x.atSeconds, 0)} | ${f(x.rps, 0)} | ${f(x.p50)} | ${f(x.p99)} | ${x.non200} | ${x.streamed} | ${f(x.relayRssMb, 1)} |`,
  );
  const c = s.checks.map(
    (x) =>
      `| ${x.check} | ${x.left} = ${x.leftValue} | ${x.right} = ${x.rightValue} | ${x.ok ? 'equal' : '**DIFFERENT**'} |`,
  );
  const t = s.totals;
  return `## Soak: billing under load (${s.minutes} min, ${s.date})

Closed loop at c=${s.params.concurrency} on the plain switchyard target (the sustained rate), every ${s.params.streamEvery}th call streamed (stream_options.include_usage). Then the runner waited until the relay's Redis outbox was empty and no hold or pending amount was left (${f(s.drainMs / 1000, 1)} s after the last call), and reconciled against PostgreSQL and the fake's /__stats.

**Verdict: ${s.exact ? 'billing reconciles exactly' : '**billing does NOT reconcile**'}.** ${t.requests} calls (${t.ok200} answered 200, ${t.non200} not, ${t.failed} failed), ${t.streamed} streamed; ${f(t.rps, 0)} req/s overall; relay RSS ${f(s.rssStartMb, 1)} MB at the start.

| at (s) | req/s | p50 (ms) | p99 (ms) | non-200 | streamed | relay RSS (MB) |
|---|---|---|---|---|---|---|
${w.join('\n')}

| Equality | left | right | |
|---|---|---|---|
${c.join('\n')}

Hand price per call (bench/lib/soak.ts expectedQuota): round((P + O·4)·0.075·1), half away from zero, at least 1; the fake reports P=12, O=9, so 4 quota a call.
`;
}

function renderTargets(r: Results): string {
  return targetRows(r)
    .map(
      ([name, target, got, ok]) =>
        `${ok === null ? '  n/a' : ok ? '  MET' : 'MISSED'}  ${name}: ${got} (target ${target})`,
    )
    .join('\n');
}

function renderMarkdown(r: Results): string {
  // A soak-only run with no earlier results: the soak alone.
  if (!r.summary) return `# Switchyard benchmark results\n\n${r.soak ? renderSoak(r.soak) : ''}`;
  const names = Object.keys(r.summary);
  const cell = (n: string, k: string, d = 2) => {
    const s = r.summary[n]?.[k];
    return s ? `${f(s.median, d)} (${f(s.min, d)}–${f(s.max, d)})` : '—';
  };
  const table = (title: string, metrics: [string, string, number][]) =>
    [
      `### ${title}`,
      '',
      `| Metric | ${names.join(' | ')} |`,
      `|---|${names.map(() => '---').join('|')}|`,
      ...metrics.map(([label, k, d]) => `| ${label} | ${names.map((n) => cell(n, k, d)).join(' | ')} |`),
      '',
    ].join('\n');
  const memRows = Object.entries(r.memory).map(([n, v]) => {
    const m = v as Record<string, number | boolean>;
    return `| ${n} | ${f(m.rssBeforeMb as number, 1)} | ${f(m.rssAllOpenMb as number, 1)} | ${f(m.rssPeakMb as number, 1)} | ${f(m.mbPer1000 as number, 1)} | ${m.maxConcurrent}/${m.streams} at once after ${f(m.openAfterMs as number, 0)} ms | ${m.errors} |`;
  });
  const settleRows = Object.entries(r.settle).map(
    ([k, s]) =>
      `| ${k} | ${s.events ?? '—'} | ${s.parallel ?? '—'} | ${f(s.seconds, 2)} s | ${f(s.perSecond, 0)} | ${s.error ?? ''} |`,
  );
  return `# Switchyard benchmark results

Generated by \`npm run bench${r.mode === 'quick' ? ' -- --quick' : ''}\` (bench/run.ts) on ${r.date}. Raw figures: bench/results.json.

**Machine:** ${r.machine.cpu}, ${r.machine.cpus} CPUs, ${r.machine.memGiB} GiB, Linux ${r.machine.kernel}.
Load average at start ${(r.machine.loadAverageAtStart as number[]).map((x) => x.toFixed(2)).join(' / ')}; median 1-min load during the rounds ${f(r.machine.loadAverageMedianDuringRounds as number)}.
**Versions:** Node ${r.versions.node}, Switchyard ${r.versions.git}, Redis ${r.versions.redis}, PostgreSQL ${r.versions.postgres || '?'}, Portkey gateway ${r.versions.portkey}, undici ${r.versions.undici} (client).
**Layout:** A (co-located, unpinned): fake upstream, floor proxy, console (Billing gRPC + PostgreSQL client), Switchyard relay, Portkey and the load client are separate Node processes on the same cores; PostgreSQL and Redis are the machine's.
**Mode:** ${r.mode}: ${r.params.rounds} interleaved rounds (target order rotated each round); per round ${r.params.serialN} sequential calls, ${r.params.tputSeconds} s at c=${r.params.conc} (after ${r.params.warm} s warm-up), ${r.params.streamN} sequential streams (${STREAM_SHAPE.frames} frames, ${STREAM_SHAPE.gapMs} ms apart), ${r.params.cpuSeconds} s of 32 concurrent streams (64 frames, 2 ms apart).

Targets: **direct** = client → fake; **floor** = bare node:http keep-alive pipe proxy (F1); **switchyard** = the relay with token auth, the per-user request rate limit (Redis script), quota holds in Redis, usage billed through the console's Billing gRPC into PostgreSQL (consume log on); **portkey** = @portkey-ai/gateway with the openai provider and a custom host.

## Targets (Switchyard)

| Scenario | Target | Measured (median of rounds) | Status |
|---|---|---|---|
${targetRows(r)
  .map(([n, t, g, ok]) => `| ${n} | ${t} | ${g} | ${ok === null ? 'n/a' : ok ? 'met' : '**missed**'} |`)
  .join('\n')}

## Bottleneck and validity flags

${r.flags.length ? r.flags.map((x) => `- ${x}`).join('\n') : '- none'}
- Errors (non-200 or failed calls) over all rounds: ${Object.entries(r.errors)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')}.

## Figures (median of rounds, min–max in brackets)

${table('One request at a time (keep-alive, ~600-byte JSON)', [
  ['p50 latency (ms)', 'latency_p50_ms', 3],
  ['p99 latency (ms)', 'latency_p99_ms', 3],
  ['added p50 vs direct (ms)', 'added_p50_ms', 3],
  ['added p99 vs direct (ms)', 'added_p99_ms', 3],
])}
${table(`Sustained non-streaming load (c=${r.params.conc}, closed loop)`, [
  ['req/s', 'rps', 0],
  ['p50 latency (ms)', 'tput_p50_ms', 2],
  ['p99 latency (ms)', 'tput_p99_ms', 2],
  ['CPU per request of the target process (µs)', 'cpu_per_req_us', 0],
  ['stack CPU per request: relay + console + Redis + PostgreSQL (µs)', 'stack_cpu_per_req_us', 0],
  ['… of which relay (µs)', 'stack_relay_us', 0],
  ['… of which console, Billing gRPC (µs)', 'stack_console_us', 0],
  ['… of which redis-server (µs)', 'stack_redis_us', 0],
  ['… of which PostgreSQL backends (µs)', 'stack_postgres_us', 0],
  ['load client CPU (cores)', 'client_cpu_cores', 2],
])}
Stack CPU (Switchyard targets only) samples, over the same window as the target's own figure, the console process (Billing gRPC into PostgreSQL), the machine's redis-server (pid from INFO server) and every PostgreSQL server process (cmdline "postgres…"). Redis and PostgreSQL are shared with anything else running on the machine, so other work inflates those two parts.

${table(`Streaming, one at a time (${STREAM_SHAPE.frames} frames, ${STREAM_SHAPE.gapMs} ms gaps)`, [
  ['TTFB to first content frame p50 (ms)', 'ttfb_p50_ms', 3],
  ['added TTFB p50 (ms)', 'added_ttfb_p50_ms', 3],
  ['added TTFB p99 (ms)', 'added_ttfb_p99_ms', 3],
  ['frame delay fake→client p50 (ms)', 'frame_delay_p50_ms', 3],
  ['frame delay fake→client p99 (ms)', 'frame_delay_p99_ms', 3],
  ['frames that arrived after the next was sent', 'frames_late', 0],
])}
${table('Streaming CPU (32 concurrent streams, 64 frames, 2 ms gaps)', [
  ['content frames/s', 'frames_per_s', 0],
  ['CPU per frame of the target process (µs; direct = the fake)', 'cpu_per_frame_us', 1],
])}
### Memory: ${r.params.streams} streams open at once (frames ${MEM_SHAPE.gapMs} ms apart), ramped 100 per 50 ms; RSS sampled while all are open, then the fake ends them

| Target | RSS before (MB) | RSS all open (MB) | RSS peak (MB) | MB per 1,000 streams | open concurrently | errors |
|---|---|---|---|---|---|---|
${memRows.join('\n')}

Switchyard relay fork to ready: ${f(r.relay.bootToReadyMs, 0)} ms (startRelay ${f(r.relay.startRelayMs, 0)} ms). Relay RSS right after start (idle): ${f(r.relay.idleRssMb, 1)} MB; after the warm-up: ${f(r.relay.warmRssMb, 1)} MB; 1 s after all rounds: ${f(r.relay.rssAfterLoadMb, 1)} MB. The memory run comes right after the warm-up, before the rounds, so each process starts it warmed but with its heap not yet grown by the throughput runs.

### Billing settle rate (reportUsage, the domain function behind ReportUsage, into PostgreSQL)

| Run | events | concurrent callers | time | events/s | error |
|---|---|---|---|---|---|
${settleRows.join('\n')}

${r.scale ? renderScale(r) : ''}
${r.soak ? renderSoak(r.soak) : ''}
Notes: CPU figures come from /proc utime+stime (10 ms ticks) over the measured window; "added" figures subtract the direct path of the same round. The client is a single Node process (undici pools); its CPU is reported so a saturated client is visible.
`;
}

try {
  await main();
  process.exitCode = 0;
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
}
