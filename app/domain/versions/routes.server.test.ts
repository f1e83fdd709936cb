import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { Version } from '@switchyard/db/entities/version.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { action as byIdAction, loader as byIdLoader } from '#app/routes/api.version.$id.ts';
import { loader as latestLoader } from '#app/routes/api.version.latest.ts';
import { loader as listLoader } from '#app/routes/api.version.list.ts';
import { action as versionAction } from '#app/routes/api.version.ts';
import { loader as downloadLoader } from '#app/routes/download.tsx';
import { action as indexAction, loader as indexLoader } from '#app/routes/version._index.tsx';
import { action as deletePageAction, loader as deletePageLoader } from '#app/routes/version.$id.delete.tsx';
import { action as editPageAction, loader as editPageLoader } from '#app/routes/version.$id.edit.tsx';
import { action as newPageAction } from '#app/routes/version.new.tsx';

let db: TestDatabase;
let seq = 0;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'versions_routes' });
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em
    .getConnection()
    .execute('truncate table sessions, audit_entries, versions, users restart identity cascade');
});

function context() {
  return {
    services: { orm: db.orm, options: { get: () => undefined }, relay: null, version: 'test', startedAt: 0 },
  } as never;
}

async function makeUser(role: number) {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, {
    username: `rv${seq}`,
    displayName: '',
    affCode: `rvaff${seq}`,
    role,
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

type Who = Awaited<ReturnType<typeof makeUser>>;

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
  if (!form) return new Request(`http://localhost${path}`, { headers });
  headers.set('Content-Type', 'application/x-www-form-urlencoded');
  return new Request(`http://localhost${path}`, { method: 'POST', headers, body: new URLSearchParams(form) });
}

// biome-ignore lint/suspicious/noExplicitAny: envelope payloads are checked field by field below
type Body = { success: boolean; message: string; data: any };
async function json(res: Response) {
  return { status: res.status, body: (await res.json()) as Body };
}

const call = (fn: (args: never) => unknown, request: Request, params: Record<string, string> = {}) =>
  fn({ request, context: context(), params } as never) as Promise<Response>;

/** A page loader/action answer: a Response or Remix's data() wrapper. */
async function pageCall(
  fn: (args: never) => unknown,
  request: Request,
  params: Record<string, string> = {},
): Promise<{ status: number; data: Body['data']; headers: Headers }> {
  try {
    const res = (await fn({ request, context: context(), params } as never)) as unknown;
    if (res instanceof Response) return { status: res.status, data: null, headers: res.headers };
    const d = res as { type?: string; data?: unknown; init?: ResponseInit };
    if (d && d.type === 'DataWithResponseInit')
      return { status: d.init?.status ?? 200, data: d.data, headers: new Headers(d.init?.headers) };
    return { status: 200, data: res, headers: new Headers() };
  } catch (thrown) {
    if (thrown instanceof Response) return { status: thrown.status, data: null, headers: thrown.headers };
    const d = thrown as { type?: string; data?: unknown; init?: ResponseInit };
    if (d && d.type === 'DataWithResponseInit')
      return { status: d.init?.status ?? 200, data: d.data, headers: new Headers() };
    throw thrown;
  }
}

const body = {
  Version: '1.0.0',
  DownUrl: 'https://example.com/app.exe',
  FileMd5: 'D41D8CD98F00B204E9800998ECF8427E',
  ForceIds: '0.9.0',
  Force: 1,
  OsType: 1,
  Remark: '<p>notes</p><script>x</script>',
};

describe('JSON routes', () => {
  it('401 without auth and 403 for an ordinary user on every admin route; /latest is public', async () => {
    const plain = await makeUser(Role.User);
    const admin = await makeUser(Role.Admin);
    const id = String(
      (await json(await call(versionAction, apiRequest(admin, '/api/version', { method: 'POST', body }))))
        .body.data.id,
    );
    const routes: [(args: never) => unknown, string, string, unknown?][] = [
      [listLoader, 'GET', '/api/version/list'],
      [byIdLoader, 'GET', `/api/version/${id}`],
      [byIdAction, 'DELETE', `/api/version/${id}`],
      [versionAction, 'POST', '/api/version', { ...body, Version: '2.0.0' }],
      [versionAction, 'PUT', '/api/version', { ...body, Id: id }],
    ];
    for (const [fn, method, path, b] of routes) {
      const anon = await json(await call(fn, apiRequest(null, path, { method, body: b }), { id }));
      expect(anon.status, path).toBe(401);
      expect(anon.body.success).toBe(false);
      const forbidden = await json(await call(fn, apiRequest(plain, path, { method, body: b }), { id }));
      expect(forbidden.status, `${method} ${path}`).toBe(403);
      expect(forbidden.body.success).toBe(false);
    }
    expect(await db.orm.em.fork().count(Version, {})).toBe(1);
    const latest = await json(await call(latestLoader, apiRequest(null, '/api/version/latest')));
    expect(latest.status).toBe(200);
    expect(latest.body.success).toBe(true);
    expect(
      latest.body.data.map((l: { os_type: number; version: { id: number } | null }) => [
        l.os_type,
        l.version?.id ?? null,
      ]),
    ).toEqual([
      [1, Number(id)],
      [2, null],
      [3, null],
    ]);
  });

  it('creates, lists (data.list), reads, updates and deletes with the envelope', async () => {
    const admin = await makeUser(Role.Admin);
    let res = await json(
      await call(versionAction, apiRequest(admin, '/api/version', { method: 'POST', body })),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      message: '',
      data: {
        version: '1.0.0',
        os_type: 1,
        filemd5: 'd41d8cd98f00b204e9800998ecf8427e',
        force: 1,
        forceids: '0.9.0',
      },
    });
    const id = res.body.data.id as number;
    // the remark is stored as given
    expect(res.body.data.remark).toBe('<p>notes</p><script>x</script>');

    res = await json(
      await call(
        versionAction,
        apiRequest(admin, '/api/version', { method: 'POST', body: { ...body, Version: '' } }),
      ),
    );
    expect(res).toMatchObject({
      status: 200,
      body: {
        success: false,
        message: 'Please fill in download address and version number',
        data: { fieldErrors: { Version: ['The version cannot be empty'] } },
      },
    });
    res = await json(
      await call(
        versionAction,
        apiRequest(admin, '/api/version', { method: 'POST', body: { ...body, DownUrl: 'ftp://x' } }),
      ),
    );
    expect(res.body).toMatchObject({ success: false, message: 'Enter a valid URL' });
    res = await json(
      await call(
        versionAction,
        apiRequest(admin, '/api/version', { method: 'POST', body: { ...body, FileMd5: 'xyz' } }),
      ),
    );
    expect(res.body).toMatchObject({ success: false, message: 'Enter a valid MD5' });
    res = await json(await call(versionAction, apiRequest(admin, '/api/version', { method: 'POST', body })));
    expect(res.body).toMatchObject({
      success: false,
      message: 'This version already exists for this operating system',
    });

    await json(
      await call(
        versionAction,
        apiRequest(admin, '/api/version', { method: 'POST', body: { ...body, OsType: 2 } }),
      ),
    );
    await json(
      await call(
        versionAction,
        apiRequest(admin, '/api/version', { method: 'POST', body: { ...body, OsType: 3 } }),
      ),
    );

    res = await json(await call(listLoader, apiRequest(admin, '/api/version/list')));
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data.list).toHaveLength(3);
    expect(res.body.data.list.map((v: { os_type: number }) => v.os_type)).toEqual([3, 2, 1]);
    for (const row of res.body.data.list)
      for (const key of ['os_type', 'version', 'downurl', 'filemd5', 'force', 'last_date', 'remark', 'id'])
        expect(row, key).toHaveProperty(key);
    res = await json(await call(listLoader, apiRequest(admin, '/api/version/list?p=2&page_size=2')));
    expect(res.body.data).toMatchObject({ page: 2, page_size: 2, total: 3 });
    expect(res.body.data.list).toHaveLength(1);
    res = await json(await call(listLoader, apiRequest(admin, '/api/version/list?p=0&page_size=500')));
    expect(res.body.data).toMatchObject({ page: 1, page_size: 10 });

    res = await json(await call(byIdLoader, apiRequest(admin, `/api/version/${id}`), { id: String(id) }));
    expect(res.body).toMatchObject({ success: true, data: { id, version: '1.0.0' } });
    res = await json(await call(byIdLoader, apiRequest(admin, '/api/version/999'), { id: '999' }));
    expect(res).toMatchObject({ status: 200, body: { success: false, message: 'Version not found' } });

    res = await json(
      await call(
        versionAction,
        apiRequest(admin, '/api/version', {
          method: 'PUT',
          body: { ...body, Id: id, Version: '1.0.1', Force: 0 },
        }),
      ),
    );
    expect(res.body).toMatchObject({ success: true, data: { id, version: '1.0.1', force: 0 } });

    res = await json(
      await call(byIdAction, apiRequest(admin, `/api/version/${id}`, { method: 'DELETE' }), {
        id: String(id),
      }),
    );
    expect(res.body).toEqual({ success: true, message: '', data: null });
    res = await json(
      await call(byIdAction, apiRequest(admin, `/api/version/${id}`, { method: 'DELETE' }), {
        id: String(id),
      }),
    );
    expect(res.body).toMatchObject({ success: false, message: 'Version not found' });
    res = await json(
      await call(byIdAction, apiRequest(admin, `/api/version/${id}`, { method: 'POST' }), { id: String(id) }),
    );
    expect(res.status).toBe(405);

    const actions = (await db.orm.em.fork().find(AuditEntry, {}, { orderBy: { id: 'asc' } })).map(
      (a) => a.action,
    );
    expect(actions).toEqual([
      'version.create',
      'version.create',
      'version.create',
      'version.update',
      'version.delete',
    ]);
  });
});

describe('pages', () => {
  it('the admin page lists; an ordinary user gets 403 and a visitor is sent to /login', async () => {
    const admin = await makeUser(Role.Admin);
    const plain = await makeUser(Role.User);
    let res = await pageCall(indexLoader, pageRequest(plain, '/version'));
    expect(res.status).toBe(403);
    res = await pageCall(indexLoader, pageRequest(null, '/version'));
    expect(res.status).toBe(302);
    res = await pageCall(
      newPageAction,
      pageRequest(plain, '/version/new', { ...body, Force: '1', OsType: '1' } as never),
    );
    expect(res.status).toBe(403);
    expect(await db.orm.em.fork().count(Version, {})).toBe(0);
    res = await pageCall(indexLoader, pageRequest(admin, '/version?page_size=20'));
    expect(res.status).toBe(200);
    expect(res.data.result).toMatchObject({ list: [], total: 0, page_size: 20 });
    expect(res.headers.get('Set-Cookie')).toMatch(/page_size/);
  });

  it('adds (PRG or fetcher), edits, and deletes through the page actions', async () => {
    const admin = await makeUser(Role.Admin);
    const form = { Version: '', DownUrl: '', FileMd5: '', ForceIds: '', Force: '0', OsType: '1', Remark: '' };
    let res = await pageCall(newPageAction, pageRequest(admin, '/version/new', form));
    expect(res.status).toBe(400);
    expect(res.data).toMatchObject({
      ok: false,
      error: 'Please fill in download address and version number',
      fieldErrors: { Version: ['The version cannot be empty'], DownUrl: ['Enter a valid URL'] },
      values: { OsType: '1' },
    });
    res = await pageCall(
      newPageAction,
      pageRequest(admin, '/version/new', { ...form, Version: '1.0', DownUrl: 'https://x.example/a' }),
    );
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/version');
    expect(res.headers.get('Set-Cookie')).toMatch(/sy_toast/);
    res = await pageCall(
      newPageAction,
      pageRequest(admin, '/version/new', {
        ...form,
        Version: '1.0',
        DownUrl: 'https://x.example/b',
        OsType: '2',
        _fetcher: '1',
      }),
    );
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({ ok: true });
    expect(res.headers.get('Set-Cookie')).toMatch(/sy_toast/);

    const rows = await db.orm.em.fork().find(Version, {}, { orderBy: { id: 'asc' } });
    expect(rows.map((r) => r.osType)).toEqual([1, 2]);
    const [first, second] = rows as [Version, Version];
    const id = String(first.id);
    res = await pageCall(editPageLoader, pageRequest(admin, `/version/${id}/edit`), { id });
    expect(res.data.version).toMatchObject({ id: first.id, version: '1.0' });
    res = await pageCall(editPageLoader, pageRequest(admin, '/version/999/edit'), { id: '999' });
    expect(res.status).toBe(404);
    res = await pageCall(editPageLoader, pageRequest(admin, '/version/999/edit?modal=1'), { id: '999' });
    expect(res).toMatchObject({ status: 200, data: { version: null } });
    res = await pageCall(
      editPageAction,
      pageRequest(admin, `/version/${id}/edit`, {
        ...form,
        Version: '1.1',
        DownUrl: 'https://x.example/c',
        redirectTo: '/version?p=1',
      }),
      { id },
    );
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/version?p=1');
    expect((await db.orm.em.fork().findOneOrFail(Version, first.id)).version).toBe('1.1');

    res = await pageCall(deletePageLoader, pageRequest(admin, `/version/${id}/delete`), { id });
    expect(res.data.version).toMatchObject({ version: '1.1', os_type: 1 });
    res = await pageCall(
      deletePageAction,
      pageRequest(admin, `/version/${id}/delete`, { redirectTo: '//evil' }),
      { id },
    );
    expect(res.headers.get('Location')).toBe('/version');
    const other = String(second.id);
    res = await pageCall(indexAction, pageRequest(admin, '/version?index', { intent: 'delete', id: other }));
    expect(res.status).toBe(302);
    expect(await db.orm.em.fork().count(Version, {})).toBe(0);

    const dl = await pageCall(downloadLoader, pageRequest(null, '/download'));
    expect(dl.data.latest.map((l: { version: unknown }) => l.version)).toEqual([null, null, null]);
  });
});
