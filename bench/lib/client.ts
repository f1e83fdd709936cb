/**
 * Load client on undici (keep-alive pools, performance.now() timing, so sub-millisecond figures are real) and
 * /proc readers for the CPU and memory of the process under test.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Pool } from 'undici';

export type Target = {
  name: string;
  origin: string;
  path: string;
  headers: Record<string, string>;
  /** The process whose CPU and memory count for this target. */
  pid: number;
  /** When set, every request carries a uniformly random one of these keys (`Bearer sk-KEY`): the scale runs. */
  keys?: string[];
  /**
   * The rest of the stack behind a Switchyard relay (console with Billing, Redis); with it, throughput also
   * reports the CPU of the whole stack per request (relay + console + Redis + PostgreSQL backends).
   */
  stack?: { consolePid: number; redisPid: number };
};

const BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Say hello to the benchmark in a short sentence please.' }],
});
const STREAM_BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  stream: true,
  stream_options: { include_usage: true },
  messages: [{ role: 'user', content: 'Say hello to the benchmark in a short sentence please.' }],
});

const CLK_TCK = 100;

/** utime + stime of `pid` in microseconds (10 ms resolution: use over seconds-long windows). */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLK_TCK;
}

/**
 * utime + stime (µs) of every PostgreSQL server process on the machine (postmaster, backends, background
 * workers: cmdline "postgres: ..." or argv[0] ending in /postgres), by pid. Backends come and go with
 * connection pools, so a window's figure is computed per pid (stackCpuDelta).
 */
export function postgresCpu(): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'latin1');
      const argv0 = cmd.split('\0', 1)[0] ?? '';
      if (!cmd.startsWith('postgres') && !argv0.endsWith('/postgres')) continue;
      out.set(Number(name), cpuMicros(Number(name)));
    } catch {
      // The process ended between readdir and read.
    }
  }
  return out;
}

type StackSample = { relay: number; console: number; redis: number; postgres: Map<number, number> };

function stackSample(t: Target & { stack: NonNullable<Target['stack']> }): StackSample {
  return {
    relay: cpuMicros(t.pid),
    console: cpuMicros(t.stack.consolePid),
    redis: cpuMicros(t.stack.redisPid),
    postgres: postgresCpu(),
  };
}

/**
 * CPU µs of each stack part between two samples. A PostgreSQL backend born inside the window counts whole; one
 * that exited inside it is lost (pools keep their connections, so that is rare during a run).
 */
function stackCpuDelta(a: StackSample, b: StackSample) {
  let postgres = 0;
  for (const [pid, us] of b.postgres) postgres += us - (a.postgres.get(pid) ?? 0);
  const relay = b.relay - a.relay;
  const consoleUs = b.console - a.console;
  const redis = b.redis - a.redis;
  return { relay, console: consoleUs, redis, postgres, total: relay + consoleUs + redis + postgres };
}

/** Resident set size of `pid` in MB. */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

const sortNum = (xs: number[]) => xs.sort((a, b) => a - b);

export function pool(t: Target, connections: number): Pool {
  return new Pool(t.origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  });
}

/** The request headers: the target's, with a random key of `keys` when the target has them. */
function headersOf(t: Target): Record<string, string> {
  if (!t.keys) return { 'content-type': 'application/json', ...t.headers };
  const key = t.keys[Math.floor(Math.random() * t.keys.length)];
  return { 'content-type': 'application/json', ...t.headers, authorization: `Bearer sk-${key}` };
}

async function call(p: Pool, t: Target, body: string): Promise<number> {
  const res = await p.request({ path: t.path, method: 'POST', headers: headersOf(t), body });
  await res.body.arrayBuffer();
  return res.statusCode;
}

/** One request at a time over one keep-alive connection: latencies in ms. */
export async function serialLatency(t: Target, n: number) {
  const p = pool(t, 1);
  const lat: number[] = [];
  let errors = 0;
  try {
    for (let i = 0; i < 20; i++) await call(p, t, BODY);
    for (let i = 0; i < n; i++) {
      const s = performance.now();
      const status = await call(p, t, BODY);
      lat.push(performance.now() - s);
      if (status !== 200) errors++;
    }
  } finally {
    await p.close();
  }
  sortNum(lat);
  return { n, errors, p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99) };
}

/** Closed-loop load: `concurrency` workers for `seconds` after `warmSeconds`. */
export async function throughput(t: Target, concurrency: number, seconds: number, warmSeconds: number) {
  const p = pool(t, concurrency);
  const lat: number[] = [];
  let errors = 0;
  let measuring = false;
  let stop = false;
  let done = 0;
  const worker = async () => {
    while (!stop) {
      const s = performance.now();
      let status = 0;
      try {
        status = await call(p, t, BODY);
      } catch {
        status = 0;
      }
      if (measuring && !stop) {
        lat.push(performance.now() - s);
        done++;
        if (status !== 200) errors++;
      }
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  await sleep(warmSeconds * 1000);
  const withStack = t.stack ? { ...t, stack: t.stack } : undefined;
  const stack0 = withStack ? stackSample(withStack) : undefined;
  const cpu0 = cpuMicros(t.pid);
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  measuring = true;
  await sleep(seconds * 1000);
  stop = true;
  const wall = (performance.now() - t0) / 1000;
  const cpu = cpuMicros(t.pid) - cpu0;
  const stackUs = withStack && stack0 ? stackCpuDelta(stack0, stackSample(withStack)) : undefined;
  const cu = process.cpuUsage(client0);
  await Promise.all(workers);
  await p.close();
  sortNum(lat);
  const perReq = (us: number) => (done ? us / done : Number.NaN);
  return {
    concurrency,
    seconds: wall,
    requests: done,
    errors,
    rps: done / wall,
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
    targetCpuPerReqUs: done ? cpu / done : Number.NaN,
    targetCpuCores: cpu / 1e6 / wall,
    clientCpuCores: (cu.user + cu.system) / 1e6 / wall,
    // Stack CPU per request (µs): relay + console (Billing) + Redis + PostgreSQL, each over the same window.
    ...(stackUs
      ? {
          stackCpuPerReqUs: perReq(stackUs.total),
          stackRelayUs: perReq(stackUs.relay),
          stackConsoleUs: perReq(stackUs.console),
          stackRedisUs: perReq(stackUs.redis),
          stackPostgresUs: perReq(stackUs.postgres),
        }
      : {}),
  };
}

type StreamResult = {
  status: number;
  /** ms from request start to the first content frame. */
  ttfb: number;
  frames: number;
  /** Per content frame: send time at the fake and arrival at the client (epoch µs). */
  sent: number[];
  arrived: number[];
};

const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;

/** One streaming call: parses SSE frames as they arrive and timestamps every content delta. */
export async function streamOnce(p: Pool, t: Target, onFirst?: () => void): Promise<StreamResult> {
  const start = performance.now();
  const res = await p.request({ path: t.path, method: 'POST', headers: headersOf(t), body: STREAM_BODY });
  const out: StreamResult = { status: res.statusCode, ttfb: Number.NaN, frames: 0, sent: [], arrived: [] };
  let buf = '';
  for await (const chunk of res.body) {
    const at = nowUs();
    buf += (chunk as Buffer).toString('utf8');
    let i = buf.indexOf('\n\n');
    while (i >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      i = buf.indexOf('\n\n');
      const m = /"content":" (\d{13,})"/.exec(frame);
      if (!m) continue;
      if (out.frames === 0) {
        out.ttfb = performance.now() - start;
        onFirst?.();
      }
      out.frames++;
      out.sent.push(Number(m[1]));
      out.arrived.push(at);
    }
  }
  return out;
}

/** Sequential streams: TTFB, and whether each frame reached the client before the fake sent the next one. */
export async function streamLatency(t: Target, n: number) {
  const p = pool(t, 1);
  const ttfb: number[] = [];
  const delays: number[] = [];
  let buffered = 0;
  let pairs = 0;
  let errors = 0;
  let frames = 0;
  try {
    for (let i = 0; i < 3; i++) await streamOnce(p, t);
    for (let i = 0; i < n; i++) {
      const r = await streamOnce(p, t);
      if (r.status !== 200 || r.frames === 0) {
        errors++;
        continue;
      }
      ttfb.push(r.ttfb);
      frames += r.frames;
      for (let f = 0; f < r.frames; f++) {
        delays.push(((r.arrived[f] as number) - (r.sent[f] as number)) / 1000);
        if (f + 1 < r.frames) {
          pairs++;
          if ((r.arrived[f] as number) >= (r.sent[f + 1] as number)) buffered++;
        }
      }
    }
  } finally {
    await p.close();
  }
  sortNum(ttfb);
  sortNum(delays);
  return {
    n,
    errors,
    frames,
    ttfbP50: percentile(ttfb, 50),
    ttfbP99: percentile(ttfb, 99),
    frameDelayP50: percentile(delays, 50),
    frameDelayP99: percentile(delays, 99),
    framePairs: pairs,
    framesLate: buffered,
  };
}

/** Concurrent streams for `seconds`: CPU of the target per relayed content frame. */
export async function streamCpu(t: Target, concurrency: number, seconds: number) {
  const p = pool(t, concurrency);
  let stop = false;
  let frames = 0;
  let errors = 0;
  let counting = false;
  const worker = async () => {
    while (!stop) {
      try {
        const r = await streamOnce(p, t);
        if (counting) frames += r.frames;
        if (r.status !== 200) errors++;
      } catch {
        errors++;
      }
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  await sleep(500);
  // Count whole streams that end inside the window; CPU over the same window.
  counting = true;
  const cpu0 = cpuMicros(t.pid);
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const cpu = cpuMicros(t.pid) - cpu0;
  const wall = (performance.now() - t0) / 1000;
  const cu = process.cpuUsage(client0);
  counting = false;
  stop = true;
  await Promise.all(workers);
  await p.close();
  return {
    concurrency,
    frames,
    errors,
    framesPerSecond: frames / wall,
    targetCpuPerFrameUs: frames ? cpu / frames : Number.NaN,
    targetCpuCores: cpu / 1e6 / wall,
    clientCpuCores: (cu.user + cu.system) / 1e6 / wall,
  };
}

/**
 * Opens `n` long streams (ramped in steps of 100), waits until all of them are open at once (each has had its
 * first frame and none has ended), samples the target's RSS, then asks the fake to end them (`finish`).
 */
export async function memoryStreams(t: Target, n: number, finish: () => Promise<unknown>) {
  const before = rssMb(t.pid);
  const p = pool(t, n + 16);
  let open = 0;
  let ended = 0;
  let maxConcurrent = 0;
  let errors = 0;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(t.pid));
  }, 50);
  let allOpen: () => void = () => {};
  const allOpenP = new Promise<void>((r) => {
    allOpen = r;
  });
  const t0 = performance.now();
  const calls: Promise<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    calls.push(
      streamOnce(p, t, () => {
        open++;
        maxConcurrent = Math.max(maxConcurrent, open - ended);
        if (open - ended === n) allOpen();
      }).then(
        (r) => {
          ended++;
          if (r.status !== 200) errors++;
        },
        () => {
          ended++;
          errors++;
        },
      ),
    );
    if (i % 100 === 99) await sleep(50);
  }
  const reached = await Promise.race([allOpenP.then(() => true), sleep(30_000).then(() => false)]);
  const openAfterMs = performance.now() - t0;
  await sleep(300);
  const atOpen = rssMb(t.pid);
  clearInterval(sampler);
  peak = Math.max(peak, atOpen);
  await finish();
  await Promise.all(calls);
  await p.close();
  return {
    streams: n,
    maxConcurrent,
    allOpen: reached,
    openAfterMs,
    errors,
    rssBeforeMb: before,
    rssAllOpenMb: atOpen,
    rssPeakMb: peak,
    mbPer1000: ((peak - before) * 1000) / n,
  };
}

/**
 * One call per key, `concurrency` at a time: fills the relay's account cache (token + owner) and the Redis
 * balance cache for every key. Its rate is the cold-cache rate (every call a miss); with `t.stack` it also
 * reports the CPU per call of the relay and of the whole stack, i.e. what a cache miss costs.
 */
export async function eachKey(t: Target, keys: string[], concurrency: number) {
  const p = pool(t, concurrency);
  let next = 0;
  let errors = 0;
  const withStack = t.stack ? { ...t, stack: t.stack } : undefined;
  const stack0 = withStack ? stackSample(withStack) : undefined;
  const cpu0 = cpuMicros(t.pid);
  const t0 = performance.now();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= keys.length) return;
      const one = { ...t, keys: [keys[i] as string] };
      const status = await call(p, one, BODY).catch(() => 0);
      if (status !== 200) errors++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const ms = performance.now() - t0;
  const cpu = cpuMicros(t.pid) - cpu0;
  const stackUs = withStack && stack0 ? stackCpuDelta(stack0, stackSample(withStack)) : undefined;
  await p.close();
  return {
    keys: keys.length,
    concurrency,
    ms,
    perSecond: (keys.length * 1000) / ms,
    errors,
    relayCpuPerCallUs: cpu / keys.length,
    ...(stackUs
      ? {
          stackCpuPerCallUs: stackUs.total / keys.length,
          stackConsoleUs: stackUs.console / keys.length,
          stackRedisUs: stackUs.redis / keys.length,
          stackPostgresUs: stackUs.postgres / keys.length,
        }
      : {}),
  };
}

/**
 * Polls `t` with one chat call for `model` every `intervalMs` (start to start) until `done(status)`; returns
 * performance.now() when the first matching answer arrived, the polls made and the last status. The caller
 * starts its clock before it asks for the change, so the figure covers the change's own commit and notice.
 */
export async function pollUntil(
  t: Target,
  model: string,
  done: (status: number) => boolean,
  opts: { intervalMs: number; timeoutMs: number },
): Promise<{ at: number; polls: number; status: number; timedOut: boolean }> {
  const p = pool(t, 1);
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'reload probe' }] });
  const deadline = performance.now() + opts.timeoutMs;
  let polls = 0;
  let status = 0;
  try {
    for (;;) {
      const started = performance.now();
      try {
        status = await call(p, t, body);
      } catch {
        status = 0;
      }
      polls++;
      const at = performance.now();
      if (done(status)) return { at, polls, status, timedOut: false };
      if (at > deadline) return { at, polls, status, timedOut: true };
      await sleep(Math.max(0, opts.intervalMs - (at - started)));
    }
  } finally {
    await p.close();
  }
}

export type SoakWindow = {
  /** Seconds since the soak started, at the end of this window. */
  atSeconds: number;
  seconds: number;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non200: number;
  streamed: number;
  relayRssMb: number;
};

/**
 * The soak: closed loop at `concurrency` for `seconds`; every `streamEvery`-th call streams (include_usage, the
 * body read to `[DONE]`). Every `windowSeconds` a window of req/s, p50/p99 and the relay's RSS is recorded.
 * Counts every answer by status so the run can be reconciled against the database afterwards.
 */
export async function soak(
  t: Target,
  opts: { concurrency: number; seconds: number; streamEvery: number; windowSeconds: number },
) {
  const p = pool(t, opts.concurrency);
  let stop = false;
  let n = 0;
  const totals = { requests: 0, ok200: 0, non200: 0, failed: 0, streamed: 0, streamOk: 0, streamNoDone: 0 };
  let lat: number[] = [];
  let win = { requests: 0, non200: 0, streamed: 0 };
  const windows: SoakWindow[] = [];
  const t0 = performance.now();
  let winStart = t0;
  const roll = () => {
    const now = performance.now();
    const seconds = (now - winStart) / 1000;
    sortNum(lat);
    windows.push({
      atSeconds: (now - t0) / 1000,
      seconds,
      requests: win.requests,
      rps: win.requests / seconds,
      p50: percentile(lat, 50),
      p99: percentile(lat, 99),
      non200: win.non200,
      streamed: win.streamed,
      relayRssMb: rssMb(t.pid),
    });
    lat = [];
    win = { requests: 0, non200: 0, streamed: 0 };
    winStart = now;
  };
  const worker = async () => {
    while (!stop) {
      const streamed = n++ % opts.streamEvery === opts.streamEvery - 1;
      const s = performance.now();
      let status = 0;
      try {
        const res = await p.request({
          path: t.path,
          method: 'POST',
          headers: headersOf(t),
          body: streamed ? STREAM_BODY : BODY,
        });
        status = res.statusCode;
        if (streamed) {
          const text = await res.body.text();
          totals.streamed++;
          win.streamed++;
          if (status === 200 && text.includes('data: [DONE]')) totals.streamOk++;
          else if (status === 200) totals.streamNoDone++;
        } else await res.body.arrayBuffer();
      } catch {
        totals.failed++;
      }
      lat.push(performance.now() - s);
      totals.requests++;
      win.requests++;
      if (status === 200) totals.ok200++;
      else {
        totals.non200++;
        win.non200++;
      }
    }
  };
  const workers = Array.from({ length: opts.concurrency }, worker);
  const timer = setInterval(roll, opts.windowSeconds * 1000);
  await sleep(opts.seconds * 1000);
  clearInterval(timer);
  stop = true;
  // Calls in flight at the stop still finish and count (they are billed too).
  await Promise.all(workers);
  if ((performance.now() - winStart) / 1000 >= 1 || windows.length === 0) roll();
  await p.close();
  const wall = (performance.now() - t0) / 1000;
  return { ...totals, seconds: wall, rps: totals.requests / wall, windows };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export type PhaseLatency = { n: number; errors: number; p50: number; p99: number; max: number };

/**
 * Issue 13 item 1: one huge prompt without spaces (its tokens once took the relay's event loop for minutes)
 * sent while a steady open-loop load of small calls runs. Small calls are fired at `rate` per second on a fixed
 * schedule (an open loop, so a stalled relay shows up as latency instead of as fewer samples) and grouped by
 * when they were sent: before the big call, during it (from its send to its answer, at least one second) and
 * after it. Reports each phase's latency and the big call's status and answer time.
 */
export async function bigPromptUnderLoad(
  t: Target,
  opts: { rate: number; beforeMs: number; afterMs: number; promptChars: number },
) {
  const small = pool(t, 32);
  const big = pool(t, 1);
  const samples: { at: number; ms: number; ok: boolean }[] = [];
  const inflight = new Set<Promise<void>>();
  const fire = () => {
    const at = performance.now();
    const p = call(small, t, BODY)
      .then(
        (status) => samples.push({ at, ms: performance.now() - at, ok: status === 200 }),
        () => samples.push({ at, ms: performance.now() - at, ok: false }),
      )
      .then(() => {
        inflight.delete(p);
      });
    inflight.add(p);
  };
  const bigBody = JSON.stringify({
    model: 'gpt-4o-mini',
    max_tokens: 16,
    messages: [{ role: 'user', content: 'A'.repeat(opts.promptChars) }],
  });
  const interval = 1000 / opts.rate;
  const t0 = performance.now();
  let bigStart = Number.POSITIVE_INFINITY;
  let bigEnd = Number.POSITIVE_INFINITY;
  let bigStatus = 0;
  let bigError = '';
  let stopAt = Number.POSITIVE_INFINITY;
  try {
    for (let i = 0; ; i++) {
      const due = t0 + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const now = performance.now();
      if (now >= stopAt) break;
      if (bigStart === Number.POSITIVE_INFINITY && now - t0 >= opts.beforeMs) {
        bigStart = now;
        big
          .request({ path: t.path, method: 'POST', headers: headersOf(t), body: bigBody })
          .then(async (res) => {
            await res.body.arrayBuffer();
            bigStatus = res.statusCode;
          })
          .catch((e: unknown) => {
            bigError = (e as Error).message;
          })
          .finally(() => {
            bigEnd = performance.now();
            stopAt = Math.max(bigEnd, bigStart + 1000) + opts.afterMs;
          });
      }
      // Safety: never run longer than a minute.
      if (now - t0 > 60_000) break;
      fire();
    }
    await Promise.all(inflight);
  } finally {
    await small.close();
    await big.close();
  }
  const duringEnd = Math.max(bigEnd, bigStart + 1000);
  const phase = (keep: (at: number) => boolean): PhaseLatency => {
    const xs = samples.filter((s) => keep(s.at));
    const lat = sortNum(xs.map((s) => s.ms));
    return {
      n: xs.length,
      errors: xs.filter((s) => !s.ok).length,
      p50: percentile(lat, 50),
      p99: percentile(lat, 99),
      max: lat.at(-1) ?? Number.NaN,
    };
  };
  return {
    rate: opts.rate,
    promptChars: opts.promptChars,
    bigStatus,
    bigError,
    bigMs: bigEnd - bigStart,
    before: phase((at) => at < bigStart),
    during: phase((at) => at >= bigStart && at <= duringEnd),
    after: phase((at) => at > duringEnd),
  };
}
