import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { createMemoryRateLimiter } from '#app/domain/security/rate-limit.server.ts';
import { action as indexAction, loader as indexLoader } from '#app/routes/api.log._index.ts';
import { loader as selfLoader } from '#app/routes/api.log.self._index.ts';
import { loader as selfStatLoader } from '#app/routes/api.log.self.stat.ts';
import { loader as statLoader } from '#app/routes/api.log.stat.ts';
import { loader as pageLoader } from '#app/routes/log._index.tsx';
import { action as clearAction, loader as clearLoader } from '#app/routes/log.clear.tsx';
import { loader as userInfoLoader } from '#app/routes/log.user.$id.tsx';

let db: TestDatabase;
let seq = 0;
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'logs_routes' });
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em
    .getConnection()
    .execute('truncate table sessions, audit_entries, logs, users restart identity cascade');
});

const options = {
  get: (key: string) => ({ DisplayInCurrencyEnabled: true, QuotaPerUnit: 500000 })[key as 'QuotaPerUnit'],
};

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
    username: `lr${seq}`,
    displayName: '',
    affCode: `lraff${seq}`,
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

async function seedLog(user: User, over: Record<string, unknown> = {}) {
  const em = db.orm.em.fork();
  em.create(Log, {
    userId: user.id,
    username: user.username,
    type: LogType.Consume,
    createdAt: now() - 10,
    tokenName: 'main',
    modelName: 'gpt-4o',
    quota: 1500,
    promptTokens: 100,
    completionTokens: 20,
    channelId: 7,
    other: JSON.stringify({ model_ratio: 2.5, admin_info: { use_channel: ['7'] } }),
    ...over,
  } as never);
  await em.flush();
}

function apiRequest(who: Who | null, path: string, method = 'GET') {
  const headers = new Headers({ 'Accept-Language': 'en' });
  if (who) {
    headers.set('Cookie', `sy_session=${who.token}`);
    headers.set('New-Api-User', String(who.user.id));
  }
  return new Request(`http://localhost${path}`, { method, headers });
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

// biome-ignore lint/suspicious/noExplicitAny: envelope payloads are checked field by field below
type Body = { success: boolean; message: string; data: any };
async function json(res: Response) {
  return { status: res.status, body: (await res.json()) as Body };
}
const call = (fn: (args: never) => unknown, request: Request, params: Record<string, string> = {}) =>
  fn({ request, context: context(), params } as never) as Promise<Response>;

/** Runs a page loader/action; a thrown Response or data() (redirect, 403) is returned instead. */
async function page(fn: (args: never) => unknown, request: Request, params: Record<string, string> = {}) {
  try {
    return (await fn({ request, context: context(), params } as never)) as unknown;
  } catch (error) {
    return error;
  }
}
// biome-ignore lint/suspicious/noExplicitAny: Remix data() results are inspected loosely
const payload = (r: any) => (r?.type === 'DataWithResponseInit' ? r.data : r);
// biome-ignore lint/suspicious/noExplicitAny: Remix data() results are inspected loosely
const statusOf = (r: any) => (r instanceof Response ? r.status : (r?.init?.status ?? 200));

/** A flat entity object (new-api's model structs): every value a scalar or null, the named fields present. */
function expectFlat(entity: Record<string, unknown>, fields: readonly string[]) {
  for (const f of fields) expect(entity, f).toHaveProperty(f);
  for (const [k, v] of Object.entries(entity)) expect(v === null || typeof v !== 'object', k).toBe(true);
}

describe('JSON routes', () => {
  it('401 without auth and 403 for a user on every admin call; the self calls answer a user', async () => {
    const plain = await makeUser();
    const admin: [typeof indexLoader, string, string][] = [
      [indexLoader, 'GET', '/api/log/?p=1'],
      [statLoader, 'GET', '/api/log/stat'],
      [indexAction, 'DELETE', `/api/log/?target_timestamp=${now()}`],
    ];
    for (const [fn, method, path] of admin) {
      const anon = await json(await call(fn, apiRequest(null, path, method)));
      expect(anon.status, path).toBe(401);
      const forbidden = await json(await call(fn, apiRequest(plain, path, method)));
      expect(forbidden.status, `${method} ${path}`).toBe(403);
      expect(forbidden.body.success).toBe(false);
    }
    for (const fn of [selfLoader, selfStatLoader]) {
      expect((await call(fn, apiRequest(null, '/api/log/self/'))).status).toBe(401);
      const ok = await json(await call(fn, apiRequest(plain, '/api/log/self/')));
      expect(ok.status).toBe(200);
      expect(ok.body.success).toBe(true);
    }
  });

  it('admin and self lists answer data.items, page, page_size, total of flat log objects (seed 001 §3, §4)', async () => {
    const admin = await makeUser({ role: Role.Admin });
    await seedLog(admin.user, { quota: 42 });
    const fields = [
      'id',
      'created_at',
      'type',
      'channel',
      'channel_name',
      'user_id',
      'username',
      'token_name',
      'group',
      'model_name',
      'use_time',
      'is_stream',
      'prompt_tokens',
      'completion_tokens',
      'quota',
      'content',
      'other',
    ];
    for (const [fn, path] of [
      [indexLoader, '/api/log/?p=1&page_size=10'],
      [selfLoader, '/api/log/self/?p=1&page_size=10'],
    ] as const) {
      const res = await json(await call(fn, apiRequest(admin, path)));
      expect(res.body.data, path).toMatchObject({ page: 1, page_size: 10, total: 1 });
      expect(res.body.data.items).toHaveLength(1);
      expectFlat(res.body.data.items[0], fields);
      expect(typeof res.body.data.items[0].other).toBe('string');
    }
  });

  it('/api/log/self/ and its stat answer only the caller rows, whatever the query says', async () => {
    const alice = await makeUser();
    const bob = await makeUser();
    await seedLog(alice.user, { quota: 100 });
    await seedLog(bob.user, { quota: 9000 });
    const list = await json(
      await call(
        selfLoader,
        apiRequest(alice, `/api/log/self/?username=${bob.user.username}&channel=7&p=1&page_size=10`),
      ),
    );
    expect(list.body).toMatchObject({
      success: true,
      message: '',
      data: { page: 1, page_size: 10, total: 1 },
    });
    expect(list.body.data.items).toHaveLength(1);
    expect(list.body.data.items[0]).toMatchObject({ user_id: alice.user.id, quota: 100, channel: 0 });
    expect(JSON.parse(list.body.data.items[0].other)).toEqual({ model_ratio: 2.5 });
    const stat = await json(
      await call(selfStatLoader, apiRequest(alice, `/api/log/self/stat?username=${bob.user.username}`)),
    );
    expect(stat.body.data).toEqual({ quota: 100, rpm: 1, tpm: 120 });
  });

  it('the admin lists, filters, reads stats and clears before a time; bad input is an envelope refusal', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser();
    await seedLog(alice.user, { createdAt: now() - 5000 });
    await seedLog(alice.user, { type: LogType.TopUp, quota: 500000, other: '' });
    await seedLog(admin.user, { channelId: 3 });
    const all = await json(await call(indexLoader, apiRequest(admin, '/api/log/?type=2')));
    expect(all.body.data.total).toBe(2);
    const mine = await json(
      await call(indexLoader, apiRequest(admin, `/api/log/?username=${alice.user.username}&channel=7`)),
    );
    expect(mine.body.data.items.map((i: { type: number }) => i.type)).toEqual([1, 2]);
    const stat = await json(await call(statLoader, apiRequest(admin, '/api/log/stat?channel=3')));
    expect(stat.body.data).toEqual({ quota: 1500, rpm: 1, tpm: 120 });

    const bad = await json(await call(indexLoader, apiRequest(admin, '/api/log/?type=x')));
    expect(bad).toMatchObject({ status: 200, body: { success: false } });
    const missing = await json(await call(indexAction, apiRequest(admin, '/api/log/', 'DELETE')));
    expect(missing).toMatchObject({ status: 200, body: { success: false } });
    expect((await call(indexAction, apiRequest(admin, '/api/log/', 'POST'))).status).toBe(405);

    const cleared = await json(
      await call(indexAction, apiRequest(admin, `/api/log/?target_timestamp=${now() - 1000}`, 'DELETE')),
    );
    expect(cleared.body).toEqual({ success: true, message: '', data: 1 });
    expect(await db.orm.em.fork().count(Log, {})).toBe(2);
    expect(await db.orm.em.fork().count(AuditEntry, { action: 'log.clear', actorId: admin.user.id })).toBe(1);
  });
});

describe('pages', () => {
  it('/log shows a user their own rows in the default window, an admin everyone with admin columns', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser();
    await seedLog(alice.user);
    await seedLog(alice.user, { createdAt: now() - 3 * 86400 }); // before today: outside the default window
    await seedLog(admin.user);
    const anon = await page(pageLoader, pageRequest(null, '/log'));
    expect(statusOf(anon)).toBe(302);
    const mine = payload(await page(pageLoader, pageRequest(alice, '/log')));
    expect(mine.admin).toBe(false);
    expect(mine.result.items.map((i: { user_id: number }) => i.user_id)).toEqual([alice.user.id]);
    expect(mine.stat.quota).toBe(1500);
    // an explicit empty start widens the window; a user's username filter is ignored
    const wide = payload(
      await page(pageLoader, pageRequest(alice, `/log?start=&end=&username=${admin.user.username}`)),
    );
    expect(wide.result.items).toHaveLength(2);
    const all = payload(await page(pageLoader, pageRequest(admin, '/log?start=&end=')));
    expect(all.admin).toBe(true);
    expect(all.result.items).toHaveLength(3);
    const filtered = payload(
      await page(pageLoader, pageRequest(admin, `/log?username=${alice.user.username}&start=&type=2`)),
    );
    expect(filtered.result.items).toHaveLength(2);
  });

  it('user info and the cleanup confirm are admin pages; the cleanup deletes after the POST', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser({ quota: 42, requestCount: 3 });
    await seedLog(alice.user, { createdAt: Date.UTC(2026, 0, 1) / 1000 });
    await seedLog(alice.user);
    expect(
      statusOf(
        await page(userInfoLoader, pageRequest(alice, `/log/user/${alice.user.id}`), {
          id: String(alice.user.id),
        }),
      ),
    ).toBe(403);
    expect(statusOf(await page(clearLoader, pageRequest(alice, '/log/clear?before=2026-06-01T00:00')))).toBe(
      403,
    );
    expect(
      statusOf(await page(clearAction, pageRequest(alice, '/log/clear', { before: '2026-06-01T00:00' }))),
    ).toBe(403);
    const info = payload(
      await page(userInfoLoader, pageRequest(admin, `/log/user/${alice.user.id}`), {
        id: String(alice.user.id),
      }),
    );
    expect(info.info).toMatchObject({ username: alice.user.username, quota: 42, request_count: 3 });
    expect(statusOf(await page(userInfoLoader, pageRequest(admin, '/log/user/99999'), { id: '99999' }))).toBe(
      404,
    );

    const confirm = payload(
      await page(clearLoader, pageRequest(admin, '/log/clear?before=2026-06-01T00:00&redirectTo=/log?p=2')),
    );
    expect(confirm).toMatchObject({
      count: 1,
      capped: false,
      time: '2026-06-01 00:00:00',
      redirectTo: '/log?p=2',
      error: '',
    });
    expect(payload(await page(clearLoader, pageRequest(admin, '/log/clear?before='))).error).not.toBe('');
    const done = (await page(
      clearAction,
      pageRequest(admin, '/log/clear', { before: '2026-06-01T00:00', redirectTo: '/log' }),
    )) as Response;
    expect(done.status).toBe(302);
    expect(done.headers.get('Location')).toBe('/log');
    expect(await db.orm.em.fork().count(Log, {})).toBe(1);
  });
});
