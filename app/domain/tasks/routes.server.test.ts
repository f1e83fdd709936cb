import { Session } from '@switchyard/db/entities/session.ts';
import { Task } from '@switchyard/db/entities/task.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { createMemoryRateLimiter } from '#app/domain/security/rate-limit.server.ts';
import { loader as indexLoader } from '#app/routes/api.task._index.ts';
import { loader as selfLoader } from '#app/routes/api.task.self.ts';
import { loader as pageLoader } from '#app/routes/task._index.tsx';

let db: TestDatabase;
let seq = 0;
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'tasks_routes' });
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em.getConnection().execute('truncate table sessions, tasks, users restart identity cascade');
});

function context() {
  return {
    services: {
      orm: db.orm,
      options: { get: () => undefined },
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
    username: `tk${seq}`,
    displayName: '',
    affCode: `tkaff${seq}`,
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

async function seedTask(user: User, over: Record<string, unknown> = {}) {
  const em = db.orm.em.fork();
  seq += 1;
  em.create(Task, {
    userId: user.id,
    taskId: `task-${seq}`,
    platform: 'suno',
    action: 'MUSIC',
    status: 'SUCCESS',
    progress: '100%',
    channelId: 7,
    quota: 1000,
    submitTime: now() - 60,
    finishTime: now() - 20,
    data: JSON.stringify({ clips: [{ id: 'c1', title: 'song' }] }),
    ...over,
  } as never);
  await em.flush();
}

function apiRequest(who: Who | null, path: string) {
  const headers = new Headers({ 'Accept-Language': 'en' });
  if (who) {
    headers.set('Cookie', `sy_session=${who.token}`);
    headers.set('New-Api-User', String(who.user.id));
  }
  return new Request(`http://localhost${path}`, { headers });
}

// biome-ignore lint/suspicious/noExplicitAny: envelope payloads are checked field by field below
type Body = { success: boolean; message: string; data: any };
async function call(fn: (args: never) => unknown, request: Request) {
  const res = (await fn({ request, context: context(), params: {} } as never)) as Response;
  return { status: res.status, body: (await res.json()) as Body };
}

describe('GET /api/task/ and /api/task/self', () => {
  it('401 without auth; 403 for a user on the admin list; the self list answers a user', async () => {
    const plain = await makeUser();
    expect((await call(indexLoader, apiRequest(null, '/api/task/'))).status).toBe(401);
    const forbidden = await call(indexLoader, apiRequest(plain, '/api/task/'));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.success).toBe(false);
    expect((await call(selfLoader, apiRequest(null, '/api/task/self'))).status).toBe(401);
    const ok = await call(selfLoader, apiRequest(plain, '/api/task/self'));
    expect(ok.body).toMatchObject({ success: true, data: { items: [], total: 0, page: 1, page_size: 10 } });
  });

  it('answers new-api task objects: JSON columns parsed, newest first, username and channel for admins', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser();
    await seedTask(alice.user, { taskId: 'older' });
    await seedTask(alice.user, { taskId: 'newer', status: '', progress: '10%', finishTime: 0 });
    const res = await call(indexLoader, apiRequest(admin, '/api/task/?p=1&page_size=10'));
    expect(res.body.success).toBe(true);
    expect(res.body.data).toMatchObject({ total: 2, page: 1, page_size: 10 });
    const [first, second] = res.body.data.items;
    expect(first).toMatchObject({ task_id: 'newer', status: '', progress: '10%', finish_time: 0 });
    expect(second).toMatchObject({
      task_id: 'older',
      platform: 'suno',
      action: 'MUSIC',
      status: 'SUCCESS',
      channel_id: 7,
      user_id: alice.user.id,
      username: alice.user.username,
      quota: 1000,
      data: { clips: [{ id: 'c1', title: 'song' }] },
    });
    for (const f of [
      'id',
      'created_at',
      'updated_at',
      'submit_time',
      'start_time',
      'finish_time',
      'fail_reason',
    ])
      expect(second, f).toHaveProperty(f);
  });

  it('a user sees only their own tasks, whatever the query says, and no channel', async () => {
    const alice = await makeUser();
    const bob = await makeUser();
    await seedTask(alice.user, { taskId: 'alice-1' });
    await seedTask(bob.user, { taskId: 'bob-1', channelId: 9 });
    const mine = await call(selfLoader, apiRequest(alice, '/api/task/self?channel_id=9'));
    expect(mine.body.data.total).toBe(1);
    expect(mine.body.data.items[0]).toMatchObject({ task_id: 'alice-1', channel_id: 0 });
    expect(mine.body.data.items[0]).not.toHaveProperty('username');
    const other = await call(selfLoader, apiRequest(alice, '/api/task/self?task_id=bob-1'));
    expect(other.body.data).toMatchObject({ items: [], total: 0 });
  });

  it('admin filters: channel_id, task_id, the submit-time window, paging', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser();
    const t = now();
    await seedTask(alice.user, { taskId: 'a', channelId: 1, submitTime: t - 3 * 86400 });
    await seedTask(alice.user, { taskId: 'b', channelId: 2, submitTime: t - 100 });
    await seedTask(admin.user, { taskId: 'c', channelId: 2, submitTime: t - 50 });
    const ids = async (q: string) =>
      (await call(indexLoader, apiRequest(admin, `/api/task/?${q}`))).body.data.items.map(
        (i: { task_id: string }) => i.task_id,
      );
    expect(await ids('channel_id=2')).toEqual(['c', 'b']);
    expect(await ids('task_id=a')).toEqual(['a']);
    expect(await ids(`start_timestamp=${t - 86400}`)).toEqual(['c', 'b']);
    expect(await ids(`end_timestamp=${t - 86400}`)).toEqual(['a']);
    expect(await ids(`start_timestamp=${t - 86400}&end_timestamp=${t - 80}`)).toEqual(['b']);
    expect(await ids('p=2&page_size=2')).toEqual(['a']);
    const p2 = await call(indexLoader, apiRequest(admin, '/api/task/?p=2&page_size=2'));
    expect(p2.body.data).toMatchObject({ total: 3, page: 2, page_size: 2 });
  });

  it('bad parameters answer success false with a message, never a 5xx', async () => {
    const admin = await makeUser({ role: Role.Admin });
    for (const q of [
      'p=abc',
      'page_size=1000',
      'page_size=0',
      'channel_id=-1',
      'channel_id=x',
      'start_timestamp=yesterday',
      'end_timestamp=1e99',
      `task_id=${'x'.repeat(300)}`,
      'task_id=a%00b',
    ]) {
      for (const fn of [indexLoader, selfLoader]) {
        const res = await call(fn, apiRequest(admin, `/api/task/?${q}`));
        expect(res.status, q).toBeLessThan(500);
        expect(res.body.success, q).toBe(false);
        expect(res.body.message, q).toBeTruthy();
      }
    }
  });
});

function pageRequest(who: Who | null, path: string) {
  const headers = new Headers({ 'Accept-Language': 'en' });
  if (who) headers.set('Cookie', `sy_session=${who.token}; tz=UTC`);
  return new Request(`http://localhost${path}`, { headers });
}

/** Runs the page loader; a thrown Response or data() (redirect, 400) is returned instead. */
async function page(request: Request) {
  try {
    return (await pageLoader({ request, context: context(), params: {} } as never)) as unknown;
  } catch (error) {
    return error;
  }
}
// biome-ignore lint/suspicious/noExplicitAny: Remix data() results are inspected loosely
const payload = (r: any) => (r?.type === 'DataWithResponseInit' ? r.data : r);
// biome-ignore lint/suspicious/noExplicitAny: Remix data() results are inspected loosely
const statusOf = (r: any) => (r instanceof Response ? r.status : (r?.init?.status ?? 200));

describe('/task page loader', () => {
  it('redirects a visitor to /login', async () => {
    const r = await page(pageRequest(null, '/task'));
    expect(r).toBeInstanceOf(Response);
    expect((r as Response).headers.get('Location')).toContain('/login');
  });

  it('defaults to the start of today; a user sees only their own tasks and no channel filter', async () => {
    const alice = await makeUser();
    const bob = await makeUser();
    const midnight = Math.floor(Date.now() / 86_400_000) * 86_400;
    await seedTask(alice.user, { taskId: 'yesterday', submitTime: midnight - 3600 });
    await seedTask(alice.user, { taskId: 'today', submitTime: Math.max(midnight, now() - 10) });
    await seedTask(bob.user, { taskId: 'bob', submitTime: now() - 5 });
    const r = payload(await page(pageRequest(alice, '/task?channel_id=7')));
    expect(r.admin).toBe(false);
    expect(r.filters.start).toBe(new Date(midnight * 1000).toISOString().slice(0, 16));
    expect(r.filters.channel_id).toBe('');
    expect(r.result.items.map((i: { task_id: string }) => i.task_id)).toEqual(['today']);
    const all = payload(await page(pageRequest(alice, '/task?start=')));
    expect(all.result.items.map((i: { task_id: string }) => i.task_id)).toEqual(['today', 'yesterday']);
  });

  it('admin: every user, channel and task id filters, the form window in the user zone', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser();
    await seedTask(alice.user, { taskId: 'x1', channelId: 3, submitTime: Date.UTC(2026, 0, 2, 10) / 1000 });
    await seedTask(admin.user, { taskId: 'x2', channelId: 4, submitTime: Date.UTC(2026, 0, 2, 12) / 1000 });
    const ids = async (q: string) =>
      payload(await page(pageRequest(admin, `/task?${q}`))).result.items.map(
        (i: { task_id: string }) => i.task_id,
      );
    expect(await ids('start=2026-01-01T00:00')).toEqual(['x2', 'x1']);
    expect(await ids('start=2026-01-01T00:00&channel_id=3')).toEqual(['x1']);
    expect(await ids('start=&task_id=x2')).toEqual(['x2']);
    expect(await ids('start=2026-01-02T11:00&end=2026-01-02T13:00')).toEqual(['x2']);
  });

  it('a bad filter is a 400 page with the message, never a 500', async () => {
    const admin = await makeUser({ role: Role.Admin });
    for (const q of ['start=yesterday', 'channel_id=abc', 'end=2026-13-01T00:00', 'p=-3']) {
      const r = await page(pageRequest(admin, `/task?${q}`));
      expect(statusOf(r), q).toBe(400);
      expect(payload(r).message, q).toBeTruthy();
    }
  });
});
