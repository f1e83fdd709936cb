import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log } from '@switchyard/db/entities/log.ts';
import { Redemption } from '@switchyard/db/entities/redemption.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { createMemoryRateLimiter, type RateLimiter } from '#app/domain/security/rate-limit.server.ts';
import { action as listAction, loader as listLoader } from '#app/routes/api.redemption._index.ts';
import { action as byIdAction, loader as byIdLoader } from '#app/routes/api.redemption.$id.ts';
import { loader as searchLoader } from '#app/routes/api.redemption.search.ts';
import { action as topupAction } from '#app/routes/api.user.topup.ts';
import { action as indexPageAction, loader as indexPageLoader } from '#app/routes/redemption._index.tsx';
import {
  action as deletePageAction,
  loader as deletePageLoader,
} from '#app/routes/redemption.$id.delete.tsx';
import { action as editPageAction, loader as editPageLoader } from '#app/routes/redemption.$id.edit.tsx';
import { action as downloadAction } from '#app/routes/redemption.download.ts';
import { action as newPageAction, loader as newPageLoader } from '#app/routes/redemption.new.tsx';

let db: TestDatabase;
let seq = 0;
let limiter: RateLimiter;
let criticalLimit = { max: 1000, windowSeconds: 60 };

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'redemptions_routes' });
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  limiter = createMemoryRateLimiter();
  criticalLimit = { max: 1000, windowSeconds: 60 };
  await db.orm.em
    .getConnection()
    .execute('truncate table sessions, redemptions, audit_entries, logs, users restart identity cascade');
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
    username: `rr${seq}`,
    displayName: '',
    affCode: `rraff${seq}`,
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

function apiRequest(who: Who | null, path: string, init: { method?: string; body?: unknown } = {}) {
  const headers = new Headers({ 'Accept-Language': 'en' });
  if (who) {
    headers.set('Cookie', `sy_session=${who.token}`);
    headers.set('New-Api-User', String(who.user.id));
  }
  if (init.body !== undefined) headers.set('Content-Type', 'application/json');
  return new Request(`http://localhost${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
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

const call = (
  fn: (args: never) => Promise<unknown> | unknown,
  request: Request,
  params: Record<string, string> = {},
) => fn({ request, context: context(), params } as never) as Promise<Response>;

/** Runs a page loader/action; a thrown Response (redirect, 403) is returned instead. */
async function page(fn: (args: never) => unknown, request: Request, params: Record<string, string> = {}) {
  try {
    return (await fn({ request, context: context(), params } as never)) as unknown;
  } catch (error) {
    if (error instanceof Response) return error;
    // Remix's data() thrown: { type: 'DataWithResponseInit', init: { status } }
    return error;
  }
}

const rowByKey = (key: string) => db.orm.em.fork().findOneOrFail(Redemption, { key });

async function createCodes(admin: Who, body: Record<string, unknown>): Promise<string[]> {
  const res = await json(
    await call(listAction, apiRequest(admin, '/api/redemption/', { method: 'POST', body })),
  );
  expect(res.body.success, res.body.message).toBe(true);
  return res.body.data as string[];
}

/** A flat entity object (new-api's model structs): every value a scalar or null, the named fields present. */
function expectFlat(entity: Record<string, unknown>, fields: readonly string[]) {
  for (const f of fields) expect(entity, f).toHaveProperty(f);
  for (const [k, v] of Object.entries(entity)) expect(v === null || typeof v !== 'object', k).toBe(true);
}

describe('admin JSON routes', () => {
  it('list and search answer data {items, page, page_size, total} of flat redemption objects (seed 001 §4)', async () => {
    const admin = await makeUser({ role: Role.Admin });
    await createCodes(admin, { name: 'shape', quota: 100, count: 1 });
    const fields = ['id', 'name', 'key', 'status', 'quota', 'created_time', 'used_user_id'];
    for (const [fn, path] of [
      [listLoader, '/api/redemption/?p=1&page_size=10'],
      [searchLoader, '/api/redemption/search?keyword=shape&p=1&page_size=10'],
    ] as const) {
      const res = await json(await call(fn, apiRequest(admin, path)));
      expect(Object.keys(res.body.data).sort(), path).toEqual(['items', 'page', 'page_size', 'total']);
      expect(res.body.data.items).toHaveLength(1);
      expectFlat(res.body.data.items[0], fields);
      expect(res.body.data.items[0]).toMatchObject({ name: 'shape', quota: 100, used_user_id: 0 });
    }
  });

  it('401 without auth, 403 for an ordinary user, on every route', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const [key] = await createCodes(admin, { quota: 1000 });
    const id = String((await rowByKey(key!)).id);
    const plain = await makeUser();
    const routes: [typeof listLoader, string, string, unknown?][] = [
      [listLoader, 'GET', '/api/redemption/?p=1'],
      [searchLoader, 'GET', '/api/redemption/search?keyword=a'],
      [byIdLoader, 'GET', `/api/redemption/${id}`],
      [listAction, 'POST', '/api/redemption/', { name: 'x', quota: 1, count: 1 }],
      [listAction, 'PUT', '/api/redemption/', { id: Number(id), name: 'x', quota: 1 }],
      [listAction, 'PUT', '/api/redemption/?status_only=true', { id: Number(id), status: 2 }],
      [byIdAction, 'DELETE', `/api/redemption/${id}/`],
    ];
    for (const [fn, method, path, body] of routes) {
      const anon = await json(await call(fn, apiRequest(null, path, { method, body }), { id }));
      expect(anon.status, path).toBe(401);
      expect(anon.body.success).toBe(false);
      const forbidden = await json(await call(fn, apiRequest(plain, path, { method, body }), { id }));
      expect(forbidden.status, `${method} ${path}`).toBe(403);
      expect(forbidden.body.success).toBe(false);
    }
    const row = await rowByKey(key!);
    expect([row.name, Number(row.quota), row.status, row.deletedAt]).toEqual(['$0.002000', 1000, 1, null]);
    expect(await db.orm.em.fork().count(Redemption, {})).toBe(1);
  });

  it('creates, lists, searches, reads, updates, toggles and deletes with the envelope', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const keys = await createCodes(admin, { name: '', quota: '500000', count: '3' });
    expect(keys).toHaveLength(3);
    let res = await json(
      await call(listAction, apiRequest(admin, '/api/redemption/', { method: 'POST', body: { count: 101 } })),
    );
    expect(res).toEqual({
      status: 200,
      body: {
        success: false,
        message: 'At most 100 codes can be generated at once',
        data: expect.anything(),
      },
    });

    res = await json(await call(listLoader, apiRequest(admin, '/api/redemption/?p=0&page_size=2')));
    expect(res.body).toMatchObject({ success: true, data: { page: 1, total: 3, page_size: 2 } });
    expect(res.body.data.items[0]).toMatchObject({
      name: '$1.00',
      quota: 500000,
      status: 1,
      used_user_id: 0,
    });
    expect(Object.keys(res.body.data.items[0]).sort()).toEqual(
      [
        'created_time',
        'id',
        'key',
        'name',
        'quota',
        'redeemed_time',
        'status',
        'used_user_id',
        'user_id',
      ].sort(),
    );

    const id = (await rowByKey(keys[0]!)).id;
    res = await json(
      await call(searchLoader, apiRequest(admin, `/api/redemption/search?keyword=${keys[0]!.slice(0, 12)}`)),
    );
    expect(res.body.data.items.map((i: { id: number }) => i.id)).toEqual([id]);
    res = await json(await call(byIdLoader, apiRequest(admin, `/api/redemption/${id}`), { id: String(id) }));
    expect(res.body.data.key).toBe(keys[0]);
    res = await json(await call(byIdLoader, apiRequest(admin, '/api/redemption/999'), { id: '999' }));
    expect(res).toMatchObject({
      status: 200,
      body: { success: false, message: 'Redemption code not found' },
    });

    res = await json(
      await call(
        listAction,
        apiRequest(admin, '/api/redemption/', { method: 'PUT', body: { id, name: 'vip', quota: 42 } }),
      ),
    );
    expect(res.body).toMatchObject({ success: true, data: { id, name: 'vip', quota: 42 } });
    res = await json(
      await call(
        listAction,
        apiRequest(admin, '/api/redemption/?status_only=true', { method: 'PUT', body: { id, status: 2 } }),
      ),
    );
    expect(res.body).toMatchObject({ success: true, data: { status: 2, name: 'vip' } });
    res = await json(
      await call(
        listAction,
        apiRequest(admin, '/api/redemption/', { method: 'PUT', body: { id, status_only: true, status: 1 } }),
      ),
    );
    expect(res.body.data.status).toBe(1);

    res = await json(
      await call(byIdAction, apiRequest(admin, `/api/redemption/${id}/`, { method: 'DELETE' }), {
        id: String(id),
      }),
    );
    expect(res.body).toMatchObject({ success: true, data: null });
    res = await json(await call(listLoader, apiRequest(admin, '/api/redemption/')));
    expect(res.body.data.total).toBe(2);
    const actions = (await db.orm.em.fork().find(AuditEntry, {}, { orderBy: { id: 'asc' } })).map(
      (a) => a.action,
    );
    expect(actions).toEqual([
      'redemption.create',
      'redemption.update',
      'redemption.disable',
      'redemption.enable',
      'redemption.delete',
    ]);
  });
});

describe('POST /api/user/topup', () => {
  it('needs a login, asks for a code, credits once and refuses again', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const [key] = await createCodes(admin, { quota: 250000 });
    const user = await makeUser({ quota: 5 });
    const topup = (who: Who | null, body: unknown) =>
      call(topupAction, apiRequest(who, '/api/user/topup', { method: 'POST', body })).then(json);

    expect((await topup(null, { key })).status).toBe(401);
    expect(await topup(user, { key: '' })).toEqual({
      status: 200,
      body: { success: false, message: 'Please enter the redemption code!', data: expect.anything() },
    });
    expect((await topup(user, { key: 'b'.repeat(32) })).body).toMatchObject({
      success: false,
      message: 'Invalid redemption code',
    });
    expect(await topup(user, { key })).toEqual({
      status: 200,
      body: { success: true, message: 'Redeemed successfully!', data: 250000 },
    });
    expect((await topup(user, { key })).body).toMatchObject({
      success: false,
      message: 'This redemption code has already been used',
    });
    const fresh = await db.orm.em.fork().findOneOrFail(User, { id: user.user.id });
    expect(Number(fresh.quota)).toBe(250005);
    expect(await db.orm.em.fork().count(Log, { userId: user.user.id, type: 1 })).toBe(1);
    const get = await call(topupAction, apiRequest(user, '/api/user/topup', { method: 'PUT', body: {} }));
    expect(get.status).toBe(405);
  });

  it('limits redeem attempts per user (429 with Retry-After)', async () => {
    criticalLimit = { max: 3, windowSeconds: 60 };
    const user = await makeUser();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await call(
        topupAction,
        apiRequest(user, '/api/user/topup', { method: 'POST', body: { key: 'c'.repeat(32) } }),
      );
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get('Retry-After'))).toBeGreaterThan(0);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    // another user from the same address shares the per-IP bucket of 'redeem' only, not the login buckets
    const other = await makeUser();
    const res = await call(
      topupAction,
      apiRequest(other, '/api/user/topup', { method: 'POST', body: { key: 'c'.repeat(32) } }),
    );
    expect(res.status).toBe(429);
  });
});

describe('pages', () => {
  it('answers 403 to an ordinary user on every page and refuses its actions', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const [key] = await createCodes(admin, { quota: 1000 });
    const id = String((await rowByKey(key!)).id);
    const plain = await makeUser();
    const calls: [(args: never) => unknown, string, Record<string, string>?][] = [
      [indexPageLoader, '/redemption'],
      [indexPageAction, '/redemption?index', { intent: 'status', id, status: '2' }],
      [indexPageAction, '/redemption?index', { intent: 'delete', id }],
      [newPageLoader, '/redemption/new'],
      [newPageAction, '/redemption/new', { quota: '5', count: '1' }],
      [editPageLoader, `/redemption/${id}/edit`],
      [editPageAction, `/redemption/${id}/edit`, { name: 'x', quota: '1' }],
      [deletePageLoader, `/redemption/${id}/delete`],
      [deletePageAction, `/redemption/${id}/delete`, {}],
      [downloadAction, '/redemption/download', { keys: key! }],
    ];
    for (const [fn, path, form] of calls) {
      const out = (await page(fn, pageRequest(plain, path, form), { id })) as { init?: { status?: number } };
      expect(out?.init?.status, path).toBe(403);
      const anon = (await page(fn, pageRequest(null, path, form), { id })) as Response;
      expect(anon.status, path).toBe(302);
      expect(anon.headers.get('Location'), path).toMatch(/^\/login/);
    }
    const row = await rowByKey(key!);
    expect([row.status, row.deletedAt, row.name]).toEqual([1, null, '$0.002000']);
    expect(await db.orm.em.fork().count(Redemption, {})).toBe(1);
  });

  it('creates codes and shows them once, downloads them as an attachment, toggles, edits and deletes', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const created = (await page(
      newPageAction,
      pageRequest(admin, '/redemption/new', {
        intent: 'create',
        name: 'promo',
        quota: '5000000',
        count: '2',
      }),
    )) as { data: { ok: boolean; keys: string[] }; init: { headers: Headers } };
    expect(created.data.ok).toBe(true);
    expect(created.data.keys).toHaveLength(2);
    const headers = new Headers(created.init.headers);
    expect(headers.get('Cache-Control')).toBe('no-store');
    // the toast cookie never carries a key
    for (const k of created.data.keys) expect(headers.get('Set-Cookie') ?? '').not.toContain(k);

    const file = (await page(
      downloadAction,
      pageRequest(admin, '/redemption/download', { keys: [...created.data.keys, 'not-a-key'].join('\n') }),
    )) as Response;
    expect(file.headers.get('Content-Disposition')).toBe('attachment; filename="redemption-codes.txt"');
    expect(file.headers.get('Content-Type')).toBe('text/plain; charset=utf-8');
    expect(await file.text()).toBe(`${created.data.keys.join('\n')}\n`);
    const none = (await page(
      downloadAction,
      pageRequest(admin, '/redemption/download', { keys: 'x' }),
    )) as Response;
    expect(none.status).toBe(302);

    const listed = (await page(indexPageLoader, pageRequest(admin, '/redemption?keyword=promo'))) as {
      data: { result: { total: number; items: { id: number; status: number }[] } };
    };
    expect(listed.data.result.total).toBe(2);
    const id = String(listed.data.result.items[0]!.id);

    let res = (await page(
      indexPageAction,
      pageRequest(admin, '/redemption?index', {
        intent: 'status',
        id,
        status: '2',
        redirectTo: '/redemption?keyword=promo',
      }),
    )) as Response;
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/redemption?keyword=promo');
    expect((await db.orm.em.fork().findOneOrFail(Redemption, { id: Number(id) })).status).toBe(2);

    const disabledEdit = (await page(
      editPageAction,
      pageRequest(admin, `/redemption/${id}/edit`, { name: 'n', quota: '1' }),
      {
        id,
      },
    )) as { data: { error: string } };
    expect(disabledEdit.data.error).toBe('Only unused codes can be edited');
    await page(
      indexPageAction,
      pageRequest(admin, '/redemption?index', { intent: 'status', id, status: '1' }),
    );
    res = (await page(
      editPageAction,
      pageRequest(admin, `/redemption/${id}/edit`, {
        name: 'renamed',
        quota: '123',
        redirectTo: '/redemption',
      }),
      { id },
    )) as Response;
    expect(res.status).toBe(302);
    const edited = await db.orm.em.fork().findOneOrFail(Redemption, { id: Number(id) });
    expect([edited.name, Number(edited.quota)]).toEqual(['renamed', 123]);

    // the edit drawer (a fetcher) gets data and a flash toast instead of a redirect
    const viaFetcher = (await page(
      editPageAction,
      pageRequest(admin, `/redemption/${id}/edit`, { name: 'renamed', quota: '124', _fetcher: '1' }),
      { id },
    )) as { data: { ok: boolean }; init: { headers: Record<string, string> } };
    expect(viaFetcher.data.ok).toBe(true);
    expect(new Headers(viaFetcher.init.headers).get('Set-Cookie')).toContain('sy_toast=');
    expect(Number((await db.orm.em.fork().findOneOrFail(Redemption, { id: Number(id) })).quota)).toBe(124);

    const confirm = (await page(deletePageLoader, pageRequest(admin, `/redemption/${id}/delete`), {
      id,
    })) as {
      redemption: { name: string };
    };
    expect(confirm.redemption.name).toBe('renamed');
    res = (await page(deletePageAction, pageRequest(admin, `/redemption/${id}/delete`, {}), {
      id,
    })) as Response;
    expect(res.status).toBe(302);
    expect((await db.orm.em.fork().findOneOrFail(Redemption, { id: Number(id) })).deletedAt).not.toBeNull();
  });
});
