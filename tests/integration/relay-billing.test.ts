/**
 * Billing golden tests through the whole relay (issue 4): the official SDK (or raw fetch, to cut streams) →
 * relay → fake upstream, settled through the outbox into Billing on PostgreSQL. Each pricing rule has one test
 * whose expected quota is computed by hand in a comment; every test checks the log row, the user and token
 * balances and counters, the channel's used_quota and the hourly quota_data row. The suite runs once with the
 * in-process store and once with Redis: the store contract is the same, so the figures must be too.
 *
 * Each test uses a fresh user, so its rows and balances are its own.
 *
 * Cache writes are not tested here: the OpenAI wire format has no cache-write field, so the OpenAI adaptor never
 * reports cacheWriteTokens (CreateCacheRatio is covered at the pricing level in relay-service/src/core/pricing.test.ts).
 */
import { testRedisPrefix, testRedisUrl } from '@switchyard/db/testing.ts';
import { countPromptTokens, countTextTokens } from '@switchyard/relay/core/tokenize.ts';
import OpenAI from 'openai';
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

const QUOTA_PER_UNIT = 500_000;

const PRICES = {
  ModelRatio: JSON.stringify({
    'ratio-only': 2,
    'gpt-4o': 1.25,
    'o3-mini': 0.55,
    'gpt-4o-audio-preview': 1.25,
  }),
  CompletionRatio: JSON.stringify({ 'gpt-4o': 4, 'o3-mini': 4, 'gpt-4o-audio-preview': 4 }),
  ModelPrice: JSON.stringify({ 'dall-e-3': 0.04, 'fixed-chat': 0.002 }),
  GroupRatio: JSON.stringify({ default: 1, vip: 1.5, svip: 1 }),
  CacheRatio: JSON.stringify({ 'gpt-4o': 0.5 }),
  CreateCacheRatio: JSON.stringify({}),
  AudioRatio: JSON.stringify({ 'gpt-4o-audio-preview': 16 }),
  AudioCompletionRatio: JSON.stringify({ 'gpt-4o-audio-preview': 2 }),
  RetryTimes: '0',
  SelfUseModeEnabled: 'false',
  ModelRequestRateLimitEnabled: 'false',
};

const MODELS = [
  'ratio-only',
  'gpt-4o',
  'o3-mini',
  'gpt-4o-audio-preview',
  'dall-e-3',
  'fixed-chat',
  'unpriced-model',
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Removes this file's relay store keys (the harness prefixes them with the suffix given to startStack). */
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
  describe(`billing golden figures through the relay (${store} store)`, () => {
    let stack: Stack;
    let channelId: number;

    beforeAll(async () => {
      stack = await startStack({ suffix: `relay_billing_${store}`, redis: store === 'redis' });
      channelId = (
        await seedChannel(stack, { baseUrl: fake.url, models: MODELS, groups: ['default', 'vip'] })
      ).id;
      await setOptions(stack, PRICES);
    }, 60_000);
    afterAll(async () => {
      await stack?.close();
      if (store === 'redis') await dropRedisKeys(`${testRedisPrefix()}relay_billing_redis:`);
    });

    const relay = () => stack.relays[0]!;

    type Account = { userId: number; tokenId: number; key: string; client: OpenAI };

    async function account(
      opts: {
        quota?: number;
        group?: string;
        remainQuota?: number;
        unlimited?: boolean;
        tokenGroup?: string;
      } = {},
    ): Promise<Account> {
      const user = await seedUser(stack, {
        quota: opts.quota ?? 10_000_000,
        ...(opts.group ? { group: opts.group } : {}),
      });
      const token = await seedToken(stack, user.id, {
        remainQuota: opts.remainQuota ?? 5_000_000,
        ...(opts.unlimited ? { unlimited: true } : {}),
        ...(opts.tokenGroup ? { group: opts.tokenGroup } : {}),
      });
      const client = new OpenAI({
        baseURL: `${relay().httpUrl}/v1`,
        apiKey: `sk-${token.key}`,
        maxRetries: 0,
      });
      return { userId: user.id, tokenId: token.id, key: token.key, client };
    }

    /** Committed balances and counters (after Billing has applied every settled call). */
    async function state(a: Account) {
      await drained(stack);
      const [u] = await stack.sql<Record<string, string | number>>(
        'select quota, used_quota, request_count from users where id = ?',
        [a.userId],
      );
      const [t] = await stack.sql<Record<string, string | number>>(
        'select remain_quota, used_quota from tokens where id = ?',
        [a.tokenId],
      );
      const [c] = await stack.sql<Record<string, string | number>>(
        'select used_quota from channels where id = ?',
        [channelId],
      );
      return {
        quota: Number(u!.quota),
        used: Number(u!.used_quota),
        requests: Number(u!.request_count),
        tokenRemain: Number(t!.remain_quota),
        tokenUsed: Number(t!.used_quota),
        channelUsed: Number(c!.used_quota),
        // The relay's spendable view: equal to the committed quota once nothing is held or pending.
        storeBalance: await relay().store.balance({ kind: 'user', id: a.userId }),
      };
    }
    type State = Awaited<ReturnType<typeof state>>;

    async function logs(a: Account) {
      await drained(stack);
      return stack.sql<Record<string, unknown>>(
        `select *, quota::int as quota, created_at::int as created_at from logs where user_id = ? order by id`,
        [a.userId],
      );
    }

    /** Waits for the user's first log row (settling after a cut stream happens after the client is gone). */
    async function waitForLog(a: Account, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const rows = await logs(a);
        if (rows.length > 0) return rows;
        if (Date.now() > deadline) throw new Error('no log row was written');
        await sleep(50);
      }
    }

    /**
     * The one consume log row of this call, with balances, counters, the channel and the hourly quota_data row
     * all moved by exactly `quota`. Returns the row and its parsed `other`.
     */
    async function expectBilled(
      a: Account,
      before: State,
      expected: {
        quota: number;
        model: string;
        prompt: number;
        completion: number;
        unlimited?: boolean;
        stream?: boolean;
        group?: string;
      },
    ) {
      const rows = await logs(a);
      expect(rows).toHaveLength(1);
      const log = rows[0]!;
      expect(log).toMatchObject({
        type: 2,
        user_id: a.userId,
        token_id: a.tokenId,
        model_name: expected.model,
        quota: expected.quota,
        prompt_tokens: expected.prompt,
        completion_tokens: expected.completion,
        channel_id: channelId,
        is_stream: expected.stream ?? false,
        group: expected.group ?? 'default',
        token_name: `token-${a.key.slice(0, 6)}`,
        ip: '127.0.0.1',
      });
      expect(String(log.request_id)).toMatch(/^[0-9a-f]{32}$/);
      const other = JSON.parse(String(log.other)) as Record<string, unknown>;
      expect(other.admin_info).toEqual({ use_channel: [String(channelId)] });

      const after = await state(a);
      expect(before.quota - after.quota).toBe(expected.quota);
      expect(after.used - before.used).toBe(expected.quota);
      expect(after.requests - before.requests).toBe(1);
      expect(after.tokenUsed - before.tokenUsed).toBe(expected.quota);
      expect(before.tokenRemain - after.tokenRemain).toBe(expected.unlimited ? 0 : expected.quota);
      expect(after.channelUsed - before.channelUsed).toBe(expected.quota);
      // Nothing is left held or pending in the relay's store.
      if (after.storeBalance !== null) expect(after.storeBalance).toBe(after.quota);

      const hour = Math.floor(Number(log.created_at) / 3600) * 3600;
      const qd = await stack.sql<Record<string, unknown>>(
        'select model_name, created_at::int as created_at, count, quota::int as quota, token_used::int as token_used ' +
          'from quota_data where user_id = ?',
        [a.userId],
      );
      expect(qd).toEqual([
        {
          model_name: expected.model,
          created_at: hour,
          count: 1,
          quota: expected.quota,
          token_used: expected.prompt + expected.completion,
        },
      ]);
      return { log, other };
    }

    /** Nothing billed: no log row, balances, counters and channel unchanged, no hold left in the store. */
    async function expectNothingBilled(a: Account, before: State) {
      expect(await logs(a)).toEqual([]);
      // The store's balance may have been loaded by the refused call; it must equal the untouched quota.
      const { storeBalance, ...after } = await state(a);
      const { storeBalance: _, ...committed } = before;
      expect(after).toEqual(committed);
      expect(storeBalance === null || storeBalance === after.quota).toBe(true);
      const qd = await stack.sql('select * from quota_data where user_id = ?', [a.userId]);
      expect(qd).toEqual([]);
    }

    /** A chat stream read with fetch so the test controls when it stops reading. */
    async function rawStream(
      a: Account,
      body: Record<string, unknown>,
      abortAfterContentChunks?: number,
    ): Promise<{ contents: string[]; sawDone: boolean; aborted: boolean }> {
      const ac = new AbortController();
      const res = await fetch(`${relay().httpUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer sk-${a.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, stream: true }),
        signal: ac.signal,
      });
      expect(res.status).toBe(200);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      const contents: string[] = [];
      let buf = '';
      let sawDone = false;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buf += value;
          let i = buf.indexOf('\n\n');
          while (i >= 0) {
            const data = buf.slice(0, i).replace(/^data: /, '');
            buf = buf.slice(i + 2);
            i = buf.indexOf('\n\n');
            if (data === '[DONE]') sawDone = true;
            else {
              const content = JSON.parse(data).choices?.[0]?.delta?.content;
              if (content) contents.push(content);
            }
            if (abortAfterContentChunks !== undefined && contents.length >= abortAfterContentChunks) {
              ac.abort();
              return { contents, sawDone, aborted: true };
            }
          }
        }
      } catch {
        // The relay ended the stream abruptly (the upstream dropped): what arrived is what counts.
      }
      return { contents, sawDone, aborted: false };
    }

    // Read with PTTL, so Redis only; both stores apply the TTL they are given (store contract suite).
    if (store === 'redis')
      it('a balance loaded into Redis lives RELAY_BALANCE_TTL_MS (10 min), not the account TTL', async () => {
        const a = await account();
        await a.client.chat.completions.create({
          model: 'ratio-only',
          messages: [{ role: 'user', content: 'hello' }],
        });
        const admin = createClient({ url: testRedisUrl() });
        await admin.connect();
        try {
          const prefix = (relay().store as { keyPrefix?: string }).keyPrefix;
          const ttl = await admin.pTTL(`${prefix}bal:u:${a.userId}`);
          expect(ttl).toBeGreaterThan(9 * 60_000);
          expect(ttl).toBeLessThanOrEqual(10 * 60_000);
        } finally {
          await admin.close();
        }
      });

    it("a new account's first call loads the user and token balances together (two reserves, not three)", async () => {
      const a = await account({ quota: 7_000_000, remainQuota: 3_000_000 });
      const s = relay().store;
      const reserve = s.reserve;
      const results: string[] = [];
      s.reserve = async (req) => {
        const r = await reserve.call(s, req);
        if (req.userId === a.userId)
          results.push(r.ok ? 'ok' : `${r.reason}:${'account' in r ? r.account.kind : ''}`);
        return r;
      };
      try {
        fake.on({ model: 'ratio-only', respond: { usage: { prompt_tokens: 10, completion_tokens: 10 } } });
        await a.client.chat.completions.create({
          model: 'ratio-only',
          messages: [{ role: 'user', content: 'hello' }],
        });
      } finally {
        s.reserve = reserve;
      }
      expect(results).toEqual(['balance_unknown:user', 'ok']);
      // Both balances were loaded from PostgreSQL and charged: (10 + 10)·2 = 40.
      const after = await state(a);
      expect(after.storeBalance).toBe(7_000_000 - 40);
      expect(after.tokenRemain).toBe(3_000_000 - 40);
      expect(await relay().store.balance({ kind: 'token', id: a.tokenId })).toBe(3_000_000 - 40);
    });

    it('model ratio only: (prompt + completion)·model ratio, completion ratio defaults to 1', async () => {
      const a = await account();
      const before = await state(a);
      fake.on({ model: 'ratio-only', respond: { usage: { prompt_tokens: 300, completion_tokens: 201 } } });
      const res = await a.client.chat.completions.create({
        model: 'ratio-only',
        messages: [{ role: 'user', content: 'hello' }],
      });
      expect(res.usage?.total_tokens).toBe(501);
      // (300 + 201·1)·2·1 = 1002
      const { log, other } = await expectBilled(a, before, {
        quota: 1002,
        model: 'ratio-only',
        prompt: 300,
        completion: 201,
      });
      expect(log.content).toBe('model ratio 2, completion ratio 1, group ratio 1');
      expect(other).toEqual({
        model_ratio: 2,
        group_ratio: 1,
        completion_ratio: 1,
        cache_tokens: 0,
        cache_ratio: 1,
        cache_creation_tokens: 0,
        cache_creation_ratio: 1,
        model_price: -1,
        reasoning_tokens: 0,
        frt: 0,
        admin_info: { use_channel: [String(channelId)] },
      });
    });

    it('completion ratio, streamed: (prompt + completion·4)·1.25, first-response time logged', async () => {
      const a = await account();
      const before = await state(a);
      fake.on({ model: 'gpt-4o', respond: { usage: { prompt_tokens: 1000, completion_tokens: 500 } } });
      const stream = await a.client.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hello' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toBe('Hello from gpt-4o');
      // (1000 + 500·4)·1.25 = 3750
      const { other } = await expectBilled(a, before, {
        quota: 3750,
        model: 'gpt-4o',
        prompt: 1000,
        completion: 500,
        stream: true,
      });
      expect(other).toMatchObject({
        model_ratio: 1.25,
        completion_ratio: 4,
        group_ratio: 1,
        model_price: -1,
      });
      expect(other.frt).toBeGreaterThan(0);
      expect(other.usage_estimated).toBeUndefined();
    });

    it('group ratio: a vip user pays 1.5×, rounded half away from zero', async () => {
      const a = await account({ group: 'vip' });
      const before = await state(a);
      fake.on({ model: 'gpt-4o', respond: { usage: { prompt_tokens: 100, completion_tokens: 50 } } });
      await a.client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
      // (100 + 50·4)·1.25·1.5 = 562.5 → 563
      const { log, other } = await expectBilled(a, before, {
        quota: 563,
        model: 'gpt-4o',
        prompt: 100,
        completion: 50,
        group: 'vip',
      });
      expect(other.group_ratio).toBe(1.5);
      expect(log.content).toBe('model ratio 1.25, completion ratio 4, group ratio 1.5');
    });

    it('group ratio from the token: a default user with a vip token pays the vip ratio', async () => {
      const a = await account({ tokenGroup: 'vip' });
      const before = await state(a);
      fake.on({ model: 'gpt-4o', respond: { usage: { prompt_tokens: 7, completion_tokens: 3 } } });
      await a.client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
      // (7 + 3·4)·1.25·1.5 = 35.625 → 36
      const { other } = await expectBilled(a, before, {
        quota: 36,
        model: 'gpt-4o',
        prompt: 7,
        completion: 3,
        group: 'vip',
      });
      expect(other.group_ratio).toBe(1.5);
    });

    it('fixed model price: one price per call whatever the tokens', async () => {
      const a = await account();
      const before = await state(a);
      fake.on({ model: 'fixed-chat', respond: { usage: { prompt_tokens: 9000, completion_tokens: 9000 } } });
      await a.client.chat.completions.create({
        model: 'fixed-chat',
        messages: [{ role: 'user', content: 'x' }],
      });
      // 0.002 USD · 500000 · group 1 = 1000
      const { log, other } = await expectBilled(a, before, {
        quota: 1000,
        model: 'fixed-chat',
        prompt: 9000,
        completion: 9000,
      });
      expect(other).toMatchObject({
        model_price: 0.002,
        model_ratio: 0,
        completion_ratio: 0,
        group_ratio: 1,
      });
      expect(log.content).toBe('model price $0.002, group ratio 1');
    });

    it('fixed model price per image: n images cost n prices; prompt counted locally', async () => {
      const a = await account();
      const before = await state(a);
      const body = {
        model: 'dall-e-3',
        prompt: 'a red fox in the snow',
        n: 3,
        response_format: 'b64_json' as const,
      };
      const res = await a.client.images.generate(body);
      expect(res.data).toHaveLength(3);
      // 0.04 USD · 500000 · 3 images = 60000; the images API reports no usage, so the prompt is estimated.
      const prompt = await countPromptTokens('images', body, 'dall-e-3');
      expect(prompt).toBeGreaterThan(0);
      const { other } = await expectBilled(a, before, {
        quota: 60_000,
        model: 'dall-e-3',
        prompt,
        completion: 0,
      });
      expect(other).toMatchObject({ model_price: 0.04, usage_estimated: true });
    });

    it('cache read: cached prompt tokens at the cache ratio', async () => {
      const a = await account();
      const before = await state(a);
      fake.on({
        model: 'gpt-4o',
        respond: { usage: { prompt_tokens: 1000, cached_tokens: 600, completion_tokens: 100 } },
      });
      const res = await a.client.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(res.usage?.prompt_tokens_details?.cached_tokens).toBe(600);
      // ((1000 − 600) + 600·0.5 + 100·4)·1.25 = (400 + 300 + 400)·1.25 = 1375
      const { log, other } = await expectBilled(a, before, {
        quota: 1375,
        model: 'gpt-4o',
        prompt: 1000,
        completion: 100,
      });
      expect(other).toMatchObject({ cache_tokens: 600, cache_ratio: 0.5, cache_creation_tokens: 0 });
      expect(log.content).toBe('model ratio 1.25, completion ratio 4, group ratio 1, cache ratio 0.5');
    });

    it('reasoning tokens are billed as completion (o3-mini)', async () => {
      const a = await account();
      const before = await state(a);
      fake.on({
        model: 'o3-mini',
        respond: { usage: { prompt_tokens: 100, completion_tokens: 1200, reasoning_tokens: 1000 } },
      });
      const res = await a.client.chat.completions.create({
        model: 'o3-mini',
        messages: [{ role: 'user', content: 'think' }],
      });
      expect(res.usage?.completion_tokens_details?.reasoning_tokens).toBe(1000);
      // (100 + 1200·4)·0.55 = 4900·0.55 = 2695 (the 1000 reasoning tokens are inside the 1200)
      const { other } = await expectBilled(a, before, {
        quota: 2695,
        model: 'o3-mini',
        prompt: 100,
        completion: 1200,
      });
      expect(other).toMatchObject({ reasoning_tokens: 1000, model_ratio: 0.55, completion_ratio: 4 });
    });

    it('audio tokens: audio in at the audio ratio, audio out at audio × audio completion ratio', async () => {
      const a = await account();
      const before = await state(a);
      fake.on({
        model: 'gpt-4o-audio-preview',
        respond: {
          usage: {
            prompt_tokens: 100,
            audio_prompt_tokens: 40,
            completion_tokens: 200,
            audio_completion_tokens: 150,
          },
        },
      });
      await a.client.chat.completions.create({
        model: 'gpt-4o-audio-preview',
        messages: [{ role: 'user', content: 'say hi' }],
      });
      // text in 60 + audio in 40·16 = 640 + text out 50·4 = 200 + audio out 150·16·2 = 4800 → 5700·1.25 = 7125
      const { log, other } = await expectBilled(a, before, {
        quota: 7125,
        model: 'gpt-4o-audio-preview',
        prompt: 100,
        completion: 200,
      });
      expect(other).toMatchObject({
        audio: true,
        text_input: 60,
        text_output: 50,
        audio_input: 40,
        audio_output: 150,
        audio_ratio: 16,
        audio_completion_ratio: 2,
      });
      expect(log.content).toBe(
        'model ratio 1.25, completion ratio 4, group ratio 1, audio ratio 16, audio completion ratio 2',
      );
    });

    it('missing usage: prompt and completion counted locally with the tokenizer, marked as estimated', async () => {
      const a = await account();
      const before = await state(a);
      fake.on({ model: 'gpt-4o', respond: { omitUsage: true } });
      const messages = [
        { role: 'system' as const, content: 'You are terse.' },
        { role: 'user' as const, content: 'Say hello to the billing test, please.' },
      ];
      const res = await a.client.chat.completions.create({ model: 'gpt-4o', messages });
      expect(res.usage).toBeUndefined();
      const prompt = await countPromptTokens('chat', { model: 'gpt-4o', messages }, 'gpt-4o');
      const completion = await countTextTokens('Hello from gpt-4o', 'gpt-4o');
      // chat accounting: 3 per message + role + content, + 3 reply primer
      expect(prompt).toBe(
        3 +
          (3 +
            (await countTextTokens('system', 'gpt-4o')) +
            (await countTextTokens(messages[0]!.content, 'gpt-4o'))) +
          (3 +
            (await countTextTokens('user', 'gpt-4o')) +
            (await countTextTokens(messages[1]!.content, 'gpt-4o'))),
      );
      // (prompt + completion·4)·1.25, rounded
      const quota = Math.round((prompt + completion * 4) * 1.25);
      const { other } = await expectBilled(a, before, { quota, model: 'gpt-4o', prompt, completion });
      expect(other.usage_estimated).toBe(true);
    });

    it('missing usage, streamed to the end: the whole streamed text counted locally', async () => {
      const a = await account();
      const before = await state(a);
      fake.on({ model: 'gpt-4o', respond: { omitUsage: true, content: 'One two three, four five six.' } });
      const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Count to six.' }] };
      const got = await rawStream(a, body);
      expect(got.sawDone).toBe(true);
      expect(got.contents.join('')).toBe('One two three, four five six.');
      expect(fake.requests.at(-1)?.body?.stream_options).toEqual({ include_usage: true });
      const prompt = await countPromptTokens('chat', body, 'gpt-4o');
      const completion = await countTextTokens('One two three, four five six.', 'gpt-4o');
      // (prompt + completion·4)·1.25, rounded
      const quota = Math.round((prompt + completion * 4) * 1.25);
      const { other } = await expectBilled(a, before, {
        quota,
        model: 'gpt-4o',
        prompt,
        completion,
        stream: true,
      });
      expect(other.usage_estimated).toBe(true);
      expect(other.frt).toBeGreaterThan(0);
    });

    it('client disconnect mid-stream: billed once for the chunks delivered, prompt estimated', async () => {
      const a = await account();
      const before = await state(a);
      fake.on({ model: 'gpt-4o', respond: { streamDelayMs: 400 } });
      const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Tell me a long story.' }] };
      const got = await rawStream(a, body, 2);
      expect(got).toMatchObject({ contents: ['Hello', ' from'], aborted: true, sawDone: false });
      await waitForLog(a);
      // A while later there is still one row and one deduction (a second settle would show here).
      await sleep(800);
      const prompt = await countPromptTokens('chat', body, 'gpt-4o');
      const completion = await countTextTokens('Hello from', 'gpt-4o');
      // (prompt + completion·4)·1.25, rounded
      const quota = Math.round((prompt + completion * 4) * 1.25);
      const { other } = await expectBilled(a, before, {
        quota,
        model: 'gpt-4o',
        prompt,
        completion,
        stream: true,
      });
      expect(other.usage_estimated).toBe(true);
    });

    it('upstream drops the connection mid-stream: billed for what was produced', async () => {
      const a = await account();
      const before = await state(a);
      // Events: role, "Hello", " from", then the socket is destroyed.
      fake.on({ model: 'gpt-4o', respond: { dropAfterChunks: 3 } });
      const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Go on.' }] };
      const got = await rawStream(a, body);
      expect(got.contents).toEqual(['Hello', ' from']);
      await waitForLog(a);
      const prompt = await countPromptTokens('chat', body, 'gpt-4o');
      const completion = await countTextTokens('Hello from', 'gpt-4o');
      // (prompt + completion·4)·1.25, rounded
      const quota = Math.round((prompt + completion * 4) * 1.25);
      const { other } = await expectBilled(a, before, {
        quota,
        model: 'gpt-4o',
        prompt,
        completion,
        stream: true,
      });
      expect(other.usage_estimated).toBe(true);
    });

    it('an unpriced model is refused before the upstream and nothing is billed', async () => {
      const a = await account();
      const before = await state(a);
      const sent = fake.requests.length;
      await expect(
        a.client.chat.completions.create({
          model: 'unpriced-model',
          messages: [{ role: 'user', content: 'x' }],
        }),
      ).rejects.toMatchObject({ status: 403, code: 'model_price_not_set' });
      expect(fake.requests.length).toBe(sent);
      await expectNothingBilled(a, before);
    });

    it('self-use mode: an unpriced model is served for free with a quota-0 log row', async () => {
      await setOptions(stack, { SelfUseModeEnabled: 'true' });
      try {
        const a = await account();
        const before = await state(a);
        fake.on({
          model: 'unpriced-model',
          respond: { usage: { prompt_tokens: 500, completion_tokens: 500 } },
        });
        await a.client.chat.completions.create({
          model: 'unpriced-model',
          messages: [{ role: 'user', content: 'x' }],
        });
        // model ratio 0: (500 + 500·1)·0 = 0
        const { other } = await expectBilled(a, before, {
          quota: 0,
          model: 'unpriced-model',
          prompt: 500,
          completion: 500,
        });
        expect(other).toMatchObject({ model_ratio: 0, completion_ratio: 1, model_price: -1 });
      } finally {
        await setOptions(stack, { SelfUseModeEnabled: 'false' });
      }
    });

    it('LogConsumeEnabled off: a call through the relay is billed but leaves no consume log row', async () => {
      await setOptions(stack, { LogConsumeEnabled: 'false' });
      try {
        const a = await account();
        const before = await state(a);
        fake.on({ model: 'gpt-4o', respond: { usage: { prompt_tokens: 100, completion_tokens: 50 } } });
        await a.client.chat.completions.create({
          model: 'gpt-4o',
          messages: [{ role: 'user', content: 'x' }],
        });
        const after = await state(a);
        // (100 + 50·4)·1.25 = 375
        expect(before.quota - after.quota).toBe(375);
        expect(after.requests - before.requests).toBe(1);
        expect(await logs(a)).toEqual([]);
      } finally {
        await setOptions(stack, { LogConsumeEnabled: 'true' });
      }
    });

    it('a failed call (upstream 500, no retries) bills nothing and releases the hold', async () => {
      const a = await account();
      const before = await state(a);
      fake.on({ model: 'gpt-4o', respond: { status: 500 } });
      const sent = fake.requests.length;
      const err = await a.client.chat.completions
        .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.InternalServerError);
      expect(fake.requests.length).toBe(sent + 1);
      await expectNothingBilled(a, before);
      // The hold was given back: the relay's spendable balance is the committed quota again.
      expect(await relay().store.balance({ kind: 'user', id: a.userId })).toBe(before.quota);
      expect(await relay().store.balance({ kind: 'token', id: a.tokenId })).toBe(before.tokenRemain);
    });

    it('insufficient user quota is refused with 403 before any upstream call', async () => {
      // The hold for gpt-4o without max_tokens is at least PreConsumedQuota 500·4·1.25 = 2500 > 1000.
      const a = await account({ quota: 1000 });
      const before = await state(a);
      const sent = fake.requests.length;
      await expect(
        a.client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
      ).rejects.toMatchObject({ status: 403, code: 'insufficient_user_quota' });
      expect(fake.requests.length).toBe(sent);
      await expectNothingBilled(a, before);
    });

    it('token quota: exhausted token refused (401), token without enough quota refused (403)', async () => {
      const empty = await account({ remainQuota: 0 });
      const emptyBefore = await state(empty);
      const sent = fake.requests.length;
      const err = await empty.client.chat.completions
        .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(err).toMatchObject({ status: 401, code: 'token_exhausted' });

      const low = await account({ remainQuota: 100 });
      const lowBefore = await state(low);
      await expect(
        low.client.chat.completions.create({
          model: 'gpt-4o',
          messages: [{ role: 'user', content: 'x' }],
          max_tokens: 100,
        }),
      ).rejects.toMatchObject({ status: 403, code: 'insufficient_token_quota' });
      expect(fake.requests.length).toBe(sent);
      await expectNothingBilled(empty, emptyBefore);
      await expectNothingBilled(low, lowBefore);
    });

    it('an unlimited token keeps its remain_quota; the user pays and the token counts the use', async () => {
      const a = await account({ unlimited: true, remainQuota: 7 });
      const before = await state(a);
      fake.on({ model: 'gpt-4o', respond: { usage: { prompt_tokens: 40, completion_tokens: 10 } } });
      await a.client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
      // (40 + 10·4)·1.25 = 100
      await expectBilled(a, before, {
        quota: 100,
        model: 'gpt-4o',
        prompt: 40,
        completion: 10,
        unlimited: true,
      });
      expect((await state(a)).tokenRemain).toBe(7);
    });

    describe('the relay rate limit (ModelRequestRateLimit*)', () => {
      afterAll(async () => {
        await setOptions(stack, { ModelRequestRateLimitEnabled: 'false' });
      });

      async function rateLimited(a: Account) {
        const err = await a.client.chat.completions
          .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(OpenAI.RateLimitError);
        const e = err as InstanceType<typeof OpenAI.RateLimitError>;
        expect(e.code).toBe('rate_limit_exceeded');
        const retryAfter = Number(e.headers?.get('retry-after'));
        expect(Number.isInteger(retryAfter)).toBe(true);
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
      }

      it('success window: failures do not count, the third success in the window is refused with 429', async () => {
        await setOptions(stack, {
          ModelRequestRateLimitEnabled: 'true',
          ModelRequestRateLimitDurationMinutes: '1',
          ModelRequestRateLimitCount: '0',
          ModelRequestRateLimitSuccessCount: '2',
        });
        const a = await account();
        fake.on({ model: 'gpt-4o', respond: { status: 500 }, times: 3 });
        fake.on({ model: 'gpt-4o', respond: { usage: { prompt_tokens: 4, completion_tokens: 4 } } });
        for (let i = 0; i < 3; i++)
          await expect(
            a.client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
          ).rejects.toBeInstanceOf(OpenAI.InternalServerError);
        for (let i = 0; i < 2; i++)
          await a.client.chat.completions.create({
            model: 'gpt-4o',
            messages: [{ role: 'user', content: 'x' }],
          });
        const sent = fake.requests.length;
        const before = await state(a);
        await rateLimited(a);
        expect(fake.requests.length).toBe(sent);
        // Two successes billed ((4 + 4·4)·1.25 = 25 each), the refused call nothing.
        expect((await logs(a)).map((l) => l.quota)).toEqual([25, 25]);
        expect(await state(a)).toEqual(before);
        // Another user has a window of their own.
        const b = await account();
        await b.client.chat.completions.create({
          model: 'gpt-4o',
          messages: [{ role: 'user', content: 'x' }],
        });
      });

      it('total window: failures count, the call after two failures and one success is refused', async () => {
        await setOptions(stack, {
          ModelRequestRateLimitEnabled: 'true',
          ModelRequestRateLimitDurationMinutes: '1',
          ModelRequestRateLimitCount: '3',
          ModelRequestRateLimitSuccessCount: '1000',
        });
        const a = await account();
        fake.on({ model: 'gpt-4o', respond: { status: 500 }, times: 2 });
        fake.on({ model: 'gpt-4o', respond: { usage: { prompt_tokens: 4, completion_tokens: 4 } } });
        for (let i = 0; i < 2; i++)
          await expect(
            a.client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
          ).rejects.toBeInstanceOf(OpenAI.InternalServerError);
        await a.client.chat.completions.create({
          model: 'gpt-4o',
          messages: [{ role: 'user', content: 'x' }],
        });
        const sent = fake.requests.length;
        const before = await state(a);
        await rateLimited(a);
        expect(fake.requests.length).toBe(sent);
        expect((await logs(a)).map((l) => l.quota)).toEqual([25]);
        expect(await state(a)).toEqual(before);
      });
    });

    it('/dashboard/billing subscription and usage answer in USD from the committed quota after calls', async () => {
      const a = await account({ quota: 2_000_000, remainQuota: 1_000_000 });
      // Earlier use, already committed: 250000 by this token, 400000 by the user overall.
      await stack.sql('update tokens set used_quota = 250000 where id = ?', [a.tokenId]);
      await stack.sql('update users set used_quota = 400000 where id = ?', [a.userId]);
      const get = async (path: string, key = a.key) => {
        const res = await fetch(`${relay().httpUrl}${path}`, {
          headers: { authorization: `Bearer sk-${key}` },
        });
        expect(res.status).toBe(200);
        return (await res.json()) as Record<string, unknown>;
      };
      // Before the calls (this also puts the account in the relay's cache, which must not be answered from).
      expect((await get('/dashboard/billing/subscription')).hard_limit_usd).toBe(1_250_000 / QUOTA_PER_UNIT);

      fake.on({ model: 'gpt-4o', respond: { usage: { prompt_tokens: 1000, completion_tokens: 500 } } });
      // Two calls of (1000 + 500·4)·1.25 = 3750 each: 7500 used.
      for (let i = 0; i < 2; i++)
        await a.client.chat.completions.create({
          model: 'gpt-4o',
          messages: [{ role: 'user', content: 'x' }],
        });
      const s = await state(a);
      expect(s.tokenRemain).toBe(1_000_000 - 7500);
      expect(s.tokenUsed).toBe(250_000 + 7500);
      // Both calls land in the same hourly quota_data row (unless the hour turned between them).
      const qd = await stack.sql<{ count: number; quota: number }>(
        'select sum(count)::int as count, sum(quota)::int as quota from quota_data where user_id = ?',
        [a.userId],
      );
      expect(qd).toEqual([{ count: 2, quota: 7500 }]);

      // DisplayTokenStatEnabled (default): the token's figures. Granted = remain + used = 992500 + 257500 =
      // 1250000 quota = 2.5 USD, unchanged by spending.
      const sub = await get('/dashboard/billing/subscription');
      expect(sub).toEqual({
        object: 'billing_subscription',
        has_payment_method: true,
        hard_limit_usd: 2.5,
        soft_limit_usd: 2.5,
        system_hard_limit_usd: 2.5,
        access_until: 0,
      });
      // Used 257500 quota = 0.515 USD = 51.5 cents.
      const usage = await get('/v1/dashboard/billing/usage');
      expect(usage).toEqual({ object: 'list', total_usage: (257_500 / QUOTA_PER_UNIT) * 100 });
      // What a client shows as the balance: hard limit − usage = the token's remain_quota in USD.
      expect((sub.hard_limit_usd as number) - (usage.total_usage as number) / 100).toBeCloseTo(
        s.tokenRemain / QUOTA_PER_UNIT,
        10,
      );

      // Without token stats: the user's figures (quota 1992500 + used 407500 = 2400000 → 4.8 USD).
      await setOptions(stack, { DisplayTokenStatEnabled: 'false' });
      try {
        expect((await get('/v1/dashboard/billing/subscription')).hard_limit_usd).toBe(4.8);
        expect((await get('/dashboard/billing/usage')).total_usage).toBe((407_500 / QUOTA_PER_UNIT) * 100);
      } finally {
        await setOptions(stack, { DisplayTokenStatEnabled: 'true' });
      }

      // An unlimited token has no limit to show (new-api answers 100000000 USD).
      const unlimited = await seedToken(stack, a.userId, { unlimited: true });
      expect((await get('/dashboard/billing/subscription', unlimited.key)).hard_limit_usd).toBe(100_000_000);
    });
  });
}
