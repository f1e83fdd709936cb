import { MidjourneyTask } from '@switchyard/db/entities/midjourney-task.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { createMemoryRateLimiter } from '#app/domain/security/rate-limit.server.ts';
import { loader as allLoader } from '#app/routes/api.mj._index.ts';
import { loader as selfLoader } from '#app/routes/api.mj.self._index.ts';
import { loader as pageLoader } from '#app/routes/midjourney.tsx';

let db: TestDatabase;
let seq = 0;
let optionValues: Record<string, unknown> = {};

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'mj_routes' });
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  optionValues = { MjNotifyEnabled: false, MjForwardUrlEnabled: false, ServerAddress: 'https://gw.example' };
  await db.orm.em
    .getConnection()
    .execute('truncate table sessions, midjourney_tasks, users restart identity cascade');
});

function context() {
  return {
    services: {
      orm: db.orm,
      options: { get: (key: string) => optionValues[key] },
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
    username: `mj${seq}`,
    displayName: '',
    affCode: `mjaff${seq}`,
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
  em.create(MidjourneyTask, {
    userId: user.id,
    code: 1,
    action: 'IMAGINE',
    mjId: `task-${seq}`,
    prompt: 'a cat',
    promptEn: 'a cat',
    submitTime: Date.now() - 60_000,
    startTime: Date.now() - 55_000,
    finishTime: 0,
    status: 'IN_PROGRESS',
    progress: '45%',
    imageUrl: 'https://cdn.example/cat.png',
    channelId: 7,
    quota: 50_000,
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
async function json(res: Response) {
  return { status: res.status, body: (await res.json()) as Body };
}
const call = (fn: (args: never) => unknown, request: Request) =>
  fn({ request, context: context(), params: {} } as never) as Promise<Response>;

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

describe('GET /api/mj/ and /api/mj/self/', () => {
  it('401 without a session, 403 for a user on the admin list', async () => {
    const plain = await makeUser();
    expect((await call(allLoader, apiRequest(null, '/api/mj/'))).status).toBe(401);
    expect((await call(selfLoader, apiRequest(null, '/api/mj/self/'))).status).toBe(401);
    const forbidden = await json(await call(allLoader, apiRequest(plain, '/api/mj/')));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.success).toBe(false);
  });

  it("a user sees only their own tasks, without the channel, even when asking for another's", async () => {
    const alice = await makeUser();
    const bob = await makeUser();
    await seedTask(alice.user, { mjId: 'alice-1' });
    await seedTask(bob.user, { mjId: 'bob-1' });
    const mine = await json(await call(selfLoader, apiRequest(alice, '/api/mj/self/?p=1&page_size=10')));
    expect(mine.body.success).toBe(true);
    expect(mine.body.data.total).toBe(1);
    expect(mine.body.data.page).toBe(1);
    expect(mine.body.data.page_size).toBe(10);
    const [task] = mine.body.data.items;
    expect(task).toMatchObject({
      mj_id: 'alice-1',
      user_id: alice.user.id,
      action: 'IMAGINE',
      code: 1,
      status: 'IN_PROGRESS',
      progress: '45%',
      prompt: 'a cat',
      prompt_en: 'a cat',
      image_url: 'https://cdn.example/cat.png',
      channel_id: 0,
      quota: 50_000,
    });
    expect(typeof task.submit_time).toBe('number');
    const other = await json(
      await call(selfLoader, apiRequest(alice, '/api/mj/self/?mj_id=bob-1&channel_id=7')),
    );
    expect(other.body.data.items).toEqual([]);
    expect(other.body.data.total).toBe(0);
  });

  it('the admin list covers every user and filters by channel, task id and the submit-time window (ms)', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser();
    const t0 = Date.now() - 10 * 86_400_000;
    await seedTask(alice.user, { mjId: 'a', channelId: 7, submitTime: t0 });
    await seedTask(alice.user, { mjId: 'b', channelId: 8, submitTime: t0 + 1000 });
    await seedTask(admin.user, { mjId: 'c', channelId: 8, submitTime: t0 + 2000 });
    const list = async (qs: string) =>
      (await json(await call(allLoader, apiRequest(admin, `/api/mj/?${qs}`)))).body.data.items.map(
        (i: { mj_id: string }) => i.mj_id,
      );
    expect(await list('')).toEqual(['c', 'b', 'a']);
    expect(await list('channel_id=8')).toEqual(['c', 'b']);
    expect(await list('mj_id=a')).toEqual(['a']);
    expect(await list(`start_timestamp=${t0 + 500}&end_timestamp=${t0 + 1500}`)).toEqual(['b']);
    expect(await list('p=2&page_size=2')).toEqual(['a']);
    const full = await json(await call(allLoader, apiRequest(admin, '/api/mj/?channel_id=7')));
    expect(full.body.data.items[0].channel_id).toBe(7);
  });

  it('rewrites the image through the gateway with MjForwardUrlEnabled', async () => {
    const alice = await makeUser();
    await seedTask(alice.user, { mjId: 'fw-1' });
    optionValues.MjForwardUrlEnabled = true;
    const res = await json(await call(selfLoader, apiRequest(alice, '/api/mj/self/')));
    expect(res.body.data.items[0].image_url).toBe('https://gw.example/mj/image/fw-1');
  });

  it('bad parameters answer success:false, never a 5xx', async () => {
    const admin = await makeUser({ role: Role.Admin });
    for (const qs of [
      'channel_id=abc',
      'start_timestamp=-5',
      'end_timestamp=1e99',
      `mj_id=${'x'.repeat(200)}`,
    ]) {
      const res = await json(await call(allLoader, apiRequest(admin, `/api/mj/?${qs}`)));
      expect(res.status, qs).toBeLessThan(500);
      expect(res.body.success, qs).toBe(false);
      expect(res.body.message, qs).not.toBe('');
    }
    // p and page_size fall back like the other lists
    const ok = await json(await call(allLoader, apiRequest(admin, '/api/mj/?p=x&page_size=9999')));
    expect(ok.body.success).toBe(true);
    expect(ok.body.data.page).toBe(1);
  });
});

describe('/midjourney page loader', () => {
  it('defaults to the last 30 days to one hour ahead and shows a user only their own tasks', async () => {
    const alice = await makeUser();
    const bob = await makeUser();
    await seedTask(alice.user, { mjId: 'recent' });
    await seedTask(alice.user, { mjId: 'old', submitTime: Date.now() - 40 * 86_400_000 });
    await seedTask(bob.user, { mjId: 'bobs' });
    const headers = { Cookie: `sy_session=${alice.token}`, 'Accept-Language': 'en' };
    const r = payload(await page(new Request('http://localhost/midjourney?channel_id=7', { headers })));
    expect(r.admin).toBe(false);
    expect(r.notifyOff).toBe(false);
    expect(r.result.items.map((i: { mj_id: string }) => i.mj_id)).toEqual(['recent']);
    expect(r.filters.channel_id).toBe('');
    expect(r.filters.start).not.toBe('');
    // an empty start clears the lower bound
    const all = payload(await page(new Request('http://localhost/midjourney?start=&end=', { headers })));
    expect(all.result.items.map((i: { mj_id: string }) => i.mj_id)).toEqual(['old', 'recent']);
  });

  it('admin: every task, the channel filter and the notice while the callback is off', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser();
    await seedTask(alice.user, { mjId: 'x', channelId: 3 });
    await seedTask(admin.user, { mjId: 'y', channelId: 4 });
    const headers = { Cookie: `sy_session=${admin.token}`, 'Accept-Language': 'en' };
    const r = payload(await page(new Request('http://localhost/midjourney?channel_id=3', { headers })));
    expect(r.admin).toBe(true);
    expect(r.notifyOff).toBe(true);
    expect(r.result.items.map((i: { mj_id: string }) => i.mj_id)).toEqual(['x']);
    optionValues.MjNotifyEnabled = true;
    const on = payload(await page(new Request('http://localhost/midjourney', { headers })));
    expect(on.notifyOff).toBe(false);
    expect(on.result.total).toBe(2);
  });

  it('a bad time or channel is a 400, not a 5xx; signed out redirects to /login', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const headers = { Cookie: `sy_session=${admin.token}`, 'Accept-Language': 'en' };
    expect(
      statusOf(await page(new Request('http://localhost/midjourney?start=yesterday', { headers }))),
    ).toBe(400);
    expect(statusOf(await page(new Request('http://localhost/midjourney?channel_id=zz', { headers })))).toBe(
      400,
    );
    const anon = await page(new Request('http://localhost/midjourney'));
    expect(statusOf(anon)).toBe(302);
  });
});
