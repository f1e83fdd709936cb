import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log } from '@switchyard/db/entities/log.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { hashPassword, verifyPassword } from '@switchyard/db/security/password.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { accessTokenHash, createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { loader as groupLoader } from '#app/routes/api.group.ts';
import { action as userAction, loader as userListLoader } from '#app/routes/api.user._index.ts';
import { loader as userByIdLoader } from '#app/routes/api.user.$id.ts';
import { action as manageAction } from '#app/routes/api.user.manage.ts';
import { loader as searchLoader } from '#app/routes/api.user.search.ts';
import { action as selfApiAction } from '#app/routes/api.user.self.ts';
import { action as pageAction, loader as pageLoader } from '#app/routes/user._index.tsx';
import { loader as deletePageLoader } from '#app/routes/user.$id.delete.tsx';
import { action as selfAction, loader as selfLoader } from '#app/routes/user.edit.tsx';
import { action as editAction, loader as editLoader } from '#app/routes/user.edit_.$id.tsx';
import { action as addAction } from '#app/routes/user.new.tsx';

let db: TestDatabase;
let seq = 0;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'users_routes' });
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
  get: (key: string) => ({ QuotaForNewUser: 0, GroupRatio: { default: 1, vip: 2 } })[key as 'GroupRatio'],
};

function context() {
  return {
    services: { orm: db.orm, options, relay: null, version: 'test', startedAt: 0 },
  } as never;
}

async function makeUser(over: Record<string, unknown> = {}) {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, {
    username: `r${seq}`,
    displayName: '',
    affCode: `raff${seq}`,
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

type Who = { user: User; token: string };

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
  return {
    status: res.status,
    body: (await res.json()) as Body,
  };
}

const call = (
  fn: (args: never) => Promise<Response> | Response,
  request: Request,
  params: Record<string, string> = {},
) => fn({ request, context: context(), params } as never);

describe('JSON routes', () => {
  it('401 without auth, 403 for an ordinary user, on every route', async () => {
    const plain = await makeUser();
    const routes: [typeof userListLoader, string, string, unknown?][] = [
      [userListLoader, 'GET', '/api/user/?p=1'],
      [searchLoader, 'GET', '/api/user/search?keyword=a'],
      [userByIdLoader, 'GET', `/api/user/${plain.user.id}`],
      [userAction, 'POST', '/api/user/', { username: 'x', password: 'longenough' }],
      [userAction, 'PUT', '/api/user/', { id: plain.user.id, username: 'x' }],
      [manageAction, 'POST', '/api/user/manage', { id: plain.user.id, action: 'disable' }],
      [groupLoader, 'GET', '/api/group/'],
    ];
    for (const [fn, method, path, body] of routes) {
      const anon = await json(
        await call(fn, apiRequest(null, path, { method, body }), { id: String(plain.user.id) }),
      );
      expect(anon.status, path).toBe(401);
      expect(anon.body.success).toBe(false);
      const forbidden = await json(
        await call(fn, apiRequest(plain, path, { method, body }), { id: String(plain.user.id) }),
      );
      expect(forbidden.status, path).toBe(403);
      expect(forbidden.body.success).toBe(false);
    }
  });

  it('lists, searches, reads, creates, updates and manages with the envelope', async () => {
    const admin = await makeUser({ role: Role.Admin, username: 'admin1' });
    for (let i = 0; i < 3; i++) await makeUser();
    // p=0 is treated as 1; page_size is clamped to 1..100 (an out-of-range value falls back to 10)
    let res = await json(await call(userListLoader, apiRequest(admin, '/api/user/?p=0&page_size=2')));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, message: '', data: { page: 1, total: 4, page_size: 2 } });
    expect(res.body.data.items).toHaveLength(2);
    expect(JSON.stringify(res.body)).not.toMatch(/password|access_token/);
    res = await json(await call(userListLoader, apiRequest(admin, '/api/user/?p=2&page_size=500')));
    expect(res.body.data.page_size).toBe(10);

    res = await json(
      await call(
        userAction,
        apiRequest(admin, '/api/user/', { method: 'POST', body: { username: 'fresh', password: '' } }),
      ),
    );
    expect(res).toEqual({
      status: 200,
      body: { success: false, message: 'Username and password cannot be empty', data: expect.anything() },
    });
    res = await json(
      await call(
        userAction,
        apiRequest(admin, '/api/user/', {
          method: 'POST',
          body: { username: 'fresh', display_name: 'Fresh', password: 'longenough' },
        }),
      ),
    );
    expect(res.body.success).toBe(true);
    const id = res.body.data.id as number;

    res = await json(
      await call(searchLoader, apiRequest(admin, '/api/user/search?keyword=FRE&group=default&p=1')),
    );
    expect(res.body.data.items.map((u: { id: number }) => u.id)).toEqual([id]);

    res = await json(await call(userByIdLoader, apiRequest(admin, `/api/user/${id}`), { id: String(id) }));
    expect(res.body.data).toMatchObject({ id, username: 'fresh', display_name: 'Fresh', group: 'default' });
    res = await json(await call(userByIdLoader, apiRequest(admin, '/api/user/99999'), { id: '99999' }));
    expect(res).toMatchObject({ status: 200, body: { success: false, message: 'User does not exist' } });

    res = await json(
      await call(
        userAction,
        apiRequest(admin, '/api/user/', {
          method: 'PUT',
          body: { id, username: 'fresh', display_name: 'Fresh', password: '', group: 'vip', quota: 4200 },
        }),
      ),
    );
    expect(res.body).toMatchObject({ success: true, data: { group: 'vip', quota: 4200 } });
    expect(await db.orm.em.fork().count(Log, { userId: id, type: 3 })).toBe(1);

    res = await json(
      await call(
        manageAction,
        apiRequest(admin, '/api/user/manage', { method: 'POST', body: { id, action: 'disable' } }),
      ),
    );
    expect(res.body).toEqual({ success: true, message: '', data: { status: 2, role: 1 } });
    res = await json(
      await call(
        manageAction,
        apiRequest(admin, '/api/user/manage', { method: 'POST', body: { id, action: 'promote' } }),
      ),
    );
    expect(res).toMatchObject({
      status: 200,
      body: { success: false, message: 'Admins cannot promote other users to admin' },
    });
    res = await json(
      await call(
        manageAction,
        apiRequest(admin, '/api/user/manage', { method: 'POST', body: { id, action: 'explode' } }),
      ),
    );
    expect(res).toMatchObject({ status: 200, body: { success: false } });

    res = await json(await call(groupLoader, apiRequest(admin, '/api/group/')));
    expect(res.body).toEqual({ success: true, message: '', data: ['default', 'vip'] });
  });

  it('refuses reads of a same-or-higher role as writes are refused (admin vs root and admin; root reads all)', async () => {
    const root = await makeUser({
      role: Role.Root,
      username: 'theroot',
      email: 'root@example.com',
      githubId: 'gh-root',
    });
    const admin = await makeUser({ role: Role.Admin, username: 'adminA' });
    const admin2 = await makeUser({ role: Role.Admin, username: 'adminB', email: 'b@example.com' });
    const plain = await makeUser({ username: 'plainC', email: 'c@example.com' });
    const read = async (who: Who, target: Who) =>
      json(
        await call(userByIdLoader, apiRequest(who, `/api/user/${target.user.id}`), {
          id: String(target.user.id),
        }),
      );
    for (const target of [root, admin2]) {
      const res = await read(admin, target);
      expect(res, target.user.username).toEqual({
        status: 403,
        body: {
          success: false,
          message: 'No permission to get information of users at the same or a higher level',
          data: null,
        },
      });
      expect(JSON.stringify(res.body)).not.toContain('@example.com');
    }
    // an admin reads ordinary users and themself; root reads everyone
    expect((await read(admin, plain)).body).toMatchObject({
      success: true,
      data: { email: 'c@example.com' },
    });
    expect((await read(admin, admin)).body).toMatchObject({ success: true, data: { username: 'adminA' } });
    for (const target of [root, admin, admin2, plain])
      expect((await read(root, target)).body, target.user.username).toMatchObject({
        success: true,
        data: { id: target.user.id },
      });
    // zh (the default language) says new-api's message
    const zh = new Request(`http://localhost/api/user/${root.user.id}`, {
      headers: { Cookie: `sy_session=${admin.token}`, 'New-Api-User': String(admin.user.id) },
    });
    expect((await json(await call(userByIdLoader, zh, { id: String(root.user.id) }))).body.message).toBe(
      '无权获取同级或更高等级用户的信息',
    );
  });

  it('every user answer is a flat user object whose setting is a JSON string (new-api model.User)', async () => {
    const admin = await makeUser({ role: Role.Admin, username: 'shape-admin' });
    const other = await makeUser({
      username: 'shape-user',
      setting: JSON.stringify({
        notify_type: 'webhook',
        webhook_url: 'https://h.test/x',
        webhook_secret: 'hidden-s',
      }),
    });
    const list = await json(await call(userListLoader, apiRequest(admin, '/api/user/?p=1&page_size=10')));
    const search = await json(
      await call(searchLoader, apiRequest(admin, '/api/user/search?keyword=shape-user')),
    );
    const byId = await json(
      await call(userByIdLoader, apiRequest(admin, `/api/user/${other.user.id}`), {
        id: String(other.user.id),
      }),
    );
    // seed 000 §7: data.items, page, total
    expect(Object.keys(list.body.data).sort()).toEqual(['items', 'page', 'page_size', 'total']);
    expect(Object.keys(search.body.data).sort()).toEqual(['items', 'page', 'page_size', 'total']);
    const fromList = list.body.data.items.find((u: { id: number }) => u.id === other.user.id);
    for (const u of [fromList, search.body.data.items[0], byId.body.data]) {
      expect(u).toMatchObject({
        id: other.user.id,
        username: 'shape-user',
        display_name: '',
        group: 'default',
      });
      expect(typeof u.setting).toBe('string');
      expect(JSON.parse(u.setting)).toMatchObject({
        notify_type: 'webhook',
        webhook_url: 'https://h.test/x',
        webhook_secret_set: true,
      });
      expect(JSON.stringify(u)).not.toContain('hidden-s');
      for (const v of Object.values(u)) expect(v === null || typeof v !== 'object').toBe(true);
    }
  });

  it('accepts the access token instead of the session', async () => {
    const admin = await makeUser({
      role: Role.Admin,
      accessToken: await accessTokenHash('admin-system-token-123'),
    });
    const req = new Request('http://localhost/api/user/?p=1', {
      headers: { Authorization: 'Bearer admin-system-token-123', 'New-Api-User': String(admin.user.id) },
    });
    const res = await json(await call(userListLoader, req));
    expect(res.body.success).toBe(true);
  });
});

function pageRequest(who: Who | null, path: string, form?: Record<string, string>) {
  const headers = new Headers({ 'Accept-Language': 'en' });
  if (who) headers.set('Cookie', `sy_session=${who.token}`);
  return new Request(`http://localhost${path}`, {
    method: form ? 'POST' : 'GET',
    headers,
    body: form ? new URLSearchParams(form) : undefined,
  });
}

async function thrown(p: Promise<unknown> | unknown): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('/user page', () => {
  it('redirects anonymous visitors to /login and answers 403 to ordinary users', async () => {
    const plain = await makeUser();
    const anon = (await thrown(call(pageLoader as never, pageRequest(null, '/user')))) as Response;
    expect(anon.status).toBe(302);
    expect(anon.headers.get('Location')).toBe('/login?redirectTo=%2Fuser');
    const forbidden = (await thrown(call(pageLoader as never, pageRequest(plain, '/user')))) as {
      init: { status: number };
    };
    expect(forbidden.init.status).toBe(403);
  });

  it('renders the table data and persists the chosen page size', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const out = (await call(
      pageLoader as never,
      pageRequest(admin, '/user?page_size=20&keyword=r'),
    )) as unknown as {
      data: { result: { total: number }; groups: string[]; pageSize: number };
      init: { headers: Headers };
    };
    expect(out.data.pageSize).toBe(20);
    expect(out.data.groups).toEqual(['default', 'vip']);
    expect(out.data.result.total).toBe(1);
    expect(out.init.headers.get('Set-Cookie')).toContain('page_size=');
  });

  it('/user/edit/{id} and /user/{id}/delete show the refusal, not the profile, for a same-or-higher role', async () => {
    const root = await makeUser({ role: Role.Root, email: 'root@example.com' });
    const admin = await makeUser({ role: Role.Admin });
    const admin2 = await makeUser({ role: Role.Admin });
    const plain = await makeUser({ email: 'plain@example.com' });
    for (const target of [root, admin2]) {
      const id = String(target.user.id);
      for (const [loader, path] of [
        [editLoader, `/user/edit/${id}`],
        [deletePageLoader, `/user/${id}/delete`],
      ] as const) {
        const refused = (await thrown(call(loader as never, pageRequest(admin, path), { id }))) as {
          data: unknown;
          init: { status: number };
        };
        expect(refused.init.status, path).toBe(403);
        expect(refused.data).toEqual({
          message: 'No permission to get information of users at the same or a higher level',
        });
      }
    }
    // the add-quota step reads the user first: refused with the message, nothing written
    const addQuota = (await call(
      editAction as never,
      pageRequest(admin, `/user/edit/${root.user.id}`, { intent: 'addQuota', add_quota: '5' }),
      { id: String(root.user.id) },
    )) as unknown as { data: { error: string }; init: { status: number } };
    expect(addQuota.init.status).toBe(400);
    expect(addQuota.data.error).toBe(
      'No permission to get information of users at the same or a higher level',
    );
    expect(Number((await db.orm.em.fork().findOneOrFail(User, { id: root.user.id })).quota)).toBe(0);
    // allowed: admin -> ordinary user and self; root -> an admin
    const ok = async (who: Who, target: Who) =>
      (
        (await call(editLoader as never, pageRequest(who, `/user/edit/${target.user.id}`), {
          id: String(target.user.id),
        })) as unknown as { user: { id: number; email: string } }
      ).user;
    expect(await ok(admin, plain)).toMatchObject({ id: plain.user.id, email: 'plain@example.com' });
    expect((await ok(admin, admin)).id).toBe(admin.user.id);
    expect((await ok(root, admin2)).id).toBe(admin2.user.id);
  });

  it('row actions, add and edit post, redirect back and flash a toast', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const other = await makeUser();
    let res = (await call(
      pageAction as never,
      pageRequest(admin, '/user?index', {
        intent: 'manage',
        id: String(other.user.id),
        action: 'disable',
        redirectTo: '/user?p=1',
      }),
    )) as Response;
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/user?p=1');
    expect(res.headers.get('Set-Cookie')).toContain('sy_toast=');
    expect((await db.orm.em.fork().findOneOrFail(User, { id: other.user.id })).status).toBe(2);

    res = (await call(
      addAction as never,
      pageRequest(admin, '/user/new', {
        intent: 'create',
        username: 'paged',
        display_name: '',
        password: 'longenough',
      }),
    )) as Response;
    expect(res.status).toBe(302);
    const created = await db.orm.em.fork().findOneOrFail(User, { username: 'paged' });

    // with JavaScript the drawer posts through a fetcher (_fetcher=1): data + the flash toast, no redirect
    const viaFetcher = (await call(
      addAction as never,
      pageRequest(admin, '/user/new', {
        intent: 'create',
        _fetcher: '1',
        username: 'drawer',
        display_name: '',
        password: 'longenough',
      }),
    )) as unknown as { data: { ok: boolean }; init: { headers: Record<string, string> } };
    expect(viaFetcher.data.ok).toBe(true);
    expect(viaFetcher.init.headers['Set-Cookie']).toContain('sy_toast=');

    const bad = (await call(
      addAction as never,
      pageRequest(admin, '/user/new', {
        intent: 'create',
        username: 'paged',
        display_name: '',
        password: 'longenough',
      }),
    )) as unknown as { data: { error: string }; init: { status: number } };
    expect(bad.init.status).toBe(400);
    expect(bad.data.error).toContain('Username already exists');

    res = (await call(
      editAction as never,
      pageRequest(admin, `/user/edit/${created.id}`, { intent: 'addQuota', add_quota: '-50' }),
      { id: String(created.id) },
    )) as Response;
    expect(res.status).toBe(302);
    expect(Number((await db.orm.em.fork().findOneOrFail(User, { id: created.id })).quota)).toBe(-50);
    expect(await db.orm.em.fork().count(AuditEntry, { action: 'user.quota' })).toBe(1);
  });
});

describe('self-service profile page /user/edit (seed 000 §6)', () => {
  type PageReply = { data: { error: string; values: Record<string, string> }; init: { status: number } };

  it('an ordinary user reads and edits their own username and display name', async () => {
    const me = await makeUser({ username: 'selfer', displayName: 'Old', githubId: 'gh-1' });
    const page = (await call(selfLoader as never, pageRequest(me, '/user/edit'))) as unknown as {
      user: Record<string, string>;
    };
    expect(page.user).toEqual({
      username: 'selfer',
      display_name: 'Old',
      github_id: 'gh-1',
      wechat_id: '',
      telegram_id: '',
      email: '',
    });
    const res = (await call(
      selfAction as never,
      pageRequest(me, '/user/edit', { username: 'selfer2', display_name: 'New', password: '' }),
    )) as Response;
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/user/edit');
    expect(res.headers.get('Set-Cookie')).toContain('sy_toast=');
    const row = await db.orm.em.fork().findOneOrFail(User, { id: me.user.id });
    expect([row.username, row.displayName, row.role]).toEqual(['selfer2', 'New', Role.User]);
    expect(await db.orm.em.fork().count(AuditEntry, { action: 'user.update_self' })).toBe(1);
  });

  it('changes the password only with the current one, keeping this session and ending the others', async () => {
    const me = await makeUser({ passwordHash: await hashPassword('old-password') });
    const other = await makeUser();
    const otherSession = createSessionToken();
    const em = db.orm.em.fork();
    em.create(Session, {
      id: await sha256Hex(otherSession),
      user: me.user.id,
      expiresAt: new Date(Date.now() + 3_600_000),
    } as never);
    await em.flush();

    const refusals: [Record<string, string>, string][] = [
      [{ password: 'new-password' }, 'current password'],
      [{ password: 'new-password', original_password: 'wrong-password' }, 'current password'],
      [{ password: 'new-password', password2: 'other-password', original_password: 'old-password' }, 'match'],
      [{ password: 'short', original_password: 'old-password' }, '8'],
      [{ username: other.user.username }, 'already'],
      [{ username: 'bad name!' }, ''],
    ];
    for (const [form, text] of refusals) {
      const bad = (await call(
        selfAction as never,
        pageRequest(me, '/user/edit', { username: me.user.username, display_name: '', ...form }),
      )) as unknown as PageReply;
      expect([form, bad.init.status]).toEqual([form, 400]);
      expect(bad.data.error.toLowerCase()).toContain(text);
    }
    let row = await db.orm.em.fork().findOneOrFail(User, { id: me.user.id });
    expect(await verifyPassword('old-password', row.passwordHash!)).toBe(true);
    expect(row.username).toBe(me.user.username);

    const ok = (await call(
      selfAction as never,
      pageRequest(me, '/user/edit', {
        username: me.user.username,
        display_name: '',
        password: 'new-password',
        password2: 'new-password',
        original_password: 'old-password',
      }),
    )) as Response;
    expect(ok.status).toBe(302);
    row = await db.orm.em.fork().findOneOrFail(User, { id: me.user.id });
    expect(await verifyPassword('new-password', row.passwordHash!)).toBe(true);
    const sessions = await db.orm.em.fork().find(Session, { user: me.user.id });
    expect(sessions.map((s) => s.id)).toEqual([await sha256Hex(me.token)]);
  });

  it('the page and PUT /api/user/self apply the same rules', async () => {
    const me = await makeUser({ passwordHash: await hashPassword('old-password') });
    const api = await json(
      await call(
        selfApiAction,
        apiRequest(me, '/api/user/self', { method: 'PUT', body: { password: 'new-password' } }),
      ),
    );
    const page = (await call(
      selfAction as never,
      pageRequest(me, '/user/edit', { username: me.user.username, password: 'new-password' }),
    )) as unknown as PageReply;
    expect(api.body.success).toBe(false);
    expect(page.data.error).toBe(api.body.message);
  });

  it('a visitor who is not signed in is sent to /login', async () => {
    const res = await thrown(call(selfLoader as never, pageRequest(null, '/user/edit')));
    expect((res as Response).status).toBe(302);
    expect((res as Response).headers.get('Location')).toBe('/login?redirectTo=%2Fuser%2Fedit');
  });
});
