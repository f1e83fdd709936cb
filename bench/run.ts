/**
 * `npm run bench [-- --quick]`: Switchyard against the direct path, a bare keep-alive proxy floor and the Portkey
 * gateway, in one run, interleaved and repeated (protocol: /work/shared/reference/performance.md §4, layout A,
 * co-located). Writes bench/RESULTS.md and bench/results.json. A benchmark, not a test: nothing here asserts.
 *
 * Processes: fake upstream, floor proxy, console (PostgreSQL + Billing gRPC), Switchyard relay (real Redis,
 * full auth, rate limit, holds, billing), Portkey (installed into bench/peers/portkey on first use). The load
 * client runs here.
 */
import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import {
  memoryStreams,
  rssMb,
  serialLatency,
  sleep,
  streamCpu,
  streamLatency,
  type Target,
  throughput,
} from './lib/client.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const quick = process.argv.includes('--quick');
const skipPortkey = process.argv.includes('--no-portkey');
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
    env: { ...process.env, NODE_ENV: 'production', ...env },
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

async function main() {
  const startedAt = new Date();
  log(
    `${quick ? 'quick' : 'full'} mode; load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const fakePort = await freePort();
  const [fake] = await child<{ port: number }>('fake.ts', [String(fakePort)]);
  const fakeUrl = `http://127.0.0.1:${fakePort}`;
  const [floor, floorInfo] = await child<{ port: number }>('floor.ts', [String(fakePort)]);
  log('starting the console (fresh database, migrations, Billing gRPC) and the relay');
  const [consoleProc, con] = await child<{
    databaseUrl: string;
    billingAddress: string;
    key: string;
    pgVersion?: string;
  }>('console.ts', [fakeUrl]);
  const redisPrefix = `sy_bench:${process.pid}:`;
  const relayPort = await freePort();
  const [relay, relayInfo] = await child<{ url: string; store: string }>(
    'relay.ts',
    [],
    {
      RELAY_HOST: '127.0.0.1',
      RELAY_PORT: String(relayPort),
      RELAY_GRPC_PORT: '0',
      DATABASE_URL: con.databaseUrl,
      BILLING_GRPC_URL: con.billingAddress,
      REDIS_URL: redisUrl,
      BENCH_REDIS_PREFIX: redisPrefix,
      LOG_LEVEL: 'warn',
    },
    profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  );
  if (relayInfo.store !== 'redis') throw new Error(`relay store is ${relayInfo.store}, expected redis`);
  const relayIdleMb = rssMb(relay.pid as number);
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
    {
      name: 'switchyard',
      origin: relayInfo.url,
      path: '/v1/chat/completions',
      headers: { authorization: `Bearer sk-${con.key}` },
      pid: relay.pid as number,
    },
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
  const loadSamples: number[] = [];
  for (let round = 0; round < P.rounds; round++) {
    // Rotate the order every round so no target always runs first (or right after the heaviest one).
    const order = targets.map((_, i) => targets[(i + round) % targets.length] as Target);
    log(`round ${round + 1}/${P.rounds}: ${order.map((t) => t.name).join(', ')}`);
    loadSamples.push(os.loadavg()[0] as number);
    for (const t of order) push(rounds.serial, t.name, await serialLatency(t, P.serialN));
    for (const t of order) push(rounds.tput, t.name, await throughput(t, P.conc, P.tputSeconds, P.warm));
    await setShape(fakePort, STREAM_SHAPE);
    for (const t of order) push(rounds.stream, t.name, await streamLatency(t, P.streamN));
    await setShape(fakePort, { frames: 64, gapMs: 2 });
    for (const t of order) push(rounds.frameCpu, t.name, await streamCpu(t, 32, P.cpuSeconds));
  }

  await sleep(1000);
  const relayAfterMb = rssMb(relay.pid as number);

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

  // Summaries: medians of per-round figures and their min-max; "added" = target minus direct in that round.
  const names = targets.map((t) => t.name);
  const per = (bucket: Row, name: string, key: string) => (bucket[name] ?? []).map((r) => Number(r[key]));
  const added = (bucket: Row, name: string, key: string) =>
    per(bucket, name, key).map((v, i) => v - (per(bucket, 'direct', key)[i] as number));
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
  let redisVersion = '';
  const rc = createClient({ url: redisUrl });
  await rc.connect();
  redisVersion = /redis_version:(\S+)/.exec(await rc.info('server'))?.[1] ?? '';
  // Remove the relay's bench keys.
  const keys: string[] = [];
  for await (const batch of rc.scanIterator({ MATCH: `${redisPrefix}*`, COUNT: 1000 })) keys.push(...batch);
  for (let i = 0; i < keys.length; i += 500) await rc.del(keys.slice(i, i + 500));
  await rc.quit();

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
    },
    summary,
    errors,
    flags,
    memory,
    settle,
    rounds,
  };
  writeFileSync(path.join(here, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(here, 'RESULTS.md'), renderMarkdown(results));
  log('wrote bench/RESULTS.md and bench/results.json');
  console.log(renderTargets(results));

  relay.send({ op: 'stop' });
  await new Promise((r) => relay.once('exit', r));
  consoleProc.send({ op: 'close' });
  await new Promise((r) => consoleProc.once('exit', r));
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
  relay: { idleRssMb: number; warmRssMb: number; rssAfterLoadMb: number; store: string };
  summary: Record<string, Record<string, { median: number; min: number; max: number }>>;
  errors: Record<string, number>;
  flags: string[];
  memory: Record<string, unknown>;
  settle: Record<string, Record<string, number>>;
};

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
  return rows;
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
  ['load client CPU (cores)', 'client_cpu_cores', 2],
])}
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

Switchyard relay RSS right after start (idle): ${f(r.relay.idleRssMb, 1)} MB; after the warm-up: ${f(r.relay.warmRssMb, 1)} MB; 1 s after all rounds: ${f(r.relay.rssAfterLoadMb, 1)} MB. The memory run comes right after the warm-up, before the rounds, so each process starts it warmed but with its heap not yet grown by the throughput runs.

### Billing settle rate (reportUsage, the domain function behind ReportUsage, into PostgreSQL)

| Run | events | concurrent callers | time | events/s | error |
|---|---|---|---|---|---|
${settleRows.join('\n')}

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
