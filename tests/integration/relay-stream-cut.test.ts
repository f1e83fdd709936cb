/**
 * Streams cut mid-way (issue 13, item 5): the client goes away, the upstream dies, or the relay is stopped while
 * a stream is in flight. Each is billed once for what was delivered, and its hold is released at once (not by
 * the sweeper ~11 minutes later). Runs with the in-process store and with Redis; the relay is in this process
 * (real HTTP, real Billing gRPC, the fake upstream), so the store's balances can be read directly.
 */
import { testRedisPrefix, testRedisUrl } from '@switchyard/db/testing.ts';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import {
  drained,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

const MODEL = 'gpt-4o';
/** Many words, so a stream lasts long enough to be cut: 40 content chunks of one token each. */
const LONG = Array.from({ length: 40 }, () => 'story').join(' ');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake?.close();
});

async function dropRedisKeys(prefix: string) {
  const admin = createClient({ url: testRedisUrl() });
  await admin.connect();
  try {
    const keys: string[] = [];
    for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) keys.push(...batch);
    if (keys.length > 0) await admin.del(keys);
  } finally {
    await admin.close();
  }
}

for (const store of ['memory', 'redis'] as const) {
  describe(`a stream cut mid-way is billed for what was delivered and its hold released (${store} store)`, () => {
    let stack: Stack;

    beforeAll(async () => {
      stack = await startStack({
        suffix: `stream_cut_${store}`,
        redis: store === 'redis',
        env: { RELAY_DRAIN_TIMEOUT_MS: '300' },
      });
      await seedChannel(stack, { baseUrl: fake.url, models: [MODEL] });
      await setOptions(stack, {
        ModelRatio: JSON.stringify({ [MODEL]: 1 }),
        CompletionRatio: JSON.stringify({ [MODEL]: 1 }),
        RetryTimes: '0',
      });
    }, 60_000);
    afterAll(async () => {
      await stack?.close();
      if (store === 'redis') await dropRedisKeys(`${testRedisPrefix()}stream_cut_redis:`);
    });

    async function account() {
      const user = await seedUser(stack, { quota: 10_000_000 });
      const token = await seedToken(stack, user.id, { remainQuota: 5_000_000 });
      return { userId: user.id, tokenId: token.id, key: token.key };
    }

    /** Streams a chat call and stops reading (aborting when asked) after `stopAfter` content chunks. */
    async function stream(relayUrl: string, key: string, stopAfter: number, abort: boolean) {
      const ac = new AbortController();
      const res = await fetch(`${relayUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: MODEL,
          stream: true,
          max_tokens: 2_000,
          messages: [{ role: 'user', content: 'Tell me a long story.' }],
        }),
        signal: ac.signal,
      });
      expect(res.status).toBe(200);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      const contents: string[] = [];
      let buf = '';
      let sawDone = false;
      const rest = (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            buf += value;
            for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
              const data = buf.slice(0, i).replace(/^data: /, '');
              buf = buf.slice(i + 2);
              if (data === '[DONE]') sawDone = true;
              else {
                const c = JSON.parse(data).choices?.[0]?.delta?.content;
                if (c) contents.push(c);
              }
              if (abort && contents.length >= stopAfter) {
                ac.abort();
                return;
              }
            }
          }
        } catch {
          // cut: what arrived is what counts
        }
      })();
      return {
        rest,
        contents,
        requestId: res.headers.get('x-request-id')!,
        get sawDone() {
          return sawDone;
        },
        async until(n: number) {
          for (let i = 0; i < 200 && contents.length < n; i++) await sleep(25);
        },
      };
    }

    async function committed(a: { userId: number; tokenId: number }) {
      const [u] = await stack.sql<{ quota: string }>('select quota from users where id = ?', [a.userId]);
      const [t] = await stack.sql<{ remain_quota: string }>('select remain_quota from tokens where id = ?', [
        a.tokenId,
      ]);
      return { user: Number(u!.quota), token: Number(t!.remain_quota) };
    }

    async function logsOf(userId: number) {
      return stack.sql<{ request_id: string; quota: string; completion_tokens: number }>(
        `select request_id, quota, completion_tokens from logs where type = 2 and user_id = ?`,
        [userId],
      );
    }

    async function waitForLogs(userId: number, n: number) {
      for (let i = 0; i < 200; i++) {
        if ((await logsOf(userId)).length >= n) return;
        await sleep(50);
      }
      throw new Error(`no log row for user ${userId}`);
    }

    /** One log row for the call, its completion = the delivered chunks, and the user paid exactly that. */
    async function expectBilledForDelivered(
      a: { userId: number; tokenId: number },
      requestId: string,
      delivered: number,
    ) {
      await waitForLogs(a.userId, 1);
      await sleep(300);
      const rows = await logsOf(a.userId);
      expect(rows.map((r) => r.request_id)).toEqual([requestId]);
      // Each fake chunk is one token (" story"): the relay counts what it passed on (it may have read one
      // chunk the client never saw before the cut reached it).
      expect(rows[0]!.completion_tokens).toBeGreaterThanOrEqual(delivered);
      expect(rows[0]!.completion_tokens).toBeLessThan(40);
      const now = await committed(a);
      expect(10_000_000 - now.user).toBe(Number(rows[0]!.quota));
      expect(5_000_000 - now.token).toBe(Number(rows[0]!.quota));
      return Number(rows[0]!.quota);
    }

    /** No hold left: the store's spendable (once Billing acknowledged) is the committed quota again. */
    async function expectNoHold(relay: Stack['relays'][number], a: { userId: number; tokenId: number }) {
      await drained(stack);
      const now = await committed(a);
      const userBal = await relay.store.balance({ kind: 'user', id: a.userId });
      const tokenBal = await relay.store.balance({ kind: 'token', id: a.tokenId });
      expect([userBal, tokenBal]).toEqual([now.user, now.token]);
    }

    it('the client disconnects: billed for the delivered chunks, hold released', async () => {
      const a = await account();
      fake.reset();
      fake.on({ model: MODEL, respond: { content: LONG, streamDelayMs: 60 } });
      const relay = stack.relays[0]!;
      const s = await stream(relay.httpUrl, a.key, 3, true);
      await s.rest;
      expect(s.sawDone).toBe(false);
      await expectBilledForDelivered(a, s.requestId, 3);
      await expectNoHold(relay, a);
    });

    it('the upstream dies: billed for what was produced, hold released', async () => {
      const a = await account();
      fake.reset();
      // role chunk + 5 content chunks, then the socket is destroyed.
      fake.on({ model: MODEL, respond: { content: LONG, dropAfterChunks: 6 } });
      const relay = stack.relays[0]!;
      const s = await stream(relay.httpUrl, a.key, 1_000, false);
      await s.rest;
      expect(s.contents.length).toBe(5);
      expect(s.sawDone).toBe(false);
      await expectBilledForDelivered(a, s.requestId, 5);
      await expectNoHold(relay, a);
    });

    it('the relay is stopped mid-stream: billed for what was delivered before the cut, hold released', async () => {
      const a = await account();
      fake.reset();
      fake.on({ model: MODEL, respond: { content: LONG, streamDelayMs: 100 } });
      const victim = await stack.addRelay();
      const s = await stream(victim.httpUrl, a.key, 1_000, false);
      await s.until(3);
      // Drains for RELAY_DRAIN_TIMEOUT_MS (300 ms), then cuts what is still streaming.
      await victim.stop();
      await s.rest;
      stack.relays.splice(stack.relays.indexOf(victim), 1);
      expect(s.sawDone).toBe(false);
      expect(s.contents.length).toBeLessThan(40);
      await expectBilledForDelivered(a, s.requestId, s.contents.length);
      if (store === 'redis') {
        // The hold lived in Redis: it is gone, and pend is back to 0 once Billing acknowledged the usage.
        await expectNoHold(stack.relays[0]!, a);
        const c = createClient({ url: testRedisUrl() });
        await c.connect();
        try {
          const keys: string[] = [];
          for await (const b of c.scanIterator({ MATCH: `${testRedisPrefix()}stream_cut_redis:*hold:*` }))
            keys.push(...b);
          const holds = await Promise.all(keys.map((k) => c.hGet(k, 'user')));
          expect(holds.filter((u) => u === String(a.userId))).toEqual([]);
        } finally {
          await c.close();
        }
      }
    });
  });
}
