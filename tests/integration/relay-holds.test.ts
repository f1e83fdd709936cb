/**
 * Holds that bound what a call can cost (issue 13, item 3; ADR 009), through the whole relay in both store
 * modes: 100 concurrent calls, each with a small `file` part and `max_tokens: 5`, at an upstream that bills the
 * file as 1,000 prompt tokens. The hostile test saw all 100 served on a balance for 10 (quota -6,930) because
 * the hold counted the file as 0 tokens; a file part now reserves OPAQUE_PART_HOLD_TOKENS, so the balance can
 * never go below 0 and the calls it cannot cover are refused with the quota error before any upstream call.
 * A call without max_tokens holds flexibly: on a balance of a few cents it is served, and racing ones are
 * refused, so the balance goes below zero by one call's excess at most.
 */

import { defaultOptionValues } from '@switchyard/db/options/registry.ts';
import { testRedisPrefix, testRedisUrl } from '@switchyard/db/testing.ts';
import { OPAQUE_PART_HOLD_TOKENS, requestHold } from '@switchyard/relay/core/hold.ts';
import { estimateQuota, priceTablesFrom, resolvePrice } from '@switchyard/relay/core/pricing.ts';
import { createClient } from 'redis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
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

const PRICES = {
  ModelRatio: JSON.stringify({ 'gpt-4o': 1.25 }),
  CompletionRatio: JSON.stringify({ 'gpt-4o': 4 }),
  GroupRatio: JSON.stringify({ default: 1 }),
  RetryTimes: '0',
  ModelRequestRateLimitEnabled: 'false',
};
/** What the upstream bills per call: the file read as 1,000 prompt tokens, and the 5 completion tokens. */
const USAGE = { prompt_tokens: 1_000, completion_tokens: 5 };
const COST = Math.round((1_000 + 5 * 4) * 1.25); // 1275
const CALLS = 100;

const body = {
  model: 'gpt-4o',
  max_tokens: 5,
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Summarise this file.' },
        {
          type: 'file',
          file: {
            filename: 'a.pdf',
            file_data: `data:application/pdf;base64,${Buffer.from('%PDF-1.4 small file').toString('base64')}`,
          },
        },
      ],
    },
  ],
};

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

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(() => fake.reset());

for (const store of ['memory', 'redis'] as const) {
  describe(`holds bound the cost of every call (${store} store)`, () => {
    let stack: Stack;

    beforeAll(async () => {
      stack = await startStack({ suffix: `relay_holds_${store}`, redis: store === 'redis' });
      await seedChannel(stack, { baseUrl: fake.url, models: ['gpt-4o'] });
      await setOptions(stack, PRICES);
    }, 60_000);
    afterAll(async () => {
      await stack?.close();
      if (store === 'redis') await dropRedisKeys(`${testRedisPrefix()}relay_holds_redis:`);
    });

    async function account(quota: number) {
      const user = await seedUser(stack, { quota });
      const token = await seedToken(stack, user.id, { remainQuota: quota });
      return { userId: user.id, key: token.key };
    }

    const call = (key: string, payload: unknown = body) =>
      fetch(`${stack.relays[0]!.httpUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(payload),
      }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { error?: { code?: string; message?: string; type?: string } },
      }));

    async function committed(userId: number) {
      await drained(stack);
      const [u] = await stack.sql<{ quota: string }>('select quota from users where id = ?', [userId]);
      const [t] = await stack.sql<{ remain_quota: string }>(
        'select remain_quota from tokens where user_id = ?',
        [userId],
      );
      return { quota: Number(u!.quota), tokenRemain: Number(t!.remain_quota) };
    }

    it(`${CALLS} concurrent calls with a file part and max_tokens 5 on a balance for 10: no overdraft`, async () => {
      const a = await account(10 * COST);
      // Slow enough that every call is in flight at once (the race the hostile test won).
      fake.on({ model: 'gpt-4o', respond: { usage: USAGE, delayMs: 300 } });
      const results = await Promise.all(Array.from({ length: CALLS }, () => call(a.key)));
      const served = results.filter((r) => r.status === 200).length;
      const refused = results.filter(
        (r) => r.status === 403 && r.body.error?.code === 'insufficient_user_quota',
      ).length;
      expect(
        served + refused,
        JSON.stringify(results.find((r) => r.status !== 200 && r.status !== 403)),
      ).toBe(CALLS);
      const after = await committed(a.userId);
      // ADR 009: a call that states max_tokens and whose parts are within their ceilings never exceeds its hold,
      // so no balance goes below zero, however many calls race.
      expect(after.quota).toBeGreaterThanOrEqual(0);
      expect(after.tokenRemain).toBeGreaterThanOrEqual(0);
      expect(after.quota).toBe(10 * COST - served * COST);
      expect(refused).toBeGreaterThanOrEqual(90);
      // Refused calls never reached the upstream.
      expect(fake.requests.filter((r) => r.path.endsWith('/chat/completions')).length).toBe(served);
    });

    it('a balance that covers ten holds serves at least those ten racing calls and is charged their cost', async () => {
      // The relay's own hold for this request (prompt text + the file's ceiling + 5·4 completion, ·1.25).
      const values = {
        ...defaultOptionValues(),
        ModelRatio: { 'gpt-4o': 1.25 },
        CompletionRatio: { 'gpt-4o': 4 },
        GroupRatio: { default: 1 },
      };
      const tables = priceTablesFrom({ get: (k) => values[k] as never });
      const held = estimateQuota(
        resolvePrice(tables, 'gpt-4o', 'default')!,
        (await requestHold('chat', body, 'gpt-4o', tables.preConsumedQuota)).estimate,
        tables,
      );
      expect(held).toBeGreaterThan(OPAQUE_PART_HOLD_TOKENS);
      const a = await account(10 * held);
      fake.on({ model: 'gpt-4o', respond: { usage: USAGE, delayMs: 1_000 } });
      const results = await Promise.all(Array.from({ length: CALLS }, () => call(a.key)));
      const served = results.filter((r) => r.status === 200).length;
      // Calls arriving after the first ones settled may be served too; never fewer than the balance holds.
      expect(served).toBeGreaterThanOrEqual(10);
      expect(served).toBeLessThan(CALLS);
      expect((await committed(a.userId)).quota).toBe(10 * held - served * COST);
    });

    describe('a call without max_tokens on a balance of a few cents (flexible hold)', () => {
      /** A plain `openai` SDK call: no output limit. */
      const plain = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Say hello.' }] };
      /** 20,000 quota: $0.04, below the 32,768-token ceiling hold (about $0.33) and above the old allowance. */
      const BALANCE = 20_000;

      async function holds() {
        const values = {
          ...defaultOptionValues(),
          ModelRatio: { 'gpt-4o': 1.25 },
          CompletionRatio: { 'gpt-4o': 4 },
          GroupRatio: { default: 1 },
        };
        const tables = priceTablesFrom({ get: (k) => values[k] as never });
        const price = resolvePrice(tables, 'gpt-4o', 'default')!;
        const { estimate } = await requestHold('chat', plain, 'gpt-4o', tables.preConsumedQuota);
        return {
          ceiling: estimateQuota(price, estimate, tables),
          floor: estimateQuota(price, { ...estimate, defaultMaxTokens: tables.preConsumedQuota }, tables),
        };
      }

      it('is served and charged its cost (the ceiling hold refused it)', async () => {
        const { ceiling, floor } = await holds();
        expect(ceiling).toBeGreaterThan(BALANCE);
        expect(floor).toBeLessThan(BALANCE);
        const a = await account(BALANCE);
        const usage = { prompt_tokens: 20, completion_tokens: 200 };
        fake.on({ model: 'gpt-4o', respond: { usage } });
        const r = await call(a.key, plain);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        const cost = Math.round((usage.prompt_tokens + usage.completion_tokens * 4) * 1.25);
        expect(await committed(a.userId)).toEqual({ quota: BALANCE - cost, tokenRemain: BALANCE - cost });
      });

      it('50 concurrent calls: one takes the balance, the rest are refused, the overdraft is one call excess', async () => {
        const a = await account(BALANCE);
        // Each call writes 10,000 tokens: 50,025 quota, more than the whole balance.
        const usage = { prompt_tokens: 20, completion_tokens: 10_000 };
        const cost = Math.round((usage.prompt_tokens + usage.completion_tokens * 4) * 1.25);
        expect(cost).toBeGreaterThan(BALANCE);
        fake.on({ model: 'gpt-4o', respond: { usage, delayMs: 300 } });
        const results = await Promise.all(Array.from({ length: 50 }, () => call(a.key, plain)));
        const served = results.filter((r) => r.status === 200).length;
        const refused = results.filter(
          (r) => r.status === 403 && r.body.error?.code === 'insufficient_user_quota',
        ).length;
        expect(served + refused, JSON.stringify(results.find((r) => r.status >= 500))).toBe(50);
        expect(served).toBeGreaterThanOrEqual(1);
        expect(refused).toBeGreaterThanOrEqual(45);
        expect(fake.requests.filter((r) => r.path.endsWith('/chat/completions')).length).toBe(served);
        const after = await committed(a.userId);
        expect(after.quota).toBe(BALANCE - served * cost);
        // ADR 009: the first call held all that was spendable (BALANCE); the balance goes below zero by that one
        // call's excess over its hold, never by more.
        const excess = cost - BALANCE;
        expect(after.quota).toBeGreaterThanOrEqual(-excess);
        expect(after.tokenRemain).toBeGreaterThanOrEqual(-excess);
      });
    });

    it("an absurd max_tokens is a 400 in the route's envelope, before any hold or upstream call", async () => {
      const a = await account(10 * COST);
      const sent = fake.requests.length;
      for (const extra of [{ max_tokens: 1e308 }, { max_completion_tokens: 1e10 }, { n: 1_000_000 }]) {
        const r = await call(a.key, {
          model: 'gpt-4o',
          messages: [{ role: 'user', content: 'hi' }],
          ...extra,
        });
        expect(r.status, JSON.stringify(extra)).toBe(400);
        expect(r.body.error).toMatchObject({ type: 'invalid_request_error' });
        expect(String(r.body.error?.message)).toMatch(/must be (at most|an integer from 1 to 128)/);
      }
      // The Claude and Gemini fronts answer the same refusal in their own envelopes.
      const base = stack.relays[0]!.httpUrl;
      const claude = await fetch(`${base}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': `sk-${a.key}`,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          model: 'gpt-4o',
          max_tokens: 1e308,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      });
      expect(claude.status).toBe(400);
      expect(await claude.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      const gemini = await fetch(`${base}/v1beta/models/gpt-4o:generateContent`, {
        method: 'POST',
        headers: { 'x-goog-api-key': `sk-${a.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
          generationConfig: { maxOutputTokens: 1e308 },
        }),
      });
      expect(gemini.status).toBe(400);
      expect(((await gemini.json()) as { error: unknown }).error).toMatchObject({
        code: 400,
        status: 'INVALID_ARGUMENT',
      });
      expect(fake.requests.length).toBe(sent);
      expect(await committed(a.userId)).toEqual({ quota: 10 * COST, tokenRemain: 10 * COST });
    });
  });
}
