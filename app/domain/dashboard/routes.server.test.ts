import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { checkedTimeZone } from '#app/domain/dashboard/dashboard.server.ts';
import { createMemoryRateLimiter } from '#app/domain/security/rate-limit.server.ts';
import { loader as allLoader } from '#app/routes/api.data._index.ts';
import { loader as selfLoader } from '#app/routes/api.data.self._index.ts';
import { loader as pageLoader } from '#app/routes/detail.tsx';

let db: TestDatabase;
let seq = 0;
/** Whole hours (unix seconds). */
const H = 1_763_895_600;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'dash_routes' });
});
afterAll(async () => {
  await db?.drop();
});

const values: Record<string, unknown> = {};
beforeEach(async () => {
  await db.orm.em
    .getConnection()
    .execute('truncate table sessions, quota_data, users restart identity cascade');
  Object.assign(values, {
    DataExportEnabled: true,
    DataExportDefaultTime: 'hour',
    DisplayInCurrencyEnabled: true,
    QuotaPerUnit: 500000,
  });
});
const options = { get: (key: string) => values[key] };

function context() {
  return {
    services: {
      orm: db.orm,
      options,
      relay: null,
      version: 'test',
      startedAt: 0,
      limiter: createMemoryRateLimiter(),
      auth: { trustProxy: false, turnstileVerifyUrl: '', criticalLimit: { max: 1000, windowSeconds: 60 } },
    },
  } as never;
}

type Who = { user: User; token: string };

async function makeUser(over: Record<string, unknown> = {}): Promise<Who> {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, {
    username: `dr${seq}`,
    displayName: '',
    affCode: `draff${seq}`,
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

async function seedRow(
  who: Who,
  model: string,
  hour: number,
  over: { count?: number; quota?: number; tokens?: number } = {},
) {
  await db.orm.em
    .getConnection()
    .execute(
      'insert into quota_data (user_id, username, model_name, created_at, count, quota, token_used) values (?, ?, ?, ?, ?, ?, ?)',
      [who.user.id, who.user.username, model, hour, over.count ?? 1, over.quota ?? 100, over.tokens ?? 10],
    );
}

function request(who: Who | null, path: string, cookie = '') {
  const headers = new Headers({ 'Accept-Language': 'en' });
  const cookies = [who ? `sy_session=${who.token}` : '', cookie].filter(Boolean).join('; ');
  if (cookies) headers.set('Cookie', cookies);
  if (who) headers.set('New-Api-User', String(who.user.id));
  return new Request(`http://localhost${path}`, { headers });
}

// biome-ignore lint/suspicious/noExplicitAny: envelope payloads are checked field by field below
type Body = { success: boolean; message: string; data: any };
async function api(fn: (args: never) => unknown, req: Request) {
  const res = (await fn({ request: req, context: context(), params: {} } as never)) as Response;
  return { status: res.status, body: (await res.json()) as Body };
}

// biome-ignore lint/suspicious/noExplicitAny: Remix data() results are inspected loosely
async function page(req: Request): Promise<{ status: number; data: any }> {
  try {
    // biome-ignore lint/suspicious/noExplicitAny: as above
    const r: any = await pageLoader({ request: req, context: context(), params: {} } as never);
    return { status: r?.init?.status ?? 200, data: r?.data };
  } catch (error) {
    // biome-ignore lint/suspicious/noExplicitAny: a thrown redirect or data()
    const e: any = error;
    return { status: e instanceof Response ? e.status : (e?.init?.status ?? 500), data: e?.data };
  }
}

const FIELDS = ['id', 'user_id', 'username', 'model_name', 'created_at', 'token_used', 'count', 'quota'];
const range = `start_timestamp=${H - 3600}&end_timestamp=${H + 7200}`;

describe('GET /api/data/ and /api/data/self/', () => {
  it('401 without a session; /api/data/ is for admins only (403)', async () => {
    const plain = await makeUser();
    expect((await api(allLoader, request(null, `/api/data/?${range}`))).status).toBe(401);
    expect((await api(selfLoader, request(null, `/api/data/self/?${range}`))).status).toBe(401);
    const forbidden = await api(allLoader, request(plain, `/api/data/?${range}`));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.success).toBe(false);
  });

  it('admin: every user summed per model and hour, or one username with new-api fields', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser();
    const bob = await makeUser();
    await seedRow(alice, 'gpt-4o', H, { count: 2, quota: 300, tokens: 40 });
    await seedRow(bob, 'gpt-4o', H, { count: 1, quota: 50, tokens: 5 });
    await seedRow(bob, 'claude', H + 3600, { count: 4, quota: 8, tokens: 9 });
    await seedRow(bob, 'claude', H + 86_400); // outside the range

    const all = await api(allLoader, request(admin, `/api/data/?${range}&username=&default_time=hour`));
    expect(all.body).toMatchObject({ success: true, message: '' });
    expect(all.body.data).toEqual([
      {
        id: 0,
        user_id: 0,
        username: '',
        model_name: 'gpt-4o',
        created_at: H,
        token_used: 45,
        count: 3,
        quota: 350,
      },
      {
        id: 0,
        user_id: 0,
        username: '',
        model_name: 'claude',
        created_at: H + 3600,
        token_used: 9,
        count: 4,
        quota: 8,
      },
    ]);

    const one = await api(allLoader, request(admin, `/api/data/?${range}&username=${bob.user.username}`));
    expect(one.body.data).toHaveLength(2);
    for (const row of one.body.data) {
      expect(Object.keys(row).sort()).toEqual([...FIELDS].sort());
      expect(row).toMatchObject({ user_id: bob.user.id, username: bob.user.username });
      expect(row.id).toBeGreaterThan(0);
    }
  });

  it('self: only the caller rows, whatever the query says; more than a month is refused', async () => {
    const alice = await makeUser();
    const bob = await makeUser();
    await seedRow(alice, 'gpt-4o', H, { quota: 111 });
    await seedRow(bob, 'gpt-4o', H, { quota: 999 });
    const mine = await api(
      selfLoader,
      request(alice, `/api/data/self/?${range}&username=${bob.user.username}&user_id=${bob.user.id}`),
    );
    expect(mine.body.success).toBe(true);
    expect(mine.body.data).toEqual([
      expect.objectContaining({
        user_id: alice.user.id,
        username: alice.user.username,
        quota: 111,
        created_at: H,
      }),
    ]);
    const long = await api(
      selfLoader,
      request(alice, `/api/data/self/?start_timestamp=0&end_timestamp=${2_592_001}`),
    );
    expect(long).toMatchObject({
      status: 200,
      body: { success: false, message: 'The time span cannot exceed one month' },
    });
  });

  it('bad timestamps answer success false with a clear message, never a 5xx', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const bad = [
      ['', `end_timestamp=${H}`, 'start_timestamp is not a valid timestamp'],
      ['abc', `end_timestamp=${H}`, 'start_timestamp is not a valid timestamp'],
      ['1.5', `end_timestamp=${H}`, 'start_timestamp is not a valid timestamp'],
      [String(H), 'end_timestamp=9'.repeat(30), 'end_timestamp is not a valid timestamp'],
      [String(H), 'end_timestamp=%00', 'end_timestamp is not a valid timestamp'],
    ];
    for (const [start, end, message] of bad) {
      for (const [fn, path] of [
        [allLoader, '/api/data/'],
        [selfLoader, '/api/data/self/'],
      ] as const) {
        const res = await api(fn, request(admin, `${path}?start_timestamp=${start}&${end}`));
        expect(res.status, `${path} ${start} ${end}`).toBeLessThan(500);
        expect(res.body.success).toBe(false);
        if (!end?.includes('%00')) expect(res.body.message).toBe(message);
      }
    }
  });
});

describe('/detail loader', () => {
  it('the page defaults to DataExportDefaultTime, the last 7 days, in the time-zone cookie zone', async () => {
    const alice = await makeUser();
    values.DataExportDefaultTime = 'day';
    const now = Math.floor(Date.now() / 1000);
    await seedRow(alice, 'gpt-4o', now - (now % 3600), { quota: 250_000, count: 3, tokens: 30 });
    const r = await page(request(alice, '/detail', 'tz=Asia%2FShanghai'));
    expect(r.status).toBe(200);
    expect(r.data.filters.granularity).toBe('day');
    expect(r.data.tz).toBe('Asia/Shanghai');
    expect(r.data.series.buckets).toHaveLength(7);
    // day buckets start at midnight in Shanghai (16:00 UTC)
    expect(r.data.series.buckets[0].start % 86_400).toBe(16 * 3600);
    expect(r.data.series.totals).toEqual({ quota: 250_000, count: 3, tokens: 30 });
    expect(r.data.series.quotaText).toBe('$0.50');
    expect(r.data.series.models.map((m: { name: string }) => m.name)).toEqual(['gpt-4o']);
    // without the cookie: UTC, the chosen granularity wins
    const utc = await page(request(alice, '/detail?granularity=week'));
    expect(utc.data.tz).toBe('UTC');
    expect(utc.data.filters.granularity).toBe('week');
  });

  it('a zone PostgreSQL does not know (an older tz database) falls back to UTC; known ones are kept', async () => {
    const em = db.orm.em.fork();
    expect(await checkedTimeZone({ em }, 'Asia/Shanghai')).toBe('Asia/Shanghai');
    expect(await checkedTimeZone({ em }, 'UTC')).toBe('UTC');
    const unknown = { getConnection: () => ({ execute: async () => [] }) } as never;
    expect(await checkedTimeZone({ em: unknown }, 'America/Ciudad_Juarez')).toBe('UTC');
  });

  it('admins see every user or one username; a user only their own rows', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser();
    const bob = await makeUser();
    await seedRow(alice, 'gpt-4o', H, { quota: 10 });
    await seedRow(bob, 'claude', H, { quota: 20 });
    const q = '/detail?start=2025-11-23T00:00&end=2025-11-24T23:59&granularity=hour';
    const all = await page(request(admin, q));
    expect(all.data.series.totals.quota).toBe(30);
    const onlyBob = await page(request(admin, `${q}&username=${bob.user.username}`));
    expect(onlyBob.data.series.models.map((m: { name: string }) => m.name)).toEqual(['claude']);
    const own = await page(request(alice, `${q}&username=${bob.user.username}`));
    expect(own.data.admin).toBe(false);
    expect(own.data.series.totals.quota).toBe(10);
    expect(own.data.series.models.map((m: { name: string }) => m.name)).toEqual(['gpt-4o']);
  });

  it('bad ranges render the page with a message (400), not an error page', async () => {
    const alice = await makeUser();
    const cases = [
      ['/detail?start=yesterday', 'The time is not valid'],
      ['/detail?start=2025-02-30T00:00', 'The time is not valid'],
      ['/detail?start=2025-11-24T00:00&end=2025-11-23T00:00', 'The end time cannot be before the start time'],
      [
        '/detail?start=2025-01-01T00:00&end=2025-11-23T00:00&granularity=day',
        'The time span cannot exceed one month',
      ],
    ];
    for (const [path, message] of cases) {
      const r = await page(request(alice, path as string));
      expect(r.status, path).toBe(400);
      expect(r.data.error).toBe(message);
      expect(r.data.filters).toBeTruthy();
    }
    const admin = await makeUser({ role: Role.Admin });
    const many = await page(
      request(admin, '/detail?start=2024-01-01T00:00&end=2025-11-23T00:00&granularity=hour'),
    );
    expect(many.status).toBe(400);
    expect(many.data.error).toMatch(/Too many time buckets/);
  });

  it('the page shows a notice when DataExportEnabled is off, and asks a visitor to log in', async () => {
    const alice = await makeUser();
    values.DataExportEnabled = false;
    const r = await page(request(alice, '/detail'));
    expect(r.data).toMatchObject({ enabled: false });
    expect(r.data.series).toBeUndefined();
    const visitor = await page(request(null, '/detail'));
    expect(visitor.status).toBe(302);
  });
});
