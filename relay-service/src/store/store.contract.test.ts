/**
 * One contract for both stores: the embedded memory store must behave exactly like the Redis scripts, or a
 * bug would only show up once a deployment scales out. Every test runs against each implementation, with a
 * fresh Redis key prefix per test so that tests cannot see each other's windows, holds or outbox.
 */
import { testRedisPrefix, testRedisUrl } from '@switchyard/db/testing.ts';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../log.ts';
import { MemoryStore } from './memory.ts';
import { RedisStore } from './redis.ts';
import type { AccountRef, RateLimit, RelayStore, ReserveRequest, SettleRequest } from './types.ts';

const T0 = 1_700_000_000_000;
const USER: AccountRef = { kind: 'user', id: 7 };
const TOKEN: AccountRef = { kind: 'token', id: 70 };
const HOLD_TTL = 60_000;
const BAL_TTL = 60_000;

const admin = createClient({ url: testRedisUrl() });
const prefixes: string[] = [];

beforeAll(async () => {
  await admin.connect();
});

afterAll(async () => {
  await admin.close();
});

async function dropKeys(prefix: string): Promise<void> {
  const keys: string[] = [];
  for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) keys.push(...batch);
  if (keys.length) await admin.del(keys);
}

const implementations: [string, () => RelayStore][] = [
  ['memory', () => new MemoryStore()],
  [
    'redis',
    () => {
      const keyPrefix = `${testRedisPrefix()}store:${crypto.randomUUID()}:`;
      prefixes.push(keyPrefix);
      return new RedisStore({ url: testRedisUrl(), keyPrefix, log: silentLogger });
    },
  ],
];

describe.each(implementations)('RelayStore contract (%s)', (_name, make) => {
  let store: RelayStore;

  afterEach(async () => {
    await store?.close();
    await Promise.all(prefixes.splice(0).map(dropKeys));
  });

  async function open(): Promise<RelayStore> {
    store = make();
    if (store instanceof RedisStore) expect(await store.waitUntilReady(3_000)).toBe(true);
    return store;
  }

  async function seed(s: RelayStore, account: AccountRef, committed: number, ttlMs = BAL_TTL): Promise<void> {
    const generation = await s.balanceGeneration(account);
    expect(await s.loadBalance(account, generation, committed, ttlMs)).toBe(true);
  }

  /** Spendable as a fresh load computes it (committed − pend): how the held and settled quota show. */
  async function reloaded(s: RelayStore, account: AccountRef, committed: number): Promise<number | null> {
    await s.invalidateBalance(account);
    await seed(s, account, committed);
    return s.balance(account);
  }

  const reserveReq = (over: Partial<ReserveRequest> = {}): ReserveRequest => ({
    requestId: 'r1',
    userId: USER.id,
    tokenId: TOKEN.id,
    amount: 100,
    holdTtlMs: HOLD_TTL,
    now: T0,
    ...over,
  });

  const settleReq = (over: Partial<SettleRequest> = {}): SettleRequest => ({
    requestId: 'r1',
    userId: USER.id,
    tokenId: TOKEN.id,
    amount: 100,
    success: true,
    payload: '{"requestId":"r1"}',
    now: T0 + 10,
    ...over,
  });

  describe('reserve', () => {
    it('asks for the user balance first, then the token balance', async () => {
      const s = await open();
      expect(await s.reserve(reserveReq())).toEqual({ ok: false, reason: 'balance_unknown', account: USER });
      await seed(s, USER, 1_000);
      expect(await s.reserve(reserveReq())).toEqual({ ok: false, reason: 'balance_unknown', account: TOKEN });
      await seed(s, TOKEN, 1_000);
      expect(await s.reserve(reserveReq())).toEqual({ ok: true, held: 100 });
    });

    it('holds the amount on user and token (bal and pend)', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await seed(s, TOKEN, 300);
      expect(await s.reserve(reserveReq({ amount: 120 }))).toEqual({ ok: true, held: 120 });
      expect(await s.balance(USER)).toBe(880);
      expect(await s.balance(TOKEN)).toBe(180);
      // pend carries the hold: a fresh load from the same committed quota still subtracts it.
      expect(await reloaded(s, USER, 1_000)).toBe(880);
      expect(await reloaded(s, TOKEN, 300)).toBe(180);
    });

    it('without a token account touches only the user', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      expect(await s.reserve(reserveReq({ tokenId: null }))).toEqual({ ok: true, held: 100 });
      expect(await s.balance(USER)).toBe(900);
      expect(await s.balance(TOKEN)).toBeNull();
    });

    it('refuses when spendable is short or not positive and records nothing', async () => {
      const s = await open();
      const limit: RateLimit = { key: 'u7', windowMs: 60_000, maxTotal: 1, maxSuccess: 0 };
      await seed(s, USER, 100);
      await seed(s, TOKEN, 50);
      expect(await s.reserve(reserveReq({ amount: 101, limit }))).toEqual({
        ok: false,
        reason: 'insufficient_user_quota',
        available: 100,
      });
      expect(await s.reserve(reserveReq({ amount: 60, limit }))).toEqual({
        ok: false,
        reason: 'insufficient_token_quota',
        available: 50,
      });
      expect(await s.balance(USER)).toBe(100);
      expect(await s.balance(TOKEN)).toBe(50);
      // The refused attempts did not use the single slot of the window.
      expect(await s.reserve(reserveReq({ amount: 50, limit }))).toEqual({ ok: true, held: 50 });
      // Token at 0: even an amount of 0 is refused.
      expect(await s.reserve(reserveReq({ requestId: 'r2', amount: 0 }))).toEqual({
        ok: false,
        reason: 'insufficient_token_quota',
        available: 0,
      });
    });

    it('refuses an amount of 0 when the user has nothing left', async () => {
      const s = await open();
      await seed(s, USER, 0);
      expect(await s.reserve(reserveReq({ tokenId: null, amount: 0 }))).toEqual({
        ok: false,
        reason: 'insufficient_user_quota',
        available: 0,
      });
    });

    it('holds once when the same request is reserved twice', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await seed(s, TOKEN, 1_000);
      expect(await s.reserve(reserveReq())).toEqual({ ok: true, held: 100 });
      expect(await s.reserve(reserveReq())).toEqual({ ok: true, held: 100 });
      expect(await s.balance(USER)).toBe(900);
      await s.release('r1');
      expect(await s.balance(USER)).toBe(1_000);
    });

    it('never overdraws under 200 concurrent reserves', async () => {
      const s = await open();
      await seed(s, USER, 500);
      await seed(s, TOKEN, 10_000);
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => s.reserve(reserveReq({ requestId: `c${i}`, amount: 10 }))),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(50);
      expect(results.filter((r) => !r.ok && r.reason === 'insufficient_user_quota')).toHaveLength(150);
      expect(await s.balance(USER)).toBe(0);
      expect(await s.balance(TOKEN)).toBe(9_500);
      expect(await reloaded(s, USER, 500)).toBe(0);
    });
  });

  describe('flexible hold (minAmount: a request without an output limit)', () => {
    const flex = (over: Partial<ReserveRequest> = {}) =>
      reserveReq({ amount: 5_000, minAmount: 200, ...over });

    it('holds the amount when it fits, like an exact hold', async () => {
      const s = await open();
      await seed(s, USER, 10_000);
      await seed(s, TOKEN, 10_000);
      expect(await s.reserve(flex())).toEqual({ ok: true, held: 5_000 });
      expect(await s.balance(USER)).toBe(5_000);
      expect(await s.balance(TOKEN)).toBe(5_000);
    });

    it('holds what is spendable when that is between minAmount and amount: the smaller account decides', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await seed(s, TOKEN, 600);
      expect(await s.reserve(flex())).toEqual({ ok: true, held: 600 });
      expect(await s.balance(USER)).toBe(400);
      expect(await s.balance(TOKEN)).toBe(0);
      expect(await reloaded(s, USER, 1_000)).toBe(400);
      expect(await reloaded(s, TOKEN, 600)).toBe(0);
      // A retried reserve of the same request answers its hold and holds nothing more.
      expect(await s.reserve(flex())).toEqual({ ok: true, held: 600 });
      expect(await s.balance(USER)).toBe(400);
    });

    it('takes the user spendable when the user account is the smaller one, or there is no token', async () => {
      const s = await open();
      await seed(s, USER, 300);
      await seed(s, TOKEN, 1_000);
      expect(await s.reserve(flex())).toEqual({ ok: true, held: 300 });
      expect(await s.balance(USER)).toBe(0);
      expect(await s.balance(TOKEN)).toBe(700);
      await s.release('r1');
      expect(await s.reserve(flex({ requestId: 'r2', tokenId: null }))).toEqual({ ok: true, held: 300 });
      expect(await s.balance(TOKEN)).toBe(1_000);
    });

    it('refuses below minAmount (user first, then token) and records nothing', async () => {
      const s = await open();
      const limit: RateLimit = { key: 'u7', windowMs: 60_000, maxTotal: 1, maxSuccess: 0 };
      await seed(s, USER, 150);
      await seed(s, TOKEN, 1_000);
      expect(await s.reserve(flex({ limit }))).toEqual({
        ok: false,
        reason: 'insufficient_user_quota',
        available: 150,
      });
      await s.invalidateBalance(USER);
      await seed(s, USER, 1_000);
      await s.invalidateBalance(TOKEN);
      await seed(s, TOKEN, 199);
      expect(await s.reserve(flex({ limit }))).toEqual({
        ok: false,
        reason: 'insufficient_token_quota',
        available: 199,
      });
      expect(await s.balance(USER)).toBe(1_000);
      expect(await s.balance(TOKEN)).toBe(199);
      // The refused attempts did not use the single slot of the window; a minAmount of 0 still needs quota > 0.
      expect(await s.reserve(flex({ limit, minAmount: 0 }))).toEqual({ ok: true, held: 199 });
      expect(await s.reserve(flex({ requestId: 'r2', minAmount: 0 }))).toEqual({
        ok: false,
        reason: 'insufficient_token_quota',
        available: 0,
      });
    });

    it('leaves an exact hold (no minAmount) as it was: refused when short', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await seed(s, TOKEN, 1_000);
      expect(await s.reserve(reserveReq({ amount: 5_000 }))).toEqual({
        ok: false,
        reason: 'insufficient_user_quota',
        available: 1_000,
      });
      expect(await s.balance(USER)).toBe(1_000);
      await expect(s.reserve(reserveReq({ amount: 100, minAmount: 101 }))).rejects.toThrow(RangeError);
    });

    it('settles and releases from the amount it held', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await seed(s, TOKEN, 600);
      expect(await s.reserve(flex())).toEqual({ ok: true, held: 600 });
      // The call cost 900: the token goes below zero by that call's excess over its hold (300), the user pays 900.
      await s.settle(settleReq({ amount: 900 }));
      expect(await s.balance(USER)).toBe(100);
      expect(await s.balance(TOKEN)).toBe(-300);
      expect(await reloaded(s, USER, 1_000)).toBe(100);
      expect(await reloaded(s, TOKEN, 600)).toBe(-300);

      expect(await s.reserve(flex({ requestId: 'r2', tokenId: null, minAmount: 50 }))).toEqual({
        ok: true,
        held: 100,
      });
      await s.release('r2');
      expect(await s.balance(USER)).toBe(100);
      expect(await reloaded(s, USER, 1_000)).toBe(100);
    });

    it('admits one of 50 concurrent flexible reserves on a small balance: the first takes all', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await seed(s, TOKEN, 100_000);
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => s.reserve(flex({ requestId: `c${i}` }))),
      );
      expect(results.filter((r) => r.ok)).toEqual([{ ok: true, held: 1_000 }]);
      expect(results.filter((r) => !r.ok && r.reason === 'insufficient_user_quota')).toHaveLength(49);
      expect(await s.balance(USER)).toBe(0);
    });

    it('keeps at most one partial hold open per account, even when quota is freed meanwhile', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await seed(s, TOKEN, 100_000);
      expect(await s.reserve(reserveReq({ requestId: 'exact', amount: 400 }))).toEqual({
        ok: true,
        held: 400,
      });
      expect(await s.reserve(flex({ requestId: 'a' }))).toEqual({ ok: true, held: 600 });
      // The exact call cost less than its hold: 300 is spendable again, above minAmount.
      await s.settle(settleReq({ requestId: 'exact', amount: 100 }));
      expect(await s.balance(USER)).toBe(300);
      // A second partial hold could exceed it too: refused while 'a' is open (an exact hold that fits is not).
      expect(await s.reserve(flex({ requestId: 'b' }))).toEqual({
        ok: false,
        reason: 'insufficient_user_quota',
        available: 300,
      });
      expect(await s.reserve(reserveReq({ requestId: 'c', amount: 250 }))).toEqual({ ok: true, held: 250 });
      await s.release('c');
      await s.release('a');
      expect(await s.reserve(flex({ requestId: 'b' }))).toEqual({ ok: true, held: 900 });
      // The sweeper releasing an expired partial hold frees the account too.
      expect(await s.releaseExpiredHolds(T0 + HOLD_TTL)).toBe(1);
      expect(await s.reserve(flex({ requestId: 'd', now: T0 + HOLD_TTL }))).toEqual({ ok: true, held: 900 });
    });

    it('marks the token account too: a partial hold on it blocks another through a different user', async () => {
      const s = await open();
      const other: AccountRef = { kind: 'user', id: 8 };
      await seed(s, USER, 100_000);
      await seed(s, other, 100_000);
      await seed(s, TOKEN, 1_000);
      expect(await s.reserve(reserveReq({ requestId: 'exact', amount: 400 }))).toEqual({
        ok: true,
        held: 400,
      });
      expect(await s.reserve(flex({ requestId: 'a' }))).toEqual({ ok: true, held: 600 });
      await s.release('exact');
      expect(await s.reserve(flex({ requestId: 'b', userId: other.id }))).toEqual({
        ok: false,
        reason: 'insufficient_token_quota',
        available: 400,
      });
      await s.settle(settleReq({ requestId: 'a', amount: 500 }));
      expect(await s.reserve(flex({ requestId: 'b', userId: other.id }))).toEqual({ ok: true, held: 500 });
    });
  });

  describe('rate limit', () => {
    it('never lets concurrent reserves overshoot the total limit', async () => {
      const s = await open();
      await seed(s, USER, 1_000_000);
      const limit: RateLimit = { key: 'u7:default', windowMs: 60_000, maxTotal: 7, maxSuccess: 0 };
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          s.reserve(reserveReq({ requestId: `c${i}`, tokenId: null, amount: 1, limit })),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(7);
      expect(results.filter((r) => !r.ok && r.reason === 'rate_limited')).toHaveLength(93);
    });

    it('counts failed attempts in the total window and admits again once the oldest leaves', async () => {
      const s = await open();
      await seed(s, USER, 1_000_000);
      const limit: RateLimit = { key: 'u7', windowMs: 1_000, maxTotal: 2, maxSuccess: 0 };
      const at = (requestId: string, now: number) =>
        s.reserve(reserveReq({ requestId, tokenId: null, amount: 1, limit, now }));
      expect(await at('a', T0)).toEqual({ ok: true, held: 1 });
      await s.release('a'); // the call failed: still an attempt
      expect(await at('b', T0 + 100)).toEqual({ ok: true, held: 1 });
      expect(await at('c', T0 + 200)).toEqual({ ok: false, reason: 'rate_limited', retryAfterMs: 800 });
      expect(await at('c', T0 + 999)).toEqual({ ok: false, reason: 'rate_limited', retryAfterMs: 1 });
      expect(await at('c', T0 + 1_000)).toEqual({ ok: true, held: 1 });
      // Now b (T0+100) is the oldest of the full window.
      expect(await at('d', T0 + 1_050)).toEqual({ ok: false, reason: 'rate_limited', retryAfterMs: 50 });
    });

    it('counts only successful settles in the success window', async () => {
      const s = await open();
      await seed(s, USER, 1_000_000);
      const limit: RateLimit = { key: 'u7', windowMs: 10_000, maxTotal: 0, maxSuccess: 2 };
      const call = async (requestId: string, now: number, success: boolean) => {
        const r = await s.reserve(reserveReq({ requestId, tokenId: null, amount: 1, limit, now }));
        if (r.ok)
          await s.settle(settleReq({ requestId, tokenId: null, amount: 1, success, limit, now: now + 5 }));
        return r;
      };
      expect(await call('a', T0, true)).toEqual({ ok: true, held: 1 });
      expect(await call('b', T0 + 100, false)).toEqual({ ok: true, held: 1 });
      expect(await call('c', T0 + 200, false)).toEqual({ ok: true, held: 1 });
      expect(await call('d', T0 + 300, true)).toEqual({ ok: true, held: 1 });
      // Successes at T0+5 and T0+305: full until the first leaves at T0+10_005.
      expect(await call('e', T0 + 400, true)).toEqual({
        ok: false,
        reason: 'rate_limited',
        retryAfterMs: 9_605,
      });
      expect(await call('e', T0 + 10_005, true)).toEqual({ ok: true, held: 1 });
    });

    it('treats 0 as unlimited for both windows', async () => {
      const s = await open();
      await seed(s, USER, 1_000_000);
      const limit: RateLimit = { key: 'u7', windowMs: 60_000, maxTotal: 0, maxSuccess: 0 };
      for (let i = 0; i < 40; i++) {
        const requestId = `u${i}`;
        expect(await s.reserve(reserveReq({ requestId, tokenId: null, amount: 1, limit }))).toEqual({
          ok: true,
          held: 1,
        });
        await s.settle(settleReq({ requestId, tokenId: null, amount: 1, limit }));
      }
    });

    it('keeps windows of different keys apart', async () => {
      const s = await open();
      await seed(s, USER, 1_000_000);
      const a: RateLimit = { key: 'u7:default', windowMs: 60_000, maxTotal: 1, maxSuccess: 0 };
      const b: RateLimit = { ...a, key: 'u7:vip' };
      const r = (requestId: string, limit: RateLimit) =>
        s.reserve(reserveReq({ requestId, tokenId: null, amount: 1, limit }));
      expect(await r('x', a)).toEqual({ ok: true, held: 1 });
      expect(await r('y', b)).toEqual({ ok: true, held: 1 });
      expect((await r('z', a)).ok).toBe(false);
    });
  });

  describe('balances', () => {
    it('loads committed − pend and never overwrites a present balance', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      expect(await s.reserve(reserveReq({ tokenId: null, amount: 300 }))).toEqual({ ok: true, held: 300 });
      // A second loader with a stale committed value must not replace the live balance.
      expect(await s.loadBalance(USER, await s.balanceGeneration(USER), 5_000, BAL_TTL)).toBe(true);
      expect(await s.balance(USER)).toBe(700);
      expect(await reloaded(s, USER, 2_000)).toBe(1_700);
    });

    it('refuses a load that raced with a Billing ack, and accepts it after reading again', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await s.reserve(reserveReq({ tokenId: null, amount: 100 }));
      const { entryId } = await s.settle(settleReq({ tokenId: null, amount: 100 }));
      await s.invalidateBalance(USER);

      const generation = await s.balanceGeneration(USER);
      // ...the relay reads committed = 1000 from PostgreSQL; meanwhile Billing commits 100 and acks.
      await s.ackOutbox([{ id: entryId, userId: USER.id, tokenId: null, amount: 100 }]);
      expect(await s.loadBalance(USER, generation, 1_000, BAL_TTL)).toBe(false);
      expect(await s.balance(USER)).toBeNull();

      const again = await s.balanceGeneration(USER);
      expect(again).toBe(generation + 1);
      expect(await s.loadBalance(USER, again, 900, BAL_TTL)).toBe(true);
      expect(await s.balance(USER)).toBe(900);
    });

    it('invalidate drops the balance and bumps the generation', async () => {
      const s = await open();
      await seed(s, TOKEN, 500);
      const generation = await s.balanceGeneration(TOKEN);
      await s.invalidateBalance(TOKEN);
      expect(await s.balance(TOKEN)).toBeNull();
      expect(await s.balanceGeneration(TOKEN)).toBe(generation + 1);
      expect(await s.loadBalance(TOKEN, generation, 800, BAL_TTL)).toBe(false);
      // Generations are per account.
      expect(await s.balanceGeneration(USER)).toBe(0);
    });

    it('forgets a cached balance after its TTL', async () => {
      const s = await open();
      await seed(s, USER, 1_000, 50);
      expect(await s.balance(USER)).toBe(1_000);
      await new Promise((r) => setTimeout(r, 120));
      expect(await s.balance(USER)).toBeNull();
      expect(await s.reserve(reserveReq({ tokenId: null }))).toEqual({
        ok: false,
        reason: 'balance_unknown',
        account: USER,
      });
    });
  });

  describe('settle and release', () => {
    it('replaces the hold by the final amount, up or down', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await seed(s, TOKEN, 1_000);
      await s.reserve(reserveReq({ requestId: 'low', amount: 100 }));
      await s.reserve(reserveReq({ requestId: 'high', amount: 100 }));
      await s.settle(settleReq({ requestId: 'low', amount: 30 }));
      await s.settle(settleReq({ requestId: 'high', amount: 250 }));
      expect(await s.balance(USER)).toBe(720);
      expect(await s.balance(TOKEN)).toBe(720);
      expect(await reloaded(s, USER, 1_000)).toBe(720);
      expect(await reloaded(s, TOKEN, 1_000)).toBe(720);
      // The holds are gone: releasing after settle changes nothing.
      await s.release('low');
      await s.release('high');
      expect(await s.balance(USER)).toBe(720);
      expect(await reloaded(s, USER, 1_000)).toBe(720);
    });

    it('is idempotent by request id', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await seed(s, TOKEN, 1_000);
      await s.reserve(reserveReq());
      const first = await s.settle(settleReq({ amount: 80 }));
      const second = await s.settle(settleReq({ amount: 500, now: T0 + 20 }));
      expect(second.entryId).toBe(first.entryId);
      expect(await s.balance(USER)).toBe(920);
      const pending = await s.outboxPending(T0 + 1_000, 10);
      expect(pending.map((e) => e.id)).toEqual([first.entryId]);
      expect(pending[0]?.amount).toBe(80);
    });

    it('charges once when the sweeper released the hold before a late settle', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await seed(s, TOKEN, 1_000);
      await s.reserve(reserveReq({ amount: 100 }));
      expect(await s.releaseExpiredHolds(T0 + HOLD_TTL)).toBe(1);
      expect(await s.balance(USER)).toBe(1_000);
      await s.settle(settleReq({ amount: 60, now: T0 + HOLD_TTL + 1 }));
      expect(await s.balance(USER)).toBe(940);
      expect(await s.balance(TOKEN)).toBe(940);
      expect(await reloaded(s, USER, 1_000)).toBe(940);
      expect(await reloaded(s, TOKEN, 1_000)).toBe(940);
    });

    it('settles without a cached balance by moving pend only', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await s.reserve(reserveReq({ tokenId: null, amount: 100 }));
      await s.invalidateBalance(USER);
      await s.settle(settleReq({ tokenId: null, amount: 40 }));
      expect(await s.balance(USER)).toBeNull();
      expect(await reloaded(s, USER, 1_000)).toBe(960);
    });

    it('release gives the hold back once; unknown ids are a no-op', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await seed(s, TOKEN, 200);
      await s.reserve(reserveReq({ amount: 150 }));
      await s.release('r1');
      await s.release('r1');
      await s.release('nope');
      expect(await s.balance(USER)).toBe(1_000);
      expect(await s.balance(TOKEN)).toBe(200);
      expect(await reloaded(s, TOKEN, 200)).toBe(200);
      expect(await s.outboxPending(T0 + HOLD_TTL, 10)).toEqual([]);
    });

    it('sweeps only holds whose TTL passed, in batches beyond one script', async () => {
      const s = await open();
      await seed(s, USER, 1_000_000);
      const n = 620;
      for (let i = 0; i < n; i++) {
        await s.reserve(reserveReq({ requestId: `h${i}`, tokenId: null, amount: 1, holdTtlMs: 1_000 }));
      }
      await s.reserve(reserveReq({ requestId: 'late', tokenId: null, amount: 5, holdTtlMs: 5_000 }));
      expect(await s.releaseExpiredHolds(T0 + 999)).toBe(0);
      expect(await s.releaseExpiredHolds(T0 + 1_000)).toBe(n);
      expect(await s.releaseExpiredHolds(T0 + 1_000)).toBe(0);
      expect(await s.balance(USER)).toBe(1_000_000 - 5);
      expect(await s.releaseExpiredHolds(T0 + 5_000)).toBe(1);
      expect(await reloaded(s, USER, 1_000_000)).toBe(1_000_000);
    });
  });

  describe('outbox', () => {
    it('returns entries oldest first, up to olderThan and limit, with their fields', async () => {
      const s = await open();
      await seed(s, USER, 1_000_000);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const { entryId } = await s.settle(
          settleReq({
            requestId: `o${i}`,
            tokenId: i % 2 ? TOKEN.id : null,
            amount: i,
            payload: `p${i}`,
            now: T0 + i * 10,
          }),
        );
        ids.push(entryId);
      }
      const all = await s.outboxPending(T0 + 1_000, 100);
      expect(all.map((e) => e.id)).toEqual(ids);
      expect(all[1]).toEqual({
        id: ids[1],
        requestId: 'o1',
        userId: USER.id,
        tokenId: TOKEN.id,
        amount: 1,
        payload: 'p1',
        createdAt: T0 + 10,
      });
      expect(all[0]?.tokenId).toBeNull();
      // At or before olderThan: T0+20 includes the entry created at T0+20.
      expect((await s.outboxPending(T0 + 20, 100)).map((e) => e.requestId)).toEqual(['o0', 'o1', 'o2']);
      expect((await s.outboxPending(T0 + 1_000, 2)).map((e) => e.requestId)).toEqual(['o0', 'o1']);
      expect(await s.outboxPending(T0 - 1, 100)).toEqual([]);
    });

    it('keeps ids growing when a settle carries an earlier clock', async () => {
      const s = await open();
      await seed(s, USER, 1_000_000);
      const a = await s.settle(settleReq({ requestId: 'a', tokenId: null, now: T0 + 100 }));
      const b = await s.settle(settleReq({ requestId: 'b', tokenId: null, now: T0 }));
      const pending = await s.outboxPending(T0 + 100, 10);
      expect(pending.map((e) => e.id)).toEqual([a.entryId, b.entryId]);
      expect(pending[1]?.createdAt).toBe(T0);
    });

    it('ack removes entries and lowers pend and bumps generations once, even when acked twice', async () => {
      const s = await open();
      await seed(s, USER, 1_000);
      await seed(s, TOKEN, 1_000);
      await s.reserve(reserveReq({ amount: 100 }));
      const { entryId } = await s.settle(settleReq({ amount: 100 }));
      const [entry] = await s.outboxPending(T0 + 1_000, 10);
      expect(entry?.id).toBe(entryId);
      const genUser = await s.balanceGeneration(USER);
      const genToken = await s.balanceGeneration(TOKEN);

      const ack = { id: entryId, userId: USER.id, tokenId: TOKEN.id, amount: 100 };
      await Promise.all([s.ackOutbox([ack]), s.ackOutbox([ack])]);
      await s.ackOutbox([ack, { ...ack, id: `${T0}-99` }]);

      expect(await s.outboxPending(T0 + 1_000, 10)).toEqual([]);
      expect(await s.balanceGeneration(USER)).toBe(genUser + 1);
      expect(await s.balanceGeneration(TOKEN)).toBe(genToken + 1);
      // The ack does not touch the cached balance: committed fell by 100 as pend did.
      expect(await s.balance(USER)).toBe(900);
      // Billing committed 100: committed is now 900 and pend is back to 0.
      expect(await reloaded(s, USER, 900)).toBe(900);
      expect(await reloaded(s, TOKEN, 900)).toBe(900);
    });

    it('acks a batch of several accounts and calls: each pend falls by its own sum, generations move', async () => {
      const s = await open();
      const OTHER = { kind: 'user', id: USER.id + 1 } as const;
      await seed(s, USER, 10_000);
      await seed(s, TOKEN, 10_000);
      await seed(s, OTHER, 10_000);
      const calls = [
        { requestId: 'a1', userId: USER.id, tokenId: TOKEN.id, hold: 300, amount: 120 },
        { requestId: 'a2', userId: OTHER.id, tokenId: null, hold: 50, amount: 75 },
        { requestId: 'a3', userId: USER.id, tokenId: TOKEN.id, hold: 10, amount: 10 },
        { requestId: 'a4', userId: USER.id, tokenId: null, hold: 0, amount: 7 },
      ];
      const acks = [];
      for (const c of calls) {
        await s.reserve(
          reserveReq({ requestId: c.requestId, userId: c.userId, tokenId: c.tokenId, amount: c.hold }),
        );
        const { entryId } = await s.settle(
          settleReq({ requestId: c.requestId, userId: c.userId, tokenId: c.tokenId, amount: c.amount }),
        );
        acks.push({ id: entryId, userId: c.userId, tokenId: c.tokenId, amount: c.amount });
      }
      // Settled but not acknowledged: pend holds the final amounts.
      expect(await reloaded(s, USER, 10_000)).toBe(10_000 - 137);
      expect(await reloaded(s, TOKEN, 10_000)).toBe(10_000 - 130);
      expect(await reloaded(s, OTHER, 10_000)).toBe(10_000 - 75);
      const gens = await Promise.all([USER, TOKEN, OTHER].map((a) => s.balanceGeneration(a)));

      // One ack for everything; a1 again in a second, overlapping ack changes nothing more.
      await s.ackOutbox(acks);
      await s.ackOutbox([acks[0]!]);
      expect(await s.outboxPending(T0 + 1_000, 10)).toEqual([]);
      const after = await Promise.all([USER, TOKEN, OTHER].map((a) => s.balanceGeneration(a)));
      for (const [i, g] of after.entries()) expect(g).toBeGreaterThan(gens[i]!);
      // Billing committed them: pend is 0 again for each account.
      expect(await reloaded(s, USER, 10_000 - 137)).toBe(10_000 - 137);
      expect(await reloaded(s, TOKEN, 10_000 - 130)).toBe(10_000 - 130);
      expect(await reloaded(s, OTHER, 10_000 - 75)).toBe(10_000 - 75);
    });

    it('acks an empty batch without effect', async () => {
      const s = await open();
      await expect(s.ackOutbox([])).resolves.toBeUndefined();
    });
  });

  it('rejects every operation once closed', async () => {
    const s = await open();
    await s.close();
    await expect(s.reserve(reserveReq())).rejects.toThrow(/closed/);
    await expect(s.balance(USER)).rejects.toThrow(/closed/);
    await expect(s.outboxPending(T0, 1)).rejects.toThrow(/closed/);
    await expect(s.ackOutbox([])).rejects.toThrow(/closed/);
  });

  it('rejects amounts that are not non-negative integers and malformed entry ids', async () => {
    const s = await open();
    await expect(s.reserve(reserveReq({ amount: -1 }))).rejects.toThrow(RangeError);
    await expect(s.reserve(reserveReq({ amount: 1.5 }))).rejects.toThrow(RangeError);
    await expect(s.settle(settleReq({ amount: Number.NaN }))).rejects.toThrow(RangeError);
    const bad = { id: 'not-an-id', userId: USER.id, tokenId: null, amount: 1 };
    await expect(s.ackOutbox([bad])).rejects.toThrow(RangeError);
  });

  it('grants a leader lease to one holder at a time, extends it for that holder, and frees it on release or expiry', async () => {
    const s = await open();
    const results = await Promise.all(['a', 'b', 'c'].map((h) => s.acquireLease('tests', h, 60_000)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const leader = ['a', 'b', 'c'][results.indexOf(true)]!;
    const other = leader === 'a' ? 'b' : 'a';
    expect(await s.acquireLease('tests', leader, 60_000)).toBe(true);
    expect(await s.acquireLease('tests', other, 60_000)).toBe(false);
    expect(await s.acquireLease('balances', other, 60_000)).toBe(true);
    await s.releaseLease('tests', other); // not the holder: no effect
    expect(await s.acquireLease('tests', other, 60_000)).toBe(false);
    await s.releaseLease('tests', leader);
    expect(await s.acquireLease('tests', other, 50)).toBe(true);
    await new Promise((r) => setTimeout(r, 80));
    expect(await s.acquireLease('tests', leader, 60_000)).toBe(true);
  });
});
