import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Redemption, RedemptionStatus } from '@switchyard/db/entities/redemption.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { User } from '@switchyard/db/entities/user.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { generateRedemptionKey } from '#app/domain/redemptions/redemptions.server.ts';
import { createMemoryRateLimiter, type RateLimiter } from '#app/domain/security/rate-limit.server.ts';
import { action, loader } from '#app/routes/topup.tsx';

/** The /topup page's loader and action against a real PostgreSQL (seed 001 §2.9, §5 Top-up, §7 Wallet). */

let db: TestDatabase;
let seq = 0;
let limiter: RateLimiter;
let criticalLimit = { max: 1000, windowSeconds: 60 };
let optionValues: Record<string, unknown>;
let invalidations: { userIds: number[]; tokenIds: number[] }[];

const DEFAULTS: Record<string, unknown> = {
  DisplayInCurrencyEnabled: true,
  QuotaPerUnit: 500000,
  TopUpLink: '',
  MinTopUp: 1,
  Price: 7.3,
  TopupConfig: [],
};

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'wallet_routes', poolMax: 12 });
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  limiter = createMemoryRateLimiter();
  criticalLimit = { max: 1000, windowSeconds: 60 };
  optionValues = { ...DEFAULTS };
  invalidations = [];
  await db.orm.em
    .getConnection()
    .execute('truncate table sessions, redemptions, audit_entries, logs, users restart identity cascade');
});

function context() {
  return {
    services: {
      orm: db.orm,
      options: { get: (key: string) => optionValues[key] },
      // records what the page asks the relay to drop (the relay must see the new balance at once)
      relay: {
        invalidateAccounts: async (req: { userIds: number[]; tokenIds: number[] }) => {
          invalidations.push(req);
          return {};
        },
      },
      version: 'test',
      startedAt: 0,
      limiter,
      auth: { trustProxy: false, turnstileVerifyUrl: '', criticalLimit },
    },
  } as never;
}

type Who = { user: User; token: string };

async function makeUser(over: Record<string, unknown> = {}): Promise<Who> {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, {
    username: `wal${seq}`,
    displayName: '',
    affCode: `walaff${seq}`,
    ...over,
  } as never);
  await em.flush();
  const token = createSessionToken();
  em.create(Session, {
    id: await sha256Hex(token),
    user: user.id,
    expiresAt: new Date(Date.now() + 3_600_000),
  } as never);
  await em.flush();
  return { user, token };
}

async function makeCode(quota: number, status: number = RedemptionStatus.Unused): Promise<string> {
  const em = db.orm.em.fork();
  const key = generateRedemptionKey();
  em.create(Redemption, { key, quota, status, name: 'w' } as never);
  await em.flush();
  return key;
}

function pageRequest(who: Who | null, path: string, form?: Record<string, string>) {
  const headers = new Headers({ 'Accept-Language': 'en' });
  if (who) headers.set('Cookie', `sy_session=${who.token}`);
  return new Request(`http://localhost${path}`, {
    method: form ? 'POST' : 'GET',
    headers,
    body: form ? new URLSearchParams(form) : undefined,
  });
}

type Reply = { type: 'DataWithResponseInit'; data: { error: string; key: string }; init: { status: number } };

/** Runs the loader/action; a thrown Response (the login redirect) is returned instead. */
async function run(fn: (args: never) => unknown, request: Request): Promise<unknown> {
  try {
    return await fn({ request, context: context(), params: {} } as never);
  } catch (error) {
    if (error instanceof Response) return error;
    throw error;
  }
}

const redeem = (who: Who, key: string, intent = 'redeem') =>
  run(action, pageRequest(who, '/topup', { intent, key }));

const quotaOf = async (who: Who) =>
  Number((await db.orm.em.fork().findOneOrFail(User, { id: who.user.id })).quota);
const topUpLogs = (who: Who) => db.orm.em.fork().find(Log, { userId: who.user.id, type: LogType.TopUp });

function expectRefused(result: unknown, message: string, status = 400) {
  const reply = result as Reply;
  expect(reply.type).toBe('DataWithResponseInit');
  expect(reply.init.status).toBe(status);
  expect(reply.data.error).toBe(message);
}

describe('GET /topup', () => {
  it('sends an anonymous visitor to the login page', async () => {
    const res = (await run(loader, pageRequest(null, '/topup'))) as Response;
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toMatch(/^\/login/);
  });

  it("shows the user's own balance, used quota and request count, fresh from the database", async () => {
    const who = await makeUser({ quota: 1_250_000, usedQuota: 250_000, requestCount: 42 });
    await makeUser({ quota: 9 });
    optionValues.TopUpLink = 'https://shop.example/codes';
    const page = (await run(loader, pageRequest(who, '/topup'))) as Awaited<ReturnType<typeof loader>>;
    expect(page.title).toBe('Wallet');
    expect(page.summary).toEqual({
      quota: 1_250_000,
      used_quota: 250_000,
      request_count: 42,
      display: { displayInCurrency: true, quotaPerUnit: 500000 },
      top_up_link: 'https://shop.example/codes',
      online: { enabled: false, min_topup: 1, price: 7.3, amounts: [] },
    });
    expect(page.amount).toBeNull();
  });

  it('never renders a non-http top-up link', async () => {
    const who = await makeUser();
    optionValues.TopUpLink = 'javascript:alert(1)';
    const page = (await run(loader, pageRequest(who, '/topup'))) as Awaited<ReturnType<typeof loader>>;
    expect(page.summary.top_up_link).toBe('');
  });

  it('computes the payable amount only when online top-up is configured', async () => {
    const who = await makeUser();
    const at = async (q: string) =>
      ((await run(loader, pageRequest(who, `/topup?amount=${q}`))) as Awaited<ReturnType<typeof loader>>)
        .amount;
    expect(await at('10')).toBeNull();
    Object.assign(optionValues, {
      AlipayAppId: 'app',
      AlipayPrivateKey: 'k',
      AlipayPublicKey: 'pk',
      AlipayNotifyUrl: 'https://pay.example.com/api/payment/alipay/notify',
      MinTopUp: 5,
      TopupConfig: [10, 50],
    });
    expect(await at('10')).toEqual({ raw: '10', payable: '73.00', error: null });
    expect(await at('12.5')).toEqual({ raw: '12.5', payable: '91.25', error: null });
    expect(await at('1.234')).toMatchObject({ payable: null, error: 'invalid' });
    expect(await at('0')).toMatchObject({ payable: null, error: 'invalid' });
    expect(await at('2')).toMatchObject({ payable: null, error: 'belowMin' });
    const page = (await run(loader, pageRequest(who, '/topup'))) as Awaited<ReturnType<typeof loader>>;
    expect(page.summary.online).toEqual({ enabled: true, min_topup: 5, price: 7.3, amounts: [10, 50] });
  });
});

describe('POST /topup intent=redeem', () => {
  it('credits the code, writes one top-up log row, flashes success and tells the relay', async () => {
    const who = await makeUser({ quota: 100 });
    const key = await makeCode(1_000_000);
    const res = (await redeem(who, key.toUpperCase())) as Response;
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/topup');
    expect(res.headers.get('Set-Cookie')).toContain('sy_toast=');
    expect(await quotaOf(who)).toBe(1_000_100);
    const logs = await topUpLogs(who);
    expect(logs).toHaveLength(1);
    expect(Number(logs[0]!.quota)).toBe(1_000_000);
    const code = await db.orm.em.fork().findOneOrFail(Redemption, { key });
    expect([code.status, code.usedUserId]).toEqual([RedemptionStatus.Used, who.user.id]);
    expect(await db.orm.em.fork().count(AuditEntry, { action: 'redemption.redeem' })).toBe(1);
    expect(invalidations).toEqual([{ userIds: [who.user.id], tokenIds: [] }]);
    // the page now shows the new balance
    const page = (await run(loader, pageRequest(who, '/topup'))) as Awaited<ReturnType<typeof loader>>;
    expect(page.summary.quota).toBe(1_000_100);
  });

  it('refuses a used code and keeps the typed code in the box', async () => {
    const first = await makeUser();
    const second = await makeUser();
    const key = await makeCode(500_000);
    expect(((await redeem(first, key)) as Response).status).toBe(302);
    const again = await redeem(second, key);
    expectRefused(again, 'This redemption code has already been used');
    expect((again as Reply).data.key).toBe(key);
    expectRefused(await redeem(first, key), 'This redemption code has already been used');
    expect(await quotaOf(second)).toBe(0);
    expect(await quotaOf(first)).toBe(500_000);
    expect(await topUpLogs(second)).toHaveLength(0);
  });

  it('refuses a disabled code without crediting', async () => {
    const who = await makeUser();
    const key = await makeCode(500_000, RedemptionStatus.Disabled);
    expectRefused(await redeem(who, key), 'This redemption code has already been used');
    expect(await quotaOf(who)).toBe(0);
    expect(await topUpLogs(who)).toHaveLength(0);
    const code = await db.orm.em.fork().findOneOrFail(Redemption, { key });
    expect([code.status, code.usedUserId]).toEqual([RedemptionStatus.Disabled, 0]);
    expect(invalidations).toEqual([]);
  });

  it('asks for a code, refuses an unknown one and an unknown intent', async () => {
    const who = await makeUser();
    expectRefused(await redeem(who, '  '), 'Please enter the redemption code!');
    expectRefused(await redeem(who, 'f'.repeat(32)), 'Invalid redemption code');
    expectRefused(await redeem(who, await makeCode(5), 'buy'), 'Unknown action');
    expect(await quotaOf(who)).toBe(0);
  });

  it('credits once when the same code is redeemed by five concurrent page actions', async () => {
    const who = await makeUser({ quota: 7 });
    const key = await makeCode(2_000_000);
    const results = await Promise.all(Array.from({ length: 5 }, () => redeem(who, key)));
    const successes = results.filter((r) => r instanceof Response && r.status === 302);
    const refusals = results.filter((r) => !(r instanceof Response)) as Reply[];
    expect(successes).toHaveLength(1);
    expect(refusals).toHaveLength(4);
    for (const r of refusals) expectRefused(r, 'This redemption code has already been used');
    expect(await quotaOf(who)).toBe(2_000_007);
    expect(await topUpLogs(who)).toHaveLength(1);
    expect(await db.orm.em.fork().count(AuditEntry, { action: 'redemption.redeem' })).toBe(1);
  });

  it('applies the redeem rate limit per user (429)', async () => {
    criticalLimit = { max: 2, windowSeconds: 60 };
    const who = await makeUser();
    expectRefused(await redeem(who, 'a'.repeat(32)), 'Invalid redemption code');
    expectRefused(await redeem(who, 'a'.repeat(32)), 'Invalid redemption code');
    expectRefused(await redeem(who, await makeCode(5)), 'Too many requests, try again later', 429);
    expect(await quotaOf(who)).toBe(0);
  });

  it('sends an anonymous POST to the login page without touching the code', async () => {
    const key = await makeCode(5);
    const res = (await run(action, pageRequest(null, '/topup', { intent: 'redeem', key }))) as Response;
    expect(res.status).toBe(302);
    expect((await db.orm.em.fork().findOneOrFail(Redemption, { key })).status).toBe(RedemptionStatus.Unused);
  });
});
