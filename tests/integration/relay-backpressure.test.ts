/**
 * Backpressure (issue 23, item 8; ADR 039): a client that does not read, or an upstream that does not, must not
 * grow the relay or the console. Each test sends up to 200 MB as fast as the path takes it (the fakes and test
 * clients keep at most ~1 MiB waiting themselves) and samples this process's RSS: the relay, the console and the
 * fakes all run here, so the growth is theirs.
 *
 * - Realtime, upstream -> client: the client's socket is paused. The relay stops reading the upstream at the
 *   high-water mark; after RELAY_STREAM_STALL_MS it sends an `error` event, cancels the response, bills what the
 *   upstream reports for it and closes with 1008.
 * - Realtime, client -> upstream: the upstream stops reading; the relay stops reading the client, then ends the
 *   session with an `error` event and 1011.
 * - SSE through the relay and through the console's forwarding: a client that never reads the body. These paths
 *   were already bounded (pull-driven Web streams written with 'drain' by @hono/node-server, undici reading the
 *   upstream only when asked); the tests hold them to it.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../../server/console.ts';
import { type FakeRealtime, startFakeRealtime } from '../fakes/openai-realtime-upstream.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import { openRealtime, type RealtimeClient } from '../fakes/realtime-client.ts';
import { startForwardingConsole } from './console-harness.ts';
import {
  drained,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

const MODEL = 'gpt-realtime';
const CHAT = 'gpt-4o-flood';
const FLOOD = 200 * 1024 * 1024;
/** What the paths may grow by while 200 MB are offered (the limits are 1 MiB high water, 16 MiB hard). */
const MAX_GROWTH_MB = 64;
const STALL_MS = 600;
// M 2, CR 4, AR 16, ACR 2.
const cost = (u: { textIn: number; audioIn: number; textOut: number; audioOut: number }) =>
  (u.textIn + u.textOut * 4 + u.audioIn * 16 + u.audioOut * 16 * 2) * 2;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let rt: FakeRealtime;
let openai: FakeOpenAI;
let stack: Stack;
let console_: RunningConsole;
const clients: RealtimeClient[] = [];

beforeAll(async () => {
  rt = await startFakeRealtime();
  openai = await startFakeOpenAI();
  stack = await startStack({
    suffix: 'relay_backpressure',
    env: { RELAY_STREAM_STALL_MS: String(STALL_MS) },
  });
  await seedChannel(stack, { baseUrl: rt.url, models: [MODEL] });
  await seedChannel(stack, { baseUrl: openai.url, models: [CHAT] });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ [MODEL]: 2, [CHAT]: 1 }),
    CompletionRatio: JSON.stringify({ [MODEL]: 4, [CHAT]: 1 }),
    AudioRatio: JSON.stringify({ [MODEL]: 16 }),
    AudioCompletionRatio: JSON.stringify({ [MODEL]: 2 }),
    RetryTimes: '0',
  });
  console_ = await startForwardingConsole(stack);
  // Warm both paths up (modules, pools, JIT), so the measurements below see only what a flood adds.
  const { key } = await account();
  for (const base of [stack.relays[0]!.httpUrl, console_.url]) {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: CHAT, stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    await res.text();
    const c = await openSession(base, key);
    c.send({ type: 'response.create' });
    await c.waitFor('response.done');
    c.ws.close();
    await c.closed;
  }
  rt.reset();
}, 120_000);
afterEach(() => {
  for (const c of clients.splice(0)) c.ws.terminate();
  rt.reset();
});
afterAll(async () => {
  await console_?.stop();
  await stack?.close();
  await rt?.close();
  await openai?.close();
});

async function account() {
  const user = await seedUser(stack, { quota: 100_000_000 });
  const token = await seedToken(stack, user.id, { remainQuota: 100_000_000 });
  return { user, key: `sk-${token.key}` };
}

/** Peak RSS growth of this process (MB) from now until `stop()`. */
function rssGrowth() {
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 20);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage.rss());
      return (peak - base) / 2 ** 20;
    },
  };
}

/** Resolves when `check` holds, or after `ms` (bounded waits: a test never hangs on a path that misbehaves). */
async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await sleep(20);
}

const withTimeout = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, sleep(ms).then(() => Promise.reject(new Error(`timed out: ${what}`)))]);

async function logsOf(userId: number) {
  await drained(stack);
  return stack.sql<{ quota: number; completion_tokens: number; other: string }>(
    `select quota::int as quota, completion_tokens::int as completion_tokens, other from logs
     where user_id = ? and type = 2 order by id`,
    [userId],
  );
}

async function openSession(base: string, key: string): Promise<RealtimeClient> {
  const c = await openRealtime(`${base.replace('http', 'ws')}/v1/realtime?model=${MODEL}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  clients.push(c);
  await c.waitFor('session.created');
  return c;
}

/** A client that stops reading while the upstream floods audio deltas; `base` is the relay's or the console's. */
async function clientThatDoesNotRead(base: string) {
  const { user, key } = await account();
  const c = await openSession(base, key);
  const usage = { textIn: 10, audioIn: 0, textOut: 0, audioOut: 0 };
  rt.next({ flood: { bytes: FLOOD }, usage });
  c.ws.pause();
  const mem = rssGrowth();
  c.send({ type: 'response.create' });
  const conn = await withTimeout(
    (async () => {
      await until(() => rt.connections.length > 0, 2_000);
      return rt.connections[0]!;
    })(),
    3_000,
    'the upstream session',
  );
  // Until the relay ends the session (its upstream closes), or the whole flood went through it.
  let upstreamClosed = false;
  void conn.closed.then(() => {
    upstreamClosed = true;
  });
  await until(() => upstreamClosed || conn.flooded * 32 * 1024 >= FLOOD, 20_000);
  const growth = mem.stop();
  expect(growth).toBeLessThan(MAX_GROWTH_MB);
  // The upstream was slowed down: it could not push the 200 MB anywhere.
  expect(conn.flooded * 32 * 1024).toBeLessThan(MAX_GROWTH_MB * 2 ** 20);
  expect(upstreamClosed).toBe(true);

  // The client reads again: what was waiting, then the relay's error event and the close.
  c.ws.resume();
  const closed = await withTimeout(c.closed, 10_000, 'the client close');
  expect(closed.code).toBe(1008);
  const last = c.events.at(-1);
  expect(last).toMatchObject({
    type: 'error',
    error: { type: 'invalid_request_error', code: 'client_too_slow' },
  });
  expect(String((last as { error: { message: string } }).error.message)).toContain('not reading');

  // Billed once, for what the upstream reports the cancelled response produced.
  const rows = await logsOf(user.id);
  expect(rows.map((r) => r.quota)).toEqual([cost({ ...usage, audioOut: conn.flooded })]);
  const cancel = conn.received.find((e) => (e as { type?: string }).type === 'response.cancel');
  expect(cancel).toBeDefined();
  return { growth, flooded: conn.flooded };
}

describe('realtime backpressure', () => {
  it('a client that does not read: the relay pauses the upstream, then ends the session with an error (1008) and bills the cancelled response', async () => {
    await clientThatDoesNotRead(stack.relays[0]!.httpUrl);
  });

  it('an upstream that does not read: the relay stops reading the client, then ends the session with an error (1011)', async () => {
    const { user, key } = await account();
    const c = await openSession(stack.relays[0]!.httpUrl, key);
    const conn = rt.connections[0]!;
    conn.pause();
    try {
      const event = JSON.stringify({ type: 'input_audio_buffer.append', audio: 'A'.repeat(32 * 1024) });
      const mem = rssGrowth();
      let sent = 0;
      const deadline = Date.now() + 20_000;
      // As fast as the relay takes it, keeping at most 1 MiB in this client's own socket.
      while (sent < FLOOD && c.ws.readyState === c.ws.OPEN && Date.now() < deadline) {
        if (c.ws.bufferedAmount > 1 << 20) {
          await sleep(2);
          continue;
        }
        c.ws.send(event);
        sent += event.length;
      }
      const growth = mem.stop();
      expect(growth).toBeLessThan(MAX_GROWTH_MB);
      expect(sent).toBeLessThan(MAX_GROWTH_MB * 2 ** 20);
      const closed = await withTimeout(c.closed, 10_000, 'the client close');
      expect(closed.code).toBe(1011);
      expect(c.events.at(-1)).toMatchObject({
        type: 'error',
        error: { type: 'server_error', code: 'upstream_too_slow' },
      });
      expect(await logsOf(user.id)).toEqual([]);
    } finally {
      conn.resume();
    }
  });

  it('through the console: a client that does not read is bounded and closed the same way', async () => {
    await clientThatDoesNotRead(console_.url);
  });
});

/**
 * POSTs a streamed chat completion with node:http and never reads the body (the response stays paused, so the
 * client's socket stops reading once its buffers are full). Returns the response and a way to cut it.
 */
function streamNeverRead(base: string, key: string): Promise<{ res: IncomingMessage; cut: () => void }> {
  const body = JSON.stringify({
    model: CHAT,
    stream: true,
    messages: [{ role: 'user', content: 'Say a lot.' }],
  });
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
    req.once('response', (res) => resolve({ res, cut: () => req.destroy() }));
    req.once('error', reject);
    req.end(body);
  });
}

describe('SSE backpressure', () => {
  for (const via of ['relay', 'console'] as const)
    it(`a client that never reads a stream through the ${via}: the upstream is slowed down, then the stream is ended, billed, and its last event says why`, async () => {
      const { user, key } = await account();
      const flood: { bytes: number; sent?: number } = { bytes: FLOOD };
      openai.on({ model: CHAT, respond: { flood }, times: 1 });
      const mem = rssGrowth();
      const { res, cut } = await streamNeverRead(
        via === 'relay' ? stack.relays[0]!.httpUrl : console_.url,
        key,
      );
      try {
        expect(res.statusCode).toBe(200);
        // Until the upstream cannot write any more (every buffer on the way is full) or the flood is through.
        const deadline = Date.now() + 20_000;
        for (let last = -1; Date.now() < deadline; ) {
          await sleep(300);
          const now = flood.sent ?? 0;
          if ((now === last && now > 0) || now >= FLOOD) break;
          last = now;
        }
        const growth = mem.stop();
        expect(growth).toBeLessThan(MAX_GROWTH_MB);
        expect(flood.sent ?? 0).toBeLessThan(MAX_GROWTH_MB * 2 ** 20);

        // The client still reads nothing: after RELAY_STREAM_STALL_MS the relay ends the stream and bills it
        // once, for the text it passed on (counted locally: the upstream's usage never came).
        let rows: Awaited<ReturnType<typeof logsOf>> = [];
        for (let i = 0; i < 50 && rows.length === 0; i++) {
          rows = await logsOf(user.id);
          if (rows.length === 0) await sleep(100);
        }
        expect(rows).toHaveLength(1);
        expect(rows[0]!.completion_tokens).toBeGreaterThan(0);
        expect(JSON.parse(rows[0]!.other)).toMatchObject({ usage_estimated: true });

        // Reading again, the client gets what waited, then the error event, then the end of the stream.
        let tail = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          tail = (tail + chunk).slice(-4096);
        });
        await withTimeout(
          new Promise((resolve) => res.once('end', resolve)),
          10_000,
          'the end of the stream',
        );
        const last = tail.trim().split('\n\n').at(-1)!;
        expect(JSON.parse(last.replace(/^data: /, ''))).toMatchObject({
          error: { type: 'invalid_request_error', code: 'client_too_slow' },
        });
        expect(await logsOf(user.id)).toHaveLength(1);
      } finally {
        cut();
      }
    });
});
