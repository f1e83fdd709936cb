/**
 * The realtime WebSocket path under Deno (`npm run test:deno`): the relay runs on Deno (Deno.serve with
 * Deno.upgradeWebSocket for the client side, Deno's WebSocket with its headers option for the upstream), Deno's
 * own WebSocket client opens `/v1/realtime` with the key by header and by subprotocol, and each response.done
 * reaches PostgreSQL through Billing gRPC as one exact log row, as on Node.
 */
import { startFakeRealtime } from '../../../tests/fakes/openai-realtime-upstream.ts';
import {
  drained,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from '../../../tests/integration/relay-stack.ts';

declare const Deno: {
  test(def: {
    name: string;
    sanitizeOps?: boolean;
    sanitizeResources?: boolean;
    fn: () => Promise<void>;
  }): void;
  connect(o: { hostname: string; port: number }): Promise<{
    write(b: Uint8Array): Promise<number>;
    close(): void;
  }>;
  memoryUsage(): { rss: number };
};

function assertEquals<T>(actual: T, expected: T, what: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

type Session = { ws: WebSocket; events: Array<Record<string, unknown>>; done: (n: number) => Promise<void> };

/** Deno's WebSocket client (its `headers` option is Deno's extension of the standard constructor). */
function open(
  url: string,
  init: { headers?: Record<string, string>; protocols?: string[] },
): Promise<Session> {
  const Ctor = WebSocket as unknown as new (u: string, o: typeof init) => WebSocket;
  const ws = new Ctor(url, init);
  const events: Array<Record<string, unknown>> = [];
  const listeners: Array<() => void> = [];
  ws.addEventListener('message', (ev) => {
    if (typeof ev.data === 'string') events.push(JSON.parse(ev.data));
    for (const l of listeners.slice()) l();
  });
  const done = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const t = setTimeout(
        () => reject(new Error(`no ${n} response.done; got ${events.map((e) => e.type)}`)),
        5_000,
      );
      const check = () => {
        if (events.filter((e) => e.type === 'response.done').length >= n) {
          clearTimeout(t);
          resolve();
        } else listeners.push(check);
      };
      check();
    });
  return new Promise((resolve, reject) => {
    ws.addEventListener('open', () => resolve({ ws, events, done }));
    ws.addEventListener('error', (e) => reject(new Error((e as ErrorEvent).message || 'handshake failed')));
  });
}

Deno.test({
  name: 'realtime on Deno: key by header and by subprotocol, each response.done billed once',
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const fake = await startFakeRealtime();
    const stack = await startStack({ suffix: 'deno_realtime' });
    try {
      const user = await seedUser(stack, { quota: 1_000_000 });
      const token = await seedToken(stack, user.id, { remainQuota: 500_000 });
      await seedChannel(stack, { baseUrl: fake.url, models: ['gpt-realtime'] });
      await setOptions(stack, {
        ModelRatio: '{"gpt-realtime":2}',
        CompletionRatio: '{"gpt-realtime":4}',
        AudioRatio: '{"gpt-realtime":16}',
        AudioCompletionRatio: '{"gpt-realtime":2}',
      });
      const url = `${stack.relays[0]!.httpUrl.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`;
      const usage = { textIn: 10, audioIn: 20, textOut: 2, audioOut: 30 };
      fake.next({ text: 'one', usage }, { text: 'two', usage }, { text: 'three', usage });

      const a = await open(url, { headers: { authorization: `Bearer sk-${token.key}` } });
      a.ws.send(JSON.stringify({ type: 'response.create' }));
      await a.done(1);
      a.ws.send(JSON.stringify({ type: 'response.create' }));
      await a.done(2);
      const text = a.events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta);
      assertEquals(text.join(''), 'onetwo', 'streamed text');
      a.ws.close();

      const b = await open(url, { protocols: ['realtime', `openai-insecure-api-key.sk-${token.key}`] });
      assertEquals(b.ws.protocol, 'realtime', 'selected subprotocol');
      b.ws.send(JSON.stringify({ type: 'response.create' }));
      await b.done(1);
      b.ws.close();

      // A wrong key never opens.
      const refused = await open(url, { headers: { authorization: 'Bearer sk-wrong' } }).then(
        () => false,
        () => true,
      );
      assertEquals(refused, true, 'wrong key refused');

      await new Promise((r) => setTimeout(r, 300));
      await drained(stack);
      const rows = await stack.sql<{
        quota: number;
        prompt_tokens: number;
        completion_tokens: number;
        other: string;
      }>(
        `select quota::int as quota, prompt_tokens::int as prompt_tokens, completion_tokens::int as completion_tokens,
           other from logs where user_id = ? and type = 2 order by id`,
        [user.id],
      );
      // (10 + 2·4 + 20·16 + 30·16·2)·2 = 2596 per response.
      assertEquals(
        rows.map((r) => [r.quota, r.prompt_tokens, r.completion_tokens]),
        [
          [2596, 30, 32],
          [2596, 30, 32],
          [2596, 30, 32],
        ],
        'log rows',
      );
      assertEquals(JSON.parse(rows[0]!.other).ws, true, 'other.ws');
      assertEquals(
        fake.connections.map((c) => c.auth),
        ['header', 'header'],
        'upstream auth',
      );
    } finally {
      await stack.close();
      await fake.close();
    }
  },
});

/** A WebSocket client on a raw TCP connection that sends one text event and then never reads (ADR 039). */
async function clientThatNeverReads(port: number, key: string, event: string) {
  const conn = await Deno.connect({ hostname: '127.0.0.1', port });
  const head =
    'GET /v1/realtime?model=gpt-realtime HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n' +
    'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' +
    `Authorization: Bearer ${key}\r\n\r\n`;
  await conn.write(new TextEncoder().encode(head));
  return {
    async send() {
      // One masked text frame (mask key 0: the payload goes as is).
      const payload = new TextEncoder().encode(event);
      await conn.write(new Uint8Array([0x81, 0x80 | payload.length, 0, 0, 0, 0, ...payload]));
    },
    close: () => conn.close(),
  };
}

Deno.test({
  name: 'realtime on Deno: a client that never reads is bounded by the hard limit and its session ends, billed',
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const fake = await startFakeRealtime();
    const stack = await startStack({
      suffix: 'deno_realtime_bp',
      env: { RELAY_STREAM_STALL_MS: '600', RELAY_STREAM_BUFFER_MAX_BYTES: '4194304' },
    });
    try {
      const user = await seedUser(stack, { quota: 100_000_000 });
      const token = await seedToken(stack, user.id, { remainQuota: 100_000_000 });
      await seedChannel(stack, { baseUrl: fake.url, models: ['gpt-realtime'] });
      await setOptions(stack, {
        ModelRatio: '{"gpt-realtime":2}',
        CompletionRatio: '{"gpt-realtime":4}',
        AudioRatio: '{"gpt-realtime":16}',
        AudioCompletionRatio: '{"gpt-realtime":2}',
      });
      const usage = { textIn: 10, audioIn: 0, textOut: 0, audioOut: 0 };
      const FLOOD = 200 * 1024 * 1024;
      fake.next({ flood: { bytes: FLOOD }, usage });
      const port = new URL(stack.relays[0]!.httpUrl).port;
      const client = await clientThatNeverReads(
        Number(port),
        `sk-${token.key}`,
        JSON.stringify({ type: 'response.create' }),
      );
      try {
        for (let i = 0; i < 100 && fake.connections.length === 0; i++)
          await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => setTimeout(r, 100));
        const base = Deno.memoryUsage().rss;
        let peak = base;
        await client.send();
        const conn = fake.connections[0]!;
        let closed = false;
        void conn.closed.then(() => {
          closed = true;
        });
        const deadline = Date.now() + 20_000;
        while (!closed && conn.flooded * 32 * 1024 < FLOOD && Date.now() < deadline) {
          peak = Math.max(peak, Deno.memoryUsage().rss);
          await new Promise((r) => setTimeout(r, 20));
        }
        const growthMb = (peak - base) / 2 ** 20;
        if (growthMb >= 64) throw new Error(`the relay grew by ${growthMb.toFixed(1)} MB`);
        assertEquals(closed, true, 'the session ended');
        if (conn.flooded * 32 * 1024 >= 64 * 2 ** 20)
          throw new Error(`the upstream sent ${conn.flooded} deltas through a client that does not read`);
        await new Promise((r) => setTimeout(r, 300));
        await drained(stack);
        const rows = await stack.sql<{ quota: number }>(
          `select quota::int as quota from logs where user_id = ? and type = 2`,
          [user.id],
        );
        // Billed once, for what the upstream reports the cancelled response produced: (10 + n·16·2)·2.
        assertEquals(
          rows.map((r) => r.quota),
          [(10 + conn.flooded * 32) * 2],
          'log rows',
        );
      } finally {
        client.close();
      }
    } finally {
      await stack.close();
      await fake.close();
    }
  },
});
