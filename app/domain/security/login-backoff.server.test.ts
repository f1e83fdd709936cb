/**
 * Login back-off per account (issue 13, item 9): the limiter primitive with the in-process and the Redis
 * implementation, then the two login transports (POST /api/user/login and the /login page form) with each
 * limiter, every attempt from a different client IP so that the per-IP critical limit never applies.
 */
import { testRedisPrefix, testRedisUrl } from '@switchyard/db/testing.ts';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FormReply } from '#app/components/auth/action.server.ts';
import { type AuthEnv, createAuthEnv, freshIp, req } from '#app/domain/auth/testing.server.ts';
import {
  type BackoffPolicy,
  backoffWaitMs,
  CLIENT_IP_HEADER,
  createMemoryRateLimiter,
  createRedisRateLimiter,
  loginBackoffWindowMs,
  type RateLimiter,
} from '#app/domain/security/rate-limit.server.ts';
import { action as loginApiAction } from '#app/routes/api.user.login.ts';
import { action as loginPageAction } from '#app/routes/login.tsx';
import type { ConsoleServices } from '#app/services.server.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const redis = createClient({ url: testRedisUrl() });
const prefix = `${testRedisPrefix()}login_backoff:${crypto.randomUUID()}:`;
beforeAll(async () => {
  await redis.connect();
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(keys);
  await redis.close();
});

const limiters: [string, () => RateLimiter][] = [
  ['in-process', () => createMemoryRateLimiter()],
  ['Redis', () => createRedisRateLimiter(redis, prefix)],
];

describe('backoffWaitMs', () => {
  it('is 0 before the free attempts are used, then doubles from the base up to the cap', () => {
    const policy = { free: 5, baseMs: 1000, maxMs: 300_000 };
    expect([1, 4, 5, 6, 7, 8].map((n) => backoffWaitMs(n, policy))).toEqual([0, 0, 1000, 2000, 4000, 8000]);
    expect(backoffWaitMs(13, policy)).toBe(256_000);
    expect(backoffWaitMs(14, policy)).toBe(300_000);
    expect(backoffWaitMs(10_000, policy)).toBe(300_000);
  });
});

describe.each(limiters)('backoff with the %s limiter', (_name, make) => {
  const policy: BackoffPolicy = { free: 3, baseMs: 100, maxMs: 250, windowMs: 60_000 };

  it('allows the free attempts, then refuses until the growing wait ends; the wait is capped', async () => {
    const limiter = make();
    const key = `k:${crypto.randomUUID()}`;
    for (let i = 0; i < 3; i++) expect(await limiter.backoff(key, policy)).toEqual({ allowed: true });
    // the third attempt set a 100 ms wait
    const refused = await limiter.backoff(key, policy);
    expect(refused.allowed).toBe(false);
    if (refused.allowed) throw new Error('unreachable');
    expect(refused.retryAfterMs).toBeGreaterThan(50);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(100);
    await sleep(110);
    expect((await limiter.backoff(key, policy)).allowed).toBe(true); // 4th: sets 200 ms
    await sleep(110);
    expect((await limiter.backoff(key, policy)).allowed).toBe(false);
    await sleep(100);
    expect((await limiter.backoff(key, policy)).allowed).toBe(true); // 5th: 400 ms, capped at 250
    const capped = await limiter.backoff(key, policy);
    if (capped.allowed) throw new Error('expected a refusal');
    expect(capped.retryAfterMs).toBeGreaterThan(200);
    expect(capped.retryAfterMs).toBeLessThanOrEqual(250);
    await sleep(260);
    expect((await limiter.backoff(key, policy)).allowed).toBe(true); // 6th: still 250
    const still = await limiter.backoff(key, policy);
    if (still.allowed) throw new Error('expected a refusal');
    expect(still.retryAfterMs).toBeLessThanOrEqual(250);
  });

  it('reset ends the back-off; a refused attempt does not lengthen it; keys are independent', async () => {
    const limiter = make();
    const key = `k:${crypto.randomUUID()}`;
    for (let i = 0; i < 3; i++) await limiter.backoff(key, policy);
    for (let i = 0; i < 5; i++) expect((await limiter.backoff(key, policy)).allowed).toBe(false);
    expect((await limiter.backoff(`${key}:other`, policy)).allowed).toBe(true);
    await sleep(110);
    expect((await limiter.backoff(key, policy)).allowed).toBe(true);
    await limiter.reset(key);
    for (let i = 0; i < 3; i++) expect((await limiter.backoff(key, policy)).allowed).toBe(true);
  });

  it('lets exactly one of many concurrent attempts through once the free attempts are used', async () => {
    const limiter = make();
    const key = `k:${crypto.randomUUID()}`;
    const slow = { ...policy, baseMs: 5_000, maxMs: 5_000 };
    for (let i = 0; i < 3; i++) await limiter.backoff(key, slow);
    const none = await Promise.all(Array.from({ length: 20 }, () => limiter.backoff(key, slow)));
    expect(none.filter((d) => d.allowed)).toHaveLength(0);
    const fresh = `k:${crypto.randomUUID()}`;
    const first = await Promise.all(Array.from({ length: 20 }, () => limiter.backoff(fresh, slow)));
    // 3 free attempts, the third of which starts the wait: the other 17 are refused
    expect(first.filter((d) => d.allowed)).toHaveLength(3);
  });

  it('backoffFailed restarts the wait from the failure (a slow check does not eat the wait)', async () => {
    const limiter = make();
    const key = `k:${crypto.randomUUID()}`;
    await limiter.backoffFailed(key, policy); // nothing claimed: no effect
    expect((await limiter.backoff(key, policy)).allowed).toBe(true);
    await limiter.backoffFailed(key, policy); // 1st attempt: no wait yet
    expect((await limiter.backoff(key, policy)).allowed).toBe(true);
    expect((await limiter.backoff(key, policy)).allowed).toBe(true); // 3rd: 100 ms from now
    await sleep(80); // the "password check" took 80 ms, then failed
    await limiter.backoffFailed(key, policy);
    await sleep(50); // 130 ms after the claim, 50 ms after the failure
    const refused = await limiter.backoff(key, policy);
    if (refused.allowed) throw new Error('expected a refusal');
    expect(refused.retryAfterMs).toBeGreaterThan(20);
    // About 50 left; a timer may fire a millisecond or two early against Date.now (CI saw 51 once).
    expect(refused.retryAfterMs).toBeLessThanOrEqual(55);
    await sleep(60);
    expect((await limiter.backoff(key, policy)).allowed).toBe(true);
  });

  it('counts in a fixed window from the first attempt: once it has passed and the wait ended, the count restarts', async () => {
    const limiter = make();
    const key = `k:${crypto.randomUUID()}`;
    const short = { ...policy, windowMs: 150 };
    for (let i = 0; i < 3; i++) await limiter.backoff(key, short); // the third sets a 100 ms wait
    await sleep(110);
    expect((await limiter.backoff(key, short)).allowed).toBe(true); // 4th, inside the window: 200 ms wait
    expect((await limiter.backoff(key, short)).allowed).toBe(false);
    await sleep(210); // the window (150 ms) has passed and the wait ended
    for (let i = 0; i < 3; i++) expect((await limiter.backoff(key, short)).allowed).toBe(true);
  });
});

describe.each(limiters)(
  'an attacker with one try per LOGIN_BACKOFF_MAX, %s limiter (issue 23 item 7)',
  (_name, make) => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('cannot keep the account locked: its owner, even without a device cookie, gets in within LOGIN_BACKOFF_MAX', async () => {
      // The defaults (5 free, 1 s doubling to 300 s), on a simulated clock over 48 hours of attack.
      const shape = { free: 5, baseMs: 1000, maxMs: 300_000 };
      const policy: BackoffPolicy = { ...shape, windowMs: loginBackoffWindowMs(shape) };
      expect(policy.windowMs).toBe(65 * 60 * 1000);
      const limiter = make();
      const key = `k:${crypto.randomUUID()}`;
      vi.useFakeTimers({ toFake: ['Date'] });
      const start = Date.UTC(2026, 0, 1);
      let now = start;
      const at = (t: number) => {
        now = t;
        vi.setSystemTime(t);
      };
      // The attacker goes first whenever it may: it retries a refusal the moment it ends (refusals cost it
      // nothing), and sends a counted (wrong) guess at most once per LOGIN_BACKOFF_MAX.
      let attackerNext = start;
      let guesses = 0;
      const attackUntil = async (t: number) => {
        while (attackerNext <= t) {
          at(attackerNext);
          const d = await limiter.backoff(key, policy);
          if (d.allowed) {
            guesses += 1;
            await limiter.backoffFailed(key, policy);
            attackerNext = now + policy.maxMs;
          } else {
            expect(d.retryAfterMs).toBeLessThanOrEqual(policy.maxMs);
            attackerNext = now + d.retryAfterMs;
          }
        }
      };
      const waits: number[] = [];
      // The owner arrives now and then (every 3 h 7 min, at odd phases of the attack), tries, and on a refusal
      // retries when told.
      for (
        let arrival = start + 2 * 3_600_000;
        arrival < start + 48 * 3_600_000;
        arrival += 187 * 60_000 + 1234
      ) {
        await attackUntil(arrival - 1);
        let t = arrival;
        let tries = 0;
        for (;;) {
          await attackUntil(t); // at a tie, the attacker is first
          at(t);
          const d = await limiter.backoff(key, policy);
          if (d.allowed) break;
          expect(d.retryAfterMs).toBeLessThanOrEqual(policy.maxMs);
          t = now + d.retryAfterMs;
          if (++tries > 20) break;
        }
        waits.push(now - arrival);
        await limiter.reset(key); // the right password ends the back-off
      }
      vi.useRealTimers();
      expect(guesses).toBeGreaterThan(400);
      expect(waits).toHaveLength(15);
      expect(Math.max(...waits)).toBeLessThanOrEqual(policy.maxMs);
    });
  },
);

describe.each(limiters)('login back-off per account with the %s limiter', (name, make) => {
  let env: AuthEnv;
  let services: ConsoleServices;
  beforeAll(async () => {
    env = await createAuthEnv(`login_backoff_${name === 'Redis' ? 'redis' : 'memory'}`);
    services = {
      ...env.services,
      limiter: make(),
      auth: { ...env.services.auth!, loginBackoff: { failures: 5, maxSeconds: 2 } },
    };
    await env.createUser({ username: 'alice', password: 'alice-password', email: 'alice@example.com' });
    await env.createUser({ username: 'bob', password: 'bob-password', email: 'bob@example.com' });
    await env.createUser({ username: 'carol', password: 'carol-password' });
    await env.createUser({ username: 'dave', password: 'dave-password' });
  });
  afterAll(async () => {
    await env?.close();
  });

  type Answer = { status: number; message: string; success: boolean; retryAfter: number | null };

  /** POST /api/user/login from a fresh client IP. */
  async function viaApi(username: string, password: string): Promise<Answer> {
    const request = req('http://localhost/api/user/login', {
      json: { username, password },
      headers: { 'Accept-Language': 'en' },
    });
    const res = (await loginApiAction({ request, context: { services }, params: {} } as never)) as Response;
    const body = (await res.json()) as { success: boolean; message: string };
    const retry = res.headers.get('Retry-After');
    return { status: res.status, ...body, retryAfter: retry === null ? null : Number(retry) };
  }

  /** The /login page form from a fresh client IP. */
  async function viaPage(username: string, password: string): Promise<Answer> {
    const request = new Request('http://localhost/login', {
      method: 'POST',
      body: new URLSearchParams({ intent: 'login', username, password }),
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'Accept-Language': 'en',
        [CLIENT_IP_HEADER]: freshIp(),
      },
    });
    const out = (await loginPageAction({ request, context: { services }, params: {} } as never)) as
      | Response
      | { data: FormReply; init: { status?: number; headers?: HeadersInit } | null };
    if (out instanceof Response) return { status: out.status, message: '', success: true, retryAfter: null };
    const retry = new Headers(out.init?.headers).get('Retry-After');
    return {
      status: out.init?.status ?? 200,
      message: out.data.message ?? '',
      success: false,
      retryAfter: retry === null ? null : Number(retry),
    };
  }

  const wrongMessage = 'Username or password is wrong, or user has been banned';
  const waitMessage = (s: number) => `Too many failed sign-in attempts for this account, try again in ${s} s`;

  for (const [transport, login, user] of [
    ['POST /api/user/login', viaApi, 'alice'],
    ['the /login form', viaPage, 'bob'],
  ] as const) {
    const succeeded = (a: Answer) =>
      transport === 'the /login form' ? a.status === 302 : a.status === 200 && a.success;

    it(`${transport}: failures from many IPs are throttled past 5; the right password works after the wait; success resets`, async () => {
      const email = `${user}@example.com`;
      for (let i = 0; i < 5; i++) {
        const a = await login(i % 2 ? email : user, 'wrong-password');
        expect(a.status, `attempt ${i + 1}`).toBe(transport === 'the /login form' ? 400 : 200);
        expect(a.message).toBe(wrongMessage);
      }
      // the 6th attempt, even with the right password and by e-mail in capitals: refused before any check
      for (const name of [user, email.toUpperCase()]) {
        const refused = await login(name, `${user}-password`);
        expect(refused).toMatchObject({ status: 429, message: waitMessage(1), retryAfter: 1 });
      }
      await sleep(1050);
      expect(succeeded(await login(user, `${user}-password`))).toBe(true);
      // the success reset the count: five more failures are answered as such, then the wait again
      for (let i = 0; i < 5; i++) expect((await login(user, 'wrong-password')).message).toBe(wrongMessage);
      expect((await login(user, `${user}-password`)).status).toBe(429);
      await sleep(1050);
      expect(succeeded(await login(email, `${user}-password`))).toBe(true);
    });
  }

  it('the wait doubles and is capped (LOGIN_BACKOFF_MAX = 2 s here)', async () => {
    for (let i = 0; i < 5; i++) await viaApi('carol', 'wrong-password');
    expect(await viaApi('carol', 'wrong-password')).toMatchObject({ status: 429, retryAfter: 1 });
    await sleep(1050);
    expect((await viaApi('carol', 'wrong-password')).message).toBe(wrongMessage); // 6th: waits 2 s
    expect(await viaApi('carol', 'wrong-password')).toMatchObject({ status: 429, retryAfter: 2 });
    await sleep(2050);
    expect((await viaApi('carol', 'wrong-password')).message).toBe(wrongMessage); // 7th: 4 s, capped at 2
    expect(await viaApi('carol', 'carol-password')).toMatchObject({
      status: 429,
      message: waitMessage(2),
      retryAfter: 2,
    });
    // other accounts are not affected
    expect((await viaApi('dave', 'dave-password')).success).toBe(true);
  });

  it('unknown names are throttled the same way (no hint whether an account exists)', async () => {
    for (let i = 0; i < 5; i++) expect((await viaApi('nobody', 'guess')).message).toBe(wrongMessage);
    expect(await viaApi('nobody', 'guess')).toMatchObject({ status: 429, message: waitMessage(1) });
  });

  it('LOGIN_BACKOFF_FAILURES=0 turns it off', async () => {
    const off = { ...services, auth: { ...services.auth!, loginBackoff: { failures: 0, maxSeconds: 2 } } };
    const saved = services;
    services = off;
    try {
      for (let i = 0; i < 8; i++) expect((await viaApi('dave', 'wrong-password')).status).toBe(200);
      expect((await viaApi('dave', 'dave-password')).success).toBe(true);
    } finally {
      services = saved;
    }
  });
});
