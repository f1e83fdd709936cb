import { Session } from '@switchyard/db/entities/session.ts';
import { Token } from '@switchyard/db/entities/token.ts';
import { User } from '@switchyard/db/entities/user.ts';
import { PLAINTEXT_BOX } from '@switchyard/db/security/secrets.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { loader as listLoader, action as tokenAction } from '#app/routes/api.token._index.ts';
import { action as byIdAction, loader as byIdLoader } from '#app/routes/api.token.$id.ts';
import { loader as searchLoader } from '#app/routes/api.token.search.ts';
import { action as pageAction } from '#app/routes/token._index.tsx';
import { action as newAction } from '#app/routes/token.new.tsx';

let db: TestDatabase;
let seq = 0;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'tokens_routes' });
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em
    .getConnection()
    .execute('truncate table tokens, sessions, audit_entries, users restart identity cascade');
});

const values: Record<string, unknown> = {
  UserUsableGroups: { default: 'Default', vip: 'VIP' },
  DisplayInCurrencyEnabled: true,
  QuotaPerUnit: 500000,
  apiAddressList: [],
};
const options = { get: (key: string) => values[key] };

function context() {
  return {
    services: { orm: db.orm, options, relay: null, version: 'test', startedAt: 0, secrets: PLAINTEXT_BOX },
  } as never;
}

type Who = { user: User; token: string };

async function makeUser(): Promise<Who> {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, { username: `rt${seq}`, affCode: `rtaff${seq}` } as never);
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

// biome-ignore lint/suspicious/noExplicitAny: envelope payloads are checked field by field below
type Body = { success: boolean; message: string; data: any };
async function json(res: Response) {
  return { status: res.status, body: (await res.json()) as Body };
}
const call = (
  fn: (args: never) => Promise<Response> | Response,
  request: Request,
  params: Record<string, string> = {},
) => fn({ request, context: context(), params } as never);

/** A flat entity object (new-api's model structs): every value a scalar or null, the named fields present. */
function expectFlat(entity: Record<string, unknown>, fields: readonly string[]) {
  for (const f of fields) expect(entity, f).toHaveProperty(f);
  for (const [k, v] of Object.entries(entity)) expect(v === null || typeof v !== 'object', k).toBe(true);
}

describe('token JSON routes', () => {
  it('list and search answer data {items, page, page_size, total} of flat token objects (seed 001 §3 Token)', async () => {
    const a = await makeUser();
    await call(
      tokenAction,
      apiRequest(a, '/api/token/', { method: 'POST', body: { name: 'shape', model_limits: 'm1,m2' } }),
    );
    const fields = [
      'id',
      'name',
      'key',
      'status',
      'remain_quota',
      'used_quota',
      'unlimited_quota',
      'expired_time',
      'created_time',
      'model_limits_enabled',
      'model_limits',
      'allow_ips',
      'group',
    ];
    for (const [fn, path] of [
      [listLoader, '/api/token/?p=0&size=100'],
      [searchLoader, '/api/token/search?keyword=shape'],
    ] as const) {
      const res = await json(await call(fn, apiRequest(a, path)));
      expect(Object.keys(res.body.data).sort(), path).toEqual(['items', 'page', 'page_size', 'total']);
      expect(res.body.data.items).toHaveLength(1);
      expectFlat(res.body.data.items[0], fields);
      expect(res.body.data.items[0]).toMatchObject({
        name: 'shape',
        model_limits: 'm1,m2',
        expired_time: -1,
      });
      expect(res.body.data.items[0].key).not.toMatch(/^sk-/);
    }
  });

  it('answers 401 without auth on every route', async () => {
    const routes: [typeof listLoader, string, string, unknown?][] = [
      [listLoader, 'GET', '/api/token/?p=0&size=100'],
      [searchLoader, 'GET', '/api/token/search?keyword=a'],
      [byIdLoader, 'GET', '/api/token/1'],
      [byIdAction, 'DELETE', '/api/token/1/'],
      [tokenAction, 'POST', '/api/token/', { name: 'x' }],
      [tokenAction, 'PUT', '/api/token/', { id: 1, name: 'x' }],
      [tokenAction, 'PUT', '/api/token/?status_only=true', { id: 1, status: 2 }],
    ];
    for (const [fn, method, path, body] of routes) {
      const res = await json(await call(fn, apiRequest(null, path, { method, body }), { id: '1' }));
      expect(res.status, path).toBe(401);
      expect(res.body.success).toBe(false);
    }
  });

  it('creates, lists, searches, reads, updates, toggles and deletes with the envelope', async () => {
    const a = await makeUser();
    let res = await json(
      await call(
        tokenAction,
        apiRequest(a, '/api/token/', { method: 'POST', body: { name: 'api', count: 2 } }),
      ),
    );
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toHaveLength(2);
    const id = res.body.data[0].id as number;
    const key = res.body.data[0].key as string;

    res = await json(await call(listLoader, apiRequest(a, '/api/token/?p=0&size=100')));
    expect(res.body).toMatchObject({ success: true, message: '', data: { page: 1, total: 2 } });

    res = await json(
      await call(searchLoader, apiRequest(a, `/api/token/search?token=sk-${key.slice(0, 12)}`)),
    );
    expect(res.body.data.items.map((x: { id: number }) => x.id)).toEqual([id]);

    res = await json(await call(byIdLoader, apiRequest(a, `/api/token/${id}`), { id: String(id) }));
    expect(res.body.data).toMatchObject({ id, name: 'api', key });

    res = await json(
      await call(tokenAction, apiRequest(a, '/api/token/', { method: 'PUT', body: { id, name: 'renamed' } })),
    );
    expect(res.body).toMatchObject({ success: true, data: { name: 'renamed' } });

    res = await json(
      await call(
        tokenAction,
        apiRequest(a, '/api/token/?status_only=true', { method: 'PUT', body: { id, status: 2 } }),
      ),
    );
    expect(res.body).toMatchObject({ success: true, data: { status: 2 } });

    // refusals are HTTP 200 with success false
    res = await json(
      await call(
        tokenAction,
        apiRequest(a, '/api/token/', { method: 'POST', body: { name: 'x', group: 'nope' } }),
      ),
    );
    expect(res).toMatchObject({
      status: 200,
      body: { success: false, message: 'Group nope is not available' },
    });

    res = await json(
      await call(byIdAction, apiRequest(a, `/api/token/${id}/`, { method: 'DELETE' }), { id: String(id) }),
    );
    expect(res.body).toEqual({ success: true, message: '', data: null });
    expect((await db.orm.em.fork().findOneOrFail(Token, { id })).deletedAt).not.toBeNull();
  });

  it("never reaches another user's token by id", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const created = await json(
      await call(tokenAction, apiRequest(a, '/api/token/', { method: 'POST', body: { name: 'secret' } })),
    );
    const id = created.body.data[0].id as number;
    const attempts: [typeof listLoader, string, string, unknown?][] = [
      [byIdLoader, 'GET', `/api/token/${id}`],
      [byIdAction, 'DELETE', `/api/token/${id}/`],
      [tokenAction, 'PUT', '/api/token/', { id, name: 'mine now' }],
      [tokenAction, 'PUT', '/api/token/?status_only=true', { id, status: 2 }],
    ];
    for (const [fn, method, path, body] of attempts) {
      const res = await json(await call(fn, apiRequest(b, path, { method, body }), { id: String(id) }));
      expect(res, path).toMatchObject({ status: 200, body: { success: false, message: 'Token not found' } });
    }
    const list = await json(await call(listLoader, apiRequest(b, '/api/token/?p=1&size=10')));
    expect(list.body.data.total).toBe(0);
    const row = await db.orm.em.fork().findOneOrFail(Token, { id });
    expect(row).toMatchObject({ name: 'secret', status: 1, deletedAt: null });
  });

  it('page actions: create with presets, then enable refused for an exhausted token', async () => {
    const a = await makeUser();
    const form = new URLSearchParams({
      name: 'paged',
      remain_quota: '1',
      quota_preset: '5000000',
      expiry_preset: 'day',
      expired_time: '',
      count: '1',
    });
    const post = (path: string, body: URLSearchParams) =>
      new Request(`http://localhost${path}`, {
        method: 'POST',
        headers: { Cookie: `sy_session=${a.token}`, 'Content-Type': 'application/x-www-form-urlencoded' },
        body,
      });
    const res = (await newAction({
      request: post('/token/new', form),
      context: context(),
      params: {},
    } as never)) as Response;
    expect(res.status).toBe(302);
    const tok = await db.orm.em.fork().findOneOrFail(Token, { name: 'paged' });
    expect(tok.remainQuota).toBe(5000000);
    expect(tok.expiredTime).toBeGreaterThan(Date.now() / 1000 + 86000);
    await db.orm.em.fork().nativeUpdate(Token, { id: tok.id }, { remainQuota: 0, status: 4 });
    const toggle = await call(
      pageAction,
      post('/token?index', new URLSearchParams({ intent: 'status', id: String(tok.id), status: '1' })),
    );
    expect(toggle.status).toBe(302);
    expect((await db.orm.em.fork().findOneOrFail(Token, { id: tok.id })).status).toBe(4);

    // a datetime-local expiry in the browser's zone (UTC+8 posts tz_offset -480)
    const zoned = new URLSearchParams({ name: 'zoned', expired_time: '2099-01-02T03:04', tz_offset: '-480' });
    await newAction({ request: post('/token/new', zoned), context: context(), params: {} } as never);
    const z = await db.orm.em.fork().findOneOrFail(Token, { name: 'zoned' });
    expect(z.expiredTime).toBe(Date.UTC(2099, 0, 2, 3, 4) / 1000 - 8 * 3600);
  });
});
