/**
 * Suno through the relay (issue 17, ADR 029), against the Suno-API fake on loopback, real PostgreSQL, Redis (two
 * relays sharing it) and the console's Billing over gRPC: the fixed price charged on accepted submits only,
 * polling to completion, refunds applied exactly once (also with two relays polling at once), the timeout rule,
 * and fetch by id and by ids showing only the caller's tasks. Polling is driven by hand
 * (RELAY_TASK_POLL_INTERVAL_MS=0) so the figures are exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSuno, startFakeSuno } from '../fakes/suno.ts';
import {
  drained,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

const QUOTA = 10_000_000;
/** suno_music $0.1 and suno_lyrics $0.01 (new-api's default ModelPrice) at 500,000 quota per USD, ratio 1. */
const MUSIC = 50_000;
const LYRICS = 5_000;

let fake: FakeSuno;
let stack: Stack;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  fake = await startFakeSuno({ durationMs: 300 });
  stack = await startStack({
    suffix: 'suno',
    redis: true,
    relays: 2,
    env: { RELAY_TASK_POLL_INTERVAL_MS: '0', RELAY_TASK_TIMEOUT_MS: '1500' },
  });
  await setOptions(stack, { RetryTimes: '0' });
  await seedChannel(stack, {
    type: 36,
    baseUrl: fake.url,
    key: fake.secret,
    models: ['suno_music', 'suno_lyrics'],
  });
  await setOptions(stack, {});
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
});

async function account(quota = QUOTA) {
  const user = await seedUser(stack, { quota });
  const token = await seedToken(stack, user.id, { remainQuota: quota });
  return { user, token };
}

const bearer = (key: string) => ({ authorization: `Bearer sk-${key}` });

async function post(path: string, body: unknown, headers: Record<string, string>, relay = 0) {
  const res = await fetch(`${stack.relays[relay]!.httpUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function get(path: string, headers: Record<string, string>) {
  const res = await fetch(`${stack.relays[0]!.httpUrl}${path}`, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function balances(userId: number, tokenId: number) {
  await drained(stack);
  const [u] = await stack.sql<{ quota: string; used_quota: string }>(
    'select quota, used_quota from users where id = ?',
    [userId],
  );
  const [t] = await stack.sql<{ remain_quota: string; used_quota: string }>(
    'select remain_quota, used_quota from tokens where id = ?',
    [tokenId],
  );
  return {
    user: Number(u?.quota),
    userUsed: Number(u?.used_quota),
    token: Number(t?.remain_quota),
    tokenUsed: Number(t?.used_quota),
  };
}

async function row(taskId: string) {
  const [r] = await stack.sql<Record<string, unknown>>(
    `select * from tasks where platform = 'suno' and task_id = ?`,
    [taskId],
  );
  return r;
}

async function pollUntil(taskId: string, statuses: string[], timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await stack.relays[0]!.pipeline!.sunoPoller.pollOnce();
    const r = await row(taskId);
    if (r && statuses.includes(String(r.status))) return r;
    if (Date.now() > deadline) throw new Error(`task ${taskId} stayed ${String(r?.status)}`);
    await sleep(100);
  }
}

describe('Suno relay', () => {
  it('a music task is charged its fixed price once and completes; fetch shows its progress and clips', async () => {
    const { user, token } = await account();
    const submit = await post(
      '/suno/submit/music',
      { prompt: 'a song about foxes', tags: 'pop', mv: 'chirp-v3-5', title: 'Foxes' },
      bearer(token.key),
    );
    expect(submit.status).toBe(200);
    expect(submit.body).toMatchObject({ code: 'success', message: '' });
    const taskId = String(submit.body.data);
    expect(fake.tasks.has(taskId)).toBe(true);
    // The upstream got the body and the channel's key.
    expect(fake.requests.find((r) => r.path === '/suno/submit/music')?.body).toMatchObject({ tags: 'pop' });

    const fresh = await get(`/suno/fetch/${taskId}`, bearer(token.key));
    expect(fresh.body).toMatchObject({
      code: 'success',
      data: { task_id: taskId, action: 'MUSIC', status: 'NOT_START', progress: '0%' },
    });

    const done = await pollUntil(taskId, ['SUCCESS']);
    expect(done).toMatchObject({ progress: '100%', action: 'MUSIC', quota: String(MUSIC), refund: 0 });
    const fetched = await get(`/suno/fetch/${taskId}`, bearer(token.key));
    const data = fetched.body.data as Record<string, unknown>;
    expect(data.status).toBe('SUCCESS');
    expect(Number(data.finish_time)).toBeGreaterThan(0);
    expect(data.data).toEqual([
      expect.objectContaining({ audio_url: `https://cdn.example/${taskId}-1.mp3` }),
      expect.objectContaining({ audio_url: `https://cdn.example/${taskId}-2.mp3` }),
    ]);

    // More polls change nothing: charged exactly once.
    await stack.relays[1]!.pipeline!.sunoPoller.pollOnce();
    const after = await balances(user.id, token.id);
    expect(after).toEqual({ user: QUOTA - MUSIC, userUsed: MUSIC, token: QUOTA - MUSIC, tokenUsed: MUSIC });
    const logs = await stack.sql<{ quota: string; model_name: string; type: number }>(
      'select quota, model_name, type from logs where user_id = ? order by id',
      [user.id],
    );
    expect(logs).toEqual([{ quota: String(MUSIC), model_name: 'suno_music', type: 2 }]);
  });

  it('a lyrics task is charged the lyrics price', async () => {
    const { user, token } = await account();
    const submit = await post('/suno/submit/lyrics', { prompt: 'rain' }, bearer(token.key), 1);
    expect(submit.body.code).toBe('success');
    await pollUntil(String(submit.body.data), ['SUCCESS']);
    const after = await balances(user.id, token.id);
    expect(after.user).toBe(QUOTA - LYRICS);
    expect(after.token).toBe(QUOTA - LYRICS);
  });

  it('a refused submit costs nothing and records no task', async () => {
    const { user, token } = await account();
    fake.refuseNext({ status: 400, code: 'prompt_banned', message: 'the prompt is not allowed' });
    const submit = await post('/suno/submit/music', { prompt: 'forbidden' }, bearer(token.key));
    expect(submit.status).toBe(400);
    expect(submit.body).toMatchObject({ code: 'prompt_banned', message: 'the prompt is not allowed' });
    const after = await balances(user.id, token.id);
    expect(after).toEqual({ user: QUOTA, userUsed: 0, token: QUOTA, tokenUsed: 0 });
    const rows = await stack.sql('select id from tasks where user_id = ?', [user.id]);
    expect(rows).toHaveLength(0);
    // Bad input is refused before the upstream, in the task envelope.
    const noPrompt = await post('/suno/submit/music', {}, bearer(token.key));
    expect(noPrompt.status).toBe(400);
    expect(noPrompt.body).toMatchObject({ code: 'invalid_request', data: null });
    const badAction = await post('/suno/submit/video', { prompt: 'x' }, bearer(token.key));
    expect(badAction.status).toBe(400);
    const notJson = await post('/suno/submit/music', '{', bearer(token.key));
    expect(notJson.status).toBe(400);
    // An unknown path under /suno answers in the same envelope.
    const unknown = await get('/suno/nothing', bearer(token.key));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ data: null });
    expect(typeof unknown.body.message).toBe('string');
    const noKey = await post('/suno/submit/music', { prompt: 'x' }, {});
    expect(noKey.status).toBe(401);
    expect(noKey.body.data).toBeNull();
    // Not enough quota: refused before the upstream is asked.
    const poor = await account(MUSIC - 1);
    const before = fake.requests.length;
    const broke = await post('/suno/submit/music', { prompt: 'x' }, bearer(poor.token.key));
    expect(broke.status).toBeGreaterThanOrEqual(400);
    expect(broke.status).toBeLessThan(500);
    expect(fake.requests.length).toBe(before);
  });

  it('a failed task is refunded exactly once to user and token, with two relays polling at once', async () => {
    const { user, token } = await account();
    const submit = await post('/suno/submit/music', { prompt: 'a cat' }, bearer(token.key));
    const taskId = String(submit.body.data);
    fake.fail(taskId, 'content policy');
    const [a, b] = stack.relays.map((r) => r.pipeline!.sunoPoller);
    const results = await Promise.all([a!.pollOnce(), b!.pollOnce(), a!.pollOnce(), b!.pollOnce()]);
    // One poll finished it (a conditional update), one refund applied.
    expect(results.reduce((n, r) => n + r.finished, 0)).toBe(1);
    expect(results.reduce((n, r) => n + r.refunded, 0)).toBe(1);

    const r = await row(taskId);
    expect(r).toMatchObject({
      status: 'FAILURE',
      fail_reason: 'content policy',
      refund: 2,
      progress: '100%',
    });
    const after = await balances(user.id, token.id);
    expect(after).toEqual({ user: QUOTA, userUsed: MUSIC, token: QUOTA, tokenUsed: 0 });
    const system = await stack.sql<{ quota: string; content: string }>(
      'select quota, content from logs where user_id = ? and type = 4',
      [user.id],
    );
    expect(system).toHaveLength(1);
    expect(Number(system[0]!.quota)).toBe(MUSIC);
    expect(system[0]!.content).toContain('content policy');

    // Reported again (a relay that died before marking it done): a duplicate at Billing, nothing changes.
    await stack.sql(`update tasks set refund = 1 where task_id = ?`, [taskId]);
    expect(await a!.refundDue()).toBe(0);
    expect(await balances(user.id, token.id)).toEqual(after);
    const ledger = await stack.sql('select request_id from usage_ledger where request_id = ?', [
      `suno-refund:${String(r!.id)}`,
    ]);
    expect(ledger).toHaveLength(1);
  });

  it('a task whose upstream lost it fails after the timeout and is refunded', async () => {
    const { user, token } = await account();
    const submit = await post('/suno/submit/music', { prompt: 'lost' }, bearer(token.key));
    const taskId = String(submit.body.data);
    fake.forget(taskId);
    await stack.relays[0]!.pipeline!.sunoPoller.pollOnce();
    expect((await row(taskId))!.status).toBe('NOT_START');
    // Submit times are in seconds: move it back past the timeout rather than wait.
    await stack.sql('update tasks set submit_time = submit_time - 5 where task_id = ?', [taskId]);
    const failed = await pollUntil(taskId, ['FAILURE']);
    expect(String(failed.fail_reason)).toBe('timed out after 2 s: the upstream no longer knows the task');
    const after = await balances(user.id, token.id);
    expect(after.user).toBe(QUOTA);
    expect(after.token).toBe(QUOTA);
  });

  it('fetch shows only the caller’s tasks', async () => {
    const alice = await account();
    const bob = await account();
    const a = String(
      (await post('/suno/submit/music', { prompt: 'alice' }, bearer(alice.token.key))).body.data,
    );
    const b = String((await post('/suno/submit/lyrics', { prompt: 'bob' }, bearer(bob.token.key))).body.data);

    const mine = await post('/suno/fetch', { ids: [a, b, 'nope'] }, bearer(alice.token.key));
    expect(mine.status).toBe(200);
    expect(mine.body.code).toBe('success');
    expect((mine.body.data as { task_id: string }[]).map((t) => t.task_id)).toEqual([a]);
    const theirs = await post('/suno/fetch', { ids: [a, b] }, bearer(bob.token.key));
    expect((theirs.body.data as { task_id: string }[]).map((t) => t.task_id)).toEqual([b]);

    const foreign = await get(`/suno/fetch/${b}`, bearer(alice.token.key));
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: 'task_not_exist', data: null });
    const own = await get(`/suno/fetch/${b}`, bearer(bob.token.key));
    expect(own.body).toMatchObject({ data: { task_id: b, action: 'LYRICS' } });

    const badIds = await post('/suno/fetch', { ids: 'x' }, bearer(bob.token.key));
    expect(badIds.status).toBe(400);
    // A continuation of another user's task is refused, uncharged.
    const cont = await post('/suno/submit/music', { prompt: 'more', task_id: a }, bearer(bob.token.key));
    expect(cont.status).toBe(400);
    expect(cont.body.code).toBe('task_not_exist');
  });

  it('a continuation goes to the channel of the original task and is charged once', async () => {
    const { user, token } = await account();
    const first = String(
      (await post('/suno/submit/music', { prompt: 'verse' }, bearer(token.key))).body.data,
    );
    expect(fake.tasks.has(first)).toBe(true);
    // A second Suno channel now shares the model; continuations must still go to the first.
    const second = await startFakeSuno({ durationMs: 300, secret: 'second-secret' });
    try {
      await seedChannel(stack, {
        type: 36,
        baseUrl: second.url,
        key: second.secret,
        models: ['suno_music', 'suno_lyrics'],
      });
      await setOptions(stack, {});
      for (let i = 0; i < 4; i++) {
        const cont = await post(
          '/suno/submit/music',
          { prompt: 'chorus', task_id: first, continue_clip_id: `${first}-clip1`, continue_at: 30 },
          bearer(token.key),
        );
        expect(cont.body.code).toBe('success');
        expect(fake.tasks.has(String(cont.body.data))).toBe(true);
      }
      expect(second.requests.filter((r) => r.path.startsWith('/suno/submit'))).toHaveLength(0);
      const after = await balances(user.id, token.id);
      expect(after.user).toBe(QUOTA - 5 * MUSIC);
      expect(after.token).toBe(QUOTA - 5 * MUSIC);
    } finally {
      await stack.sql('delete from channels where base_url = ?', [second.url]);
      await stack.sql('delete from abilities where channel_id not in (select id from channels)');
      await setOptions(stack, {});
      await second.close();
    }
  });
});

describe('Suno relay, in-process store and scheduled polling', () => {
  let solo: Stack;
  let up: FakeSuno;

  beforeAll(async () => {
    up = await startFakeSuno({ durationMs: 200, secret: 'solo' });
    // No Redis: the in-process store and the in-process leader lease run the suno-poll job.
    solo = await startStack({ suffix: 'sunosolo', relays: 1, env: { RELAY_TASK_POLL_INTERVAL_MS: '100' } });
    await setOptions(solo, { RetryTimes: '0' });
    await seedChannel(solo, { type: 36, baseUrl: up.url, key: up.secret, models: ['suno_music'] });
    await setOptions(solo, {});
  }, 60_000);

  afterAll(async () => {
    await solo?.close();
    await up?.close();
  });

  async function until(check: () => Promise<boolean>, timeoutMs = 5_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await sleep(50);
    }
  }

  it('the scheduler polls without being asked: one task succeeds, a failed one is refunded once', async () => {
    const user = await seedUser(solo, { quota: QUOTA });
    const token = await seedToken(solo, user.id, { remainQuota: QUOTA });
    const submit = (prompt: string) =>
      fetch(`${solo.relays[0]!.httpUrl}/suno/submit/music`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer sk-${token.key}` },
        body: JSON.stringify({ prompt }),
      }).then((r) => r.json() as Promise<Record<string, unknown>>);
    const ok = await submit('a lake');
    const bad = await submit('a lake --fail');
    expect([ok.code, bad.code]).toEqual(['success', 'success']);
    const state = async (id: unknown) =>
      (
        await solo.sql<{ status: string; refund: number }>(
          'select status, refund from tasks where task_id = ?',
          [String(id)],
        )
      )[0]!;
    await until(async () => (await state(ok.data)).status === 'SUCCESS');
    await until(async () => (await state(bad.data)).refund === 2);
    await drained(solo);
    const [u] = await solo.sql<{ quota: string }>('select quota from users where id = ?', [user.id]);
    const [t] = await solo.sql<{ remain_quota: string }>('select remain_quota from tokens where id = ?', [
      token.id,
    ]);
    expect(Number(u!.quota)).toBe(QUOTA - MUSIC);
    expect(Number(t!.remain_quota)).toBe(QUOTA - MUSIC);
    const refunds = await solo.sql('select request_id from usage_ledger where request_id like ?', [
      'suno-refund:%',
    ]);
    expect(refunds).toHaveLength(1);
  });
});
