/**
 * Midjourney through the relay (issue 17, ADR 029), against the midjourney-proxy fake on loopback, real
 * PostgreSQL, Redis (two relays sharing it) and the console's Billing over gRPC: fixed-price charges on accepted
 * submits only, follow-ups on the owning channel, polling, refunds applied exactly once (also with two relays
 * polling at once), the upstream-gone timeout, the fetch and list routes, the mode prefixes, the key headers,
 * per-user isolation and the upstream's callbacks (heard only with the task's secret, believed only after a fetch). Polling is driven by hand (RELAY_TASK_POLL_INTERVAL_MS=0) so the figures are exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMidjourney, startFakeMidjourney } from '../fakes/midjourney.ts';
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
/** swap_face $0.05 (new-api's default ModelPrice). */
const SWAP_FACE = 25_000;
/** mj_imagine $0.1 and mj_upscale $0.05 (new-api's default ModelPrice) at 500,000 quota per USD, group ratio 1. */
const IMAGINE = 50_000;
const UPSCALE = 25_000;
const MODELS = [
  'mj_imagine',
  'mj_upscale',
  'mj_variation',
  'mj_reroll',
  'mj_describe',
  'mj_blend',
  'mj_shorten',
  'mj_modal',
  'mj_upload',
  'swap_face',
];

let fake: FakeMidjourney;
let other: FakeMidjourney;
let stack: Stack;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  fake = await startFakeMidjourney({ durationMs: 300 });
  other = await startFakeMidjourney({ durationMs: 300, secret: 'other-secret' });
  stack = await startStack({
    suffix: 'mj',
    redis: true,
    relays: 2,
    env: { RELAY_TASK_POLL_INTERVAL_MS: '0', RELAY_TASK_TIMEOUT_MS: '1500' },
  });
  await setOptions(stack, {
    RetryTimes: '0',
    MjNotifyEnabled: 'false',
    MjModeClearEnabled: 'true',
    MjActionCheckSuccessEnabled: 'true',
    // The gateway's public address routes /mj to the relay: the callback URLs given upstream point at relay 0.
    ServerAddress: stack.relays[0]!.httpUrl,
  });
  // Two drawing channels: a follow-up must go to the one that owns its original task.
  await seedChannel(stack, { type: 2, baseUrl: fake.url, key: fake.secret, models: MODELS, weight: 1 });
  await seedChannel(stack, { type: 5, baseUrl: other.url, key: other.secret, models: MODELS, weight: 1 });
  await setOptions(stack, {});
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
  await other?.close();
});

async function account(quota = QUOTA) {
  const user = await seedUser(stack, { quota });
  const token = await seedToken(stack, user.id, { remainQuota: quota });
  return { user, token };
}

function relayUrl(i = 0): string {
  return stack.relays[i]!.httpUrl;
}

async function post(path: string, body: unknown, headers: Record<string, string>, relay = 0) {
  const res = await fetch(`${relayUrl(relay)}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function get(path: string, headers: Record<string, string>) {
  const res = await fetch(`${relayUrl()}${path}`, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const bearer = (key: string) => ({ authorization: `Bearer sk-${key}` });

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

async function pollUntil(mjId: string, statuses: string[], timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await stack.relays[0]!.pipeline!.midjourneyPoller.pollOnce();
    const [row] = await stack.sql<Record<string, unknown>>('select * from midjourney_tasks where mj_id = ?', [
      mjId,
    ]);
    if (row && statuses.includes(String(row.status))) return row;
    if (Date.now() > deadline) throw new Error(`task ${mjId} stayed ${String(row?.status)}`);
    await sleep(100);
  }
}

describe('Midjourney relay', () => {
  it('imagine then upscale with an sk- token: charged exactly the two fixed prices, the upscale on the same channel', async () => {
    const { user, token } = await account();
    const imagine = await post('/mj/submit/imagine', { prompt: 'a red fox' }, bearer(token.key));
    expect(imagine.status).toBe(200);
    expect(imagine.body).toMatchObject({ code: 1, description: '提交成功' });
    const mjId = String(imagine.body.result);
    const owner = fake.tasks.has(mjId) ? fake : other;
    const notOwner = owner === fake ? other : fake;
    expect(owner.tasks.has(mjId)).toBe(true);

    // In progress, then done: the poller writes progress, image and buttons.
    const done = await pollUntil(mjId, ['SUCCESS']);
    expect(done).toMatchObject({
      progress: '100%',
      action: 'IMAGINE',
      prompt: 'a red fox',
      quota: String(IMAGINE),
    });
    expect(String(done.image_url)).toBe(`${owner.url}/attachments/${mjId}.png`);
    const buttons = JSON.parse(String(done.buttons)) as { customId: string }[];
    expect(buttons.map((b) => b.customId)).toContain(`MJ::JOB::upsample::1::${mjId}`);

    const before = notOwner.submits.length;
    const upscale = await post(
      '/mj/submit/action',
      { taskId: mjId, customId: `MJ::JOB::upsample::1::${mjId}` },
      bearer(token.key),
    );
    expect(upscale.body).toMatchObject({ code: 1 });
    expect(owner.tasks.get(String(upscale.body.result))?.action).toBe('UPSCALE');
    expect(notOwner.submits.length).toBe(before);

    const b = await balances(user.id, token.id);
    expect(b).toEqual({
      user: QUOTA - IMAGINE - UPSCALE,
      userUsed: IMAGINE + UPSCALE,
      token: QUOTA - IMAGINE - UPSCALE,
      tokenUsed: IMAGINE + UPSCALE,
    });
    const logs = await stack.sql<{ model_name: string; quota: string; type: number; channel_id: number }>(
      'select model_name, quota, type, channel_id from logs where user_id = ? order by id',
      [user.id],
    );
    expect(logs.map((l) => [l.model_name, Number(l.quota), l.type])).toEqual([
      ['mj_imagine', IMAGINE, 2],
      ['mj_upscale', UPSCALE, 2],
    ]);
    expect(logs[0]!.channel_id).toBe(logs[1]!.channel_id);
    const rows = await stack.sql<{ action: string; quota: string; token_id: number; channel_id: number }>(
      'select action, quota, token_id, channel_id from midjourney_tasks where user_id = ? order by id',
      [user.id],
    );
    expect(rows.map((r) => [r.action, Number(r.quota), r.token_id])).toEqual([
      ['IMAGINE', IMAGINE, token.id],
      ['UPSCALE', UPSCALE, token.id],
    ]);
    expect(rows[1]!.channel_id).toBe(rows[0]!.channel_id);
  });

  it('a refused submit charges nothing and records no task; a follow-up of an unfinished task is refused', async () => {
    const { user, token } = await account();
    fake.refuseNext({ code: 24, description: '可能包含敏感词' });
    other.refuseNext({ code: 24, description: '可能包含敏感词' });
    const refused = await post('/mj/submit/imagine', { prompt: 'forbidden' }, bearer(token.key));
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ code: 24, description: '可能包含敏感词', result: null });
    fake.refuseNext({ code: 30, description: 'queue full' });
    other.refuseNext({ code: 30, description: 'queue full' });
    const full = await post('/mj/submit/imagine', { prompt: 'later' }, bearer(token.key));
    expect(full.status).toBe(429);
    // One refusal per fake was armed; only the channel picked used its own.
    fake.refuseNext(null);
    other.refuseNext(null);

    // An unknown task id, and (MjActionCheckSuccessEnabled) a task not finished yet: refused before any upstream.
    const unknown = await post(
      '/mj/submit/action',
      { taskId: 'nope', customId: 'MJ::JOB::upsample::1::nope' },
      bearer(token.key),
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 4, description: 'task_not_found' });
    const fresh = await post('/mj/submit/imagine', { prompt: 'slow' }, bearer(token.key));
    const early = await post(
      '/mj/submit/action',
      { taskId: fresh.body.result, customId: `MJ::JOB::upsample::1::${String(fresh.body.result)}` },
      bearer(token.key),
    );
    expect(early.body).toMatchObject({ code: 4, description: 'task_status_not_success' });

    const b = await balances(user.id, token.id);
    expect(b.user).toBe(QUOTA - IMAGINE);
    expect(b.token).toBe(QUOTA - IMAGINE);
    const rows = await stack.sql('select id from midjourney_tasks where user_id = ?', [user.id]);
    expect(rows).toHaveLength(1);
    // The holds of the refused submits were released: the cached spendable balance is exact.
    expect(await stack.relays[0]!.store.balance({ kind: 'token', id: token.id })).toBe(QUOTA - IMAGINE);
  });

  it('a task the upstream fails is refunded exactly once to user and token, with two relays polling at once', async () => {
    const { user, token } = await account();
    const submit = await post('/mj/submit/imagine', { prompt: 'a cat' }, bearer(token.key));
    expect(submit.body.code).toBe(1);
    const mjId = String(submit.body.result);
    (fake.tasks.has(mjId) ? fake : other).fail(mjId, 'Job action restricted');
    const [a, b] = stack.relays.map((r) => r.pipeline!.midjourneyPoller);
    const results = await Promise.all([a!.pollOnce(), b!.pollOnce(), a!.pollOnce(), b!.pollOnce()]);
    expect(results.reduce((n, r) => n + r.refunded, 0)).toBe(1);

    const [row] = await stack.sql<Record<string, unknown>>('select * from midjourney_tasks where mj_id = ?', [
      mjId,
    ]);
    expect(row).toMatchObject({ status: 'FAILURE', fail_reason: 'Job action restricted', refund: 2 });
    const after = await balances(user.id, token.id);
    expect(after.user).toBe(QUOTA);
    expect(after.token).toBe(QUOTA);
    expect(after.tokenUsed).toBe(0);
    // The charge's consume row stays (used_quota = sum of consume logs); the refund is one system row.
    expect(after.userUsed).toBe(IMAGINE);
    const system = await stack.sql<{ quota: string; content: string }>(
      'select quota, content from logs where user_id = ? and type = 4',
      [user.id],
    );
    expect(system).toHaveLength(1);
    expect(Number(system[0]!.quota)).toBe(IMAGINE);
    expect(system[0]!.content).toContain('Job action restricted');

    // A refund reported again (a relay that died before marking it done) is a duplicate at Billing.
    await stack.sql('update midjourney_tasks set refund = 1 where mj_id = ?', [mjId]);
    expect(await a!.refundDue()).toBe(0);
    const again = await balances(user.id, token.id);
    expect(again.user).toBe(QUOTA);
    expect(again.token).toBe(QUOTA);
    const ledger = await stack.sql('select request_id from usage_ledger where request_id = ?', [
      `mj-refund:${String(row!.id)}`,
    ]);
    expect(ledger).toHaveLength(1);
    // The relay sees the refund at once: its cached balance was dropped and reloads the committed quota.
    const next = await post('/mj/submit/imagine', { prompt: 'again' }, bearer(token.key));
    expect(next.body.code).toBe(1);
  });

  it('a task whose upstream is gone fails after the timeout and is refunded', async () => {
    const { user, token } = await account();
    const submit = await post('/mj/submit/imagine', { prompt: 'lost' }, bearer(token.key));
    const mjId = String(submit.body.result);
    (fake.tasks.has(mjId) ? fake : other).forget(mjId);
    await stack.relays[0]!.pipeline!.midjourneyPoller.pollOnce();
    const [still] = await stack.sql<{ status: string }>(
      'select status from midjourney_tasks where mj_id = ?',
      [mjId],
    );
    expect(still!.status).toBe('');
    await sleep(1_600);
    const row = await pollUntil(mjId, ['FAILURE']);
    expect(String(row.fail_reason)).toContain('the upstream no longer knows the task');
    // A task the upstream keeps running past the timeout fails too.
    const stuck = await post('/mj/submit/imagine', { prompt: 'stuck' }, bearer(token.key));
    const stuckId = String(stuck.body.result);
    await stack.sql('update midjourney_tasks set submit_time = submit_time - 10000 where mj_id = ?', [
      stuckId,
    ]);
    const stuckRow = await pollUntil(stuckId, ['FAILURE']);
    expect(String(stuckRow.fail_reason)).toMatch(
      /^timed out after 2 s: still (SUBMITTED|IN_PROGRESS) upstream$/,
    );
    const b = await balances(user.id, token.id);
    expect(b.user).toBe(QUOTA);
    expect(b.token).toBe(QUOTA);
  });

  it('fetch and list-by-condition read the caller’s own tasks only', async () => {
    const { token } = await account();
    const stranger = await account();
    const submit = await post('/mj/submit/imagine', { prompt: 'a boat' }, bearer(token.key));
    const mjId = String(submit.body.result);
    await pollUntil(mjId, ['SUCCESS']);

    const one = await get(`/mj/task/${mjId}/fetch`, bearer(token.key));
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      id: mjId,
      action: 'IMAGINE',
      status: 'SUCCESS',
      progress: '100%',
      prompt: 'a boat',
    });
    expect(Array.isArray(one.body.buttons)).toBe(true);
    const list = await post('/mj/task/list-by-condition', { ids: [mjId, 'unknown'] }, bearer(token.key));
    expect(list.status).toBe(200);
    expect((list.body as unknown as { id: string }[]).map((t) => t.id)).toEqual([mjId]);

    const theirs = await get(`/mj/task/${mjId}/fetch`, bearer(stranger.token.key));
    expect(theirs.status).toBe(404);
    expect(theirs.body).toMatchObject({ code: 4, description: 'task_no_found' });
    const theirList = await post('/mj/task/list-by-condition', { ids: [mjId] }, bearer(stranger.token.key));
    expect(theirList.body).toEqual([]);
    // Nor can a stranger act on it.
    const act = await post(
      '/mj/submit/action',
      { taskId: mjId, customId: `MJ::JOB::upsample::1::${mjId}` },
      bearer(stranger.token.key),
    );
    expect(act.body).toMatchObject({ code: 4, description: 'task_not_found' });
  });

  it('keys by mj-api-secret (also behind "Bearer midjourney-proxy"); a missing or bad key gets 401', async () => {
    const { user, token } = await account();
    const bySecret = await post(
      '/mj/submit/imagine',
      { prompt: 'secret key' },
      { 'mj-api-secret': `sk-${token.key}` },
    );
    expect(bySecret.body.code).toBe(1);
    const proxyStyle = await post(
      '/mj/submit/imagine',
      { prompt: 'proxy style' },
      { authorization: 'Bearer midjourney-proxy', 'mj-api-secret': token.key },
    );
    expect(proxyStyle.body.code).toBe(1);
    const none = await post('/mj/submit/imagine', {}, {});
    expect(none.status).toBe(401);
    // Model limits apply to the action's model name.
    const limited = await seedToken(stack, user.id, { remainQuota: QUOTA, modelLimits: ['mj_imagine'] });
    const allowed = await post('/mj/submit/imagine', { prompt: 'limited' }, bearer(limited.key));
    expect(allowed.body.code).toBe(1);
    const blend = await post('/mj/submit/blend', { base64Array: [] }, bearer(limited.key));
    expect(blend.status).toBe(403);
    expect(blend.body).toMatchObject({ code: 'model_not_allowed' });
    const bad = await post('/mj/submit/imagine', { prompt: 'x' }, { 'mj-api-secret': 'sk-wrong' });
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ code: 'invalid_api_key' });
    const b = await balances(user.id, token.id);
    expect(b.user).toBe(QUOTA - 3 * IMAGINE);
  });

  it('mode prefixes: /mj-fast/mj/... is served, the prefix is not forwarded and MjModeClearEnabled strips --fast', async () => {
    const { token } = await account();
    const res = await post('/mj-relax/mj/submit/imagine', { prompt: 'a hill --fast' }, bearer(token.key));
    expect(res.body.code).toBe(1);
    const owner = fake.tasks.has(String(res.body.result)) ? fake : other;
    const sent = owner.submits.at(-1)!;
    expect(sent.path).toBe('/mj/submit/imagine');
    expect(sent.body.prompt).toBe('a hill');
    const fetched = await get(`/mj-fast/mj/task/${String(res.body.result)}/fetch`, bearer(token.key));
    expect(fetched.status).toBe(200);
    // Browser clients on any origin (ADR 015), the mode prefixes included.
    const preflight = await fetch(`${relayUrl()}/mj-turbo/mj/submit/imagine`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    expect([preflight.status, preflight.headers.get('access-control-allow-origin')]).toEqual([204, '*']);
  });

  it('bad input gets a 4xx in the Midjourney envelope; a token without quota is refused before the upstream', async () => {
    const { token } = await account();
    const noPrompt = await post('/mj/submit/imagine', {}, bearer(token.key));
    expect(noPrompt.status).toBe(400);
    expect(noPrompt.body).toMatchObject({ code: 4, description: 'prompt is required' });
    const badButton = await post(
      '/mj/submit/action',
      { taskId: '1', customId: 'MJ::nothing' },
      bearer(token.key),
    );
    expect(badButton.status).toBe(400);
    const unknownKind = await post('/mj/submit/nothing', { prompt: 'x' }, bearer(token.key));
    expect(unknownKind.status).toBe(404);
    const poor = await account(IMAGINE - 1);
    const submits = fake.submits.length + other.submits.length;
    const refused = await post('/mj/submit/imagine', { prompt: 'too poor' }, bearer(poor.token.key));
    expect(refused.status).toBe(403);
    expect(fake.submits.length + other.submits.length).toBe(submits);
  });

  it('MjNotifyEnabled, MjAccountFilterEnabled and MjActionCheckSuccessEnabled act on what is forwarded', async () => {
    const { token } = await account();
    const extras = { notifyHook: 'http://127.0.0.1:9/hook', accountFilter: { instanceId: 'a1' } };
    const lastSent = (result: unknown) =>
      (fake.tasks.has(String(result)) ? fake : other).submits.find((s) => s.answer.result === result)!.body;

    const off = await post('/mj/submit/imagine', { prompt: 'off', ...extras }, bearer(token.key));
    expect(lastSent(off.body.result)).not.toHaveProperty('notifyHook');
    expect(lastSent(off.body.result)).not.toHaveProperty('accountFilter');

    await setOptions(stack, {
      MjNotifyEnabled: 'true',
      MjAccountFilterEnabled: 'true',
      MjActionCheckSuccessEnabled: 'false',
    });
    try {
      const on = await post('/mj/submit/imagine', { prompt: 'on', ...extras }, bearer(token.key));
      // The client's notifyHook is never forwarded: the upstream gets the relay's own callback URL (ADR 036).
      expect(lastSent(on.body.result)).toMatchObject({ accountFilter: extras.accountFilter });
      expect(String(lastSent(on.body.result).notifyHook)).toMatch(
        new RegExp(`^${relayUrl()}/mj/notify/[A-Za-z0-9_-]{43}$`),
      );
      // Without the success check an unfinished task's button reaches the upstream.
      const early = await post(
        '/mj/submit/action',
        { taskId: on.body.result, customId: `MJ::JOB::variation::2::${String(on.body.result)}` },
        bearer(token.key),
      );
      expect(early.body.code).toBe(1);
      const [row] = await stack.sql<{ action: string; quota: string }>(
        'select action, quota from midjourney_tasks where mj_id = ?',
        [String(early.body.result)],
      );
      expect(row).toMatchObject({ action: 'VARIATION', quota: String(IMAGINE) });
    } finally {
      await setOptions(stack, {
        MjNotifyEnabled: 'false',
        MjAccountFilterEnabled: 'false',
        MjActionCheckSuccessEnabled: 'true',
      });
    }
  });

  it('codes 21 and 22 are charged and answered as 1; a 21 of a finished task is stored finished', async () => {
    const { user, token } = await account();
    for (const f of [fake, other]) f.acceptNext(22, { numberOfQueues: 1 });
    const queued = await post('/mj/submit/imagine', { prompt: 'queued' }, bearer(token.key));
    expect(queued.body).toMatchObject({ code: 1, description: '排队中，前面还有1个任务' });
    for (const f of [fake, other])
      f.acceptNext(21, { status: 'SUCCESS', imageUrl: 'https://img.example/x.png' });
    const exists = await post('/mj/submit/imagine', { prompt: 'exists' }, bearer(token.key));
    expect(exists.body.code).toBe(1);
    // One answer per fake was armed; only the channel picked used its own.
    for (const f of [fake, other]) f.acceptNext(1);
    const [row] = await stack.sql<Record<string, unknown>>('select * from midjourney_tasks where mj_id = ?', [
      String(exists.body.result),
    ]);
    expect(row).toMatchObject({
      code: 21,
      status: 'SUCCESS',
      progress: '100%',
      image_url: 'https://img.example/x.png',
    });
    const b = await balances(user.id, token.id);
    expect(b.user).toBe(QUOTA - 2 * IMAGINE);
  });

  it('image-seed asks the owning channel; the image proxy and MjForwardUrlEnabled serve images through the gateway', async () => {
    const { token } = await account();
    const submit = await post('/mj/submit/imagine', { prompt: 'a seed' }, bearer(token.key));
    const mjId = String(submit.body.result);
    const seed = await get(`/mj/task/${mjId}/image-seed`, bearer(token.key));
    expect(seed.body).toMatchObject({ code: 1, result: `seed-${mjId}` });
    const stranger = await account();
    expect((await get(`/mj/task/${mjId}/image-seed`, bearer(stranger.token.key))).status).toBe(404);

    await pollUntil(mjId, ['SUCCESS']);
    await setOptions(stack, { MjForwardUrlEnabled: 'true', ServerAddress: 'https://gw.example/' });
    try {
      const one = await get(`/mj/task/${mjId}/fetch`, bearer(token.key));
      expect(one.body.imageUrl).toBe(`https://gw.example/mj/image/${mjId}`);
    } finally {
      await setOptions(stack, { MjForwardUrlEnabled: 'false', ServerAddress: relayUrl() });
    }
    const img = await fetch(`${relayUrl()}/mj/image/${mjId}`);
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/png');
    expect([...new Uint8Array(await img.arrayBuffer())]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect((await fetch(`${relayUrl()}/mj/image/unknown`)).status).toBe(404);
  });

  it('code 3 (no available account) auto-disables the channel and charges nothing', async () => {
    const third = await startFakeMidjourney({ secret: 'third' });
    try {
      const ch = await seedChannel(stack, {
        type: 2,
        baseUrl: third.url,
        key: third.secret,
        models: ['mj_describe'],
      });
      await setOptions(stack, { AutomaticDisableChannelEnabled: 'true' });
      const admin = await seedUser(stack, { quota: QUOTA, role: 100 });
      const key = (await seedToken(stack, admin.id, { remainQuota: QUOTA })).key;
      third.refuseNext({ code: 3, description: 'No available account instance' });
      const res = await post(
        '/mj/submit/describe',
        { base64: 'data:image/png;base64,AAAA' },
        bearer(`${key}-${ch.id}`),
      );
      expect(res.body).toMatchObject({ code: 3 });
      const [row] = await stack.sql<{ status: number; other_info: string }>(
        'select status, other_info from channels where id = ?',
        [ch.id],
      );
      expect(row!.status).toBe(3);
      expect(row!.other_info).toContain('No available account instance');
      const [u] = await stack.sql<{ quota: string }>('select quota from users where id = ?', [admin.id]);
      await drained(stack);
      expect(Number(u!.quota)).toBe(QUOTA);
    } finally {
      await setOptions(stack, { AutomaticDisableChannelEnabled: 'false' });
      await third.close();
    }
  });
});

describe('Midjourney relay, task callbacks (issue 23 item 5, ADR 036)', () => {
  const DURATION = 300;
  const owner = (mjId: string) => (fake.tasks.has(mjId) ? fake : other);

  async function row(mjId: string) {
    const [r] = await stack.sql<Record<string, unknown>>('select * from midjourney_tasks where mj_id = ?', [
      mjId,
    ]);
    return r!;
  }

  async function refundRows(userId: number) {
    return stack.sql<{ quota: string; content: string }>(
      'select quota, content from logs where user_id = ? and type = 4',
      [userId],
    );
  }

  /** The upstream's GET /mj/task/{id}/fetch requests so far for a task. */
  const upstreamFetches = (mjId: string) =>
    owner(mjId).requests.filter((r) => r.method === 'GET' && r.path === `/mj/task/${mjId}/fetch`).length;

  async function withNotify<T>(enabled: boolean, run: () => Promise<T>): Promise<T> {
    await setOptions(stack, { MjNotifyEnabled: String(enabled) });
    try {
      return await run();
    } finally {
      await setOptions(stack, { MjNotifyEnabled: 'false' });
    }
  }

  /** Submits an imagine; returns its upstream id and the callback URL the relay gave the upstream (if any). */
  async function imagine(key: string, prompt: string, extra: Record<string, unknown> = {}) {
    const res = await post('/mj/submit/imagine', { prompt, ...extra }, bearer(key));
    expect(res.body.code).toBe(1);
    const mjId = String(res.body.result);
    return { mjId, hook: owner(mjId).hookOf(mjId) };
  }

  /** POSTs to a callback URL (no key: the upstream calls it), optionally through another relay. */
  async function callback(hook: string, body: unknown, relay = 0) {
    const url = hook.replace(relayUrl(0), relayUrl(relay));
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it('the attack: a user who claims FAILURE at /mj/notify with their own key is refused, whatever MjNotifyEnabled says', async () => {
    for (const enabled of [false, true]) {
      const { user, token } = await account();
      const { mjId } = await withNotify(enabled, () => imagine(token.key, `finished ${enabled}`));
      await sleep(DURATION + 50); // the upstream has finished the work
      const claim = { id: mjId, status: 'FAILURE', progress: '40%', failReason: 'I want my quota back' };
      const refusals = [
        await post('/mj/notify', claim, bearer(token.key)),
        await post('/mj/notify', claim, { 'mj-api-secret': `sk-${token.key}` }),
        await post('/mj-fast/mj/notify', claim, bearer(token.key)),
        await post('/mj/notify', claim, {}),
      ];
      for (const r of refusals) {
        expect(r.status).toBe(401);
        expect(r.body).toMatchObject({ code: 4 });
        expect(String(r.body.description)).toContain('callback URL');
      }
      // A made-up secret with the user's key does no better.
      const guessed = await withNotify(enabled, () =>
        post(`/mj/notify/${'A'.repeat(43)}`, claim, bearer(token.key)),
      );
      expect(guessed.status).toBe(403);

      expect(await row(mjId)).toMatchObject({ status: '', refund: 0, fail_reason: '' });
      expect(await balances(user.id, token.id)).toMatchObject({
        user: QUOTA - IMAGINE,
        token: QUOTA - IMAGINE,
      });
      // The upstream's word decides: the task ends SUCCESS, charged, never refunded.
      await pollUntil(mjId, ['SUCCESS', 'FAILURE']);
      expect(await row(mjId)).toMatchObject({ status: 'SUCCESS', refund: 0 });
      expect(await balances(user.id, token.id)).toMatchObject({
        user: QUOTA - IMAGINE,
        token: QUOTA - IMAGINE,
      });
      expect(await refundRows(user.id)).toHaveLength(0);
    }
  });

  it('MjNotifyEnabled off: no callback URL goes upstream (not the client’s either) and every callback is refused unheard', async () => {
    const { user, token } = await account();
    // A task submitted while callbacks were on has a callback URL with its secret...
    const { mjId, hook } = await withNotify(true, () => imagine(token.key, 'then off'));
    expect(hook).toMatch(new RegExp(`^${relayUrl()}/mj/notify/[A-Za-z0-9_-]{43}$`));
    // ...the row keeps only the secret's SHA-256.
    const secret = hook!.split('/').pop()!;
    const stored = await row(mjId);
    expect(stored.notify_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.notify_hash).not.toContain(secret);
    const { createHash } = await import('node:crypto');
    expect(stored.notify_hash).toBe(createHash('sha256').update(secret).digest('hex'));

    // Off (the setting's default): nothing passes a notifyHook upstream, not even the client's own.
    const off = await imagine(token.key, 'off', { notifyHook: 'http://127.0.0.1:9/mine' });
    expect(off.hook).toBeUndefined();
    expect(owner(off.mjId).submits.find((s) => s.answer.result === off.mjId)!.body).not.toHaveProperty(
      'notifyHook',
    );
    expect((await row(off.mjId)).notify_hash).toBe('');

    // The right secret, while the upstream really failed the task: refused, and the upstream is not even asked.
    owner(mjId).fail(mjId, 'Job action restricted');
    const before = upstreamFetches(mjId);
    const refused = await callback(hook!, { id: mjId, status: 'FAILURE', failReason: 'x' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 4 });
    expect(String(refused.body.description)).toContain('MjNotifyEnabled');
    expect(upstreamFetches(mjId)).toBe(before);
    expect(await row(mjId)).toMatchObject({ status: '', refund: 0 });
    expect(await balances(user.id, token.id)).toMatchObject({ user: QUOTA - 2 * IMAGINE });
  });

  it('a callback with the right secret claiming FAILURE while the upstream says SUCCESS: the task ends SUCCESS, not refunded', async () => {
    await withNotify(true, async () => {
      const { user, token } = await account();
      const { mjId, hook } = await imagine(token.key, 'a true success');
      await sleep(DURATION + 50);
      const answer = await callback(hook!, {
        id: mjId,
        status: 'FAILURE',
        progress: '40%',
        failReason: 'claimed by the callback',
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ code: 1, result: mjId, properties: { status: 'SUCCESS' } });
      const r = await row(mjId);
      expect(r).toMatchObject({ status: 'SUCCESS', progress: '100%', refund: 0, fail_reason: '' });
      expect(String(r.image_url)).toBe(`${owner(mjId).url}/attachments/${mjId}.png`);
      await owner(mjId).delivered();
      expect(await balances(user.id, token.id)).toMatchObject({
        user: QUOTA - IMAGINE,
        token: QUOTA - IMAGINE,
      });
      expect(await refundRows(user.id)).toHaveLength(0);
    });
  });

  it('a callback with the right secret while the upstream also says FAILURE: refunded exactly once, two callbacks and two pollers racing', async () => {
    await withNotify(true, async () => {
      const { user, token } = await account();
      const { mjId, hook } = await imagine(token.key, 'a true failure');
      owner(mjId).fail(mjId, 'Job action restricted');
      const claim = { id: mjId, status: 'FAILURE', failReason: 'claimed by the callback' };
      const [a, b] = stack.relays.map((r) => r.pipeline!.midjourneyPoller);
      const [one, two] = await Promise.all([
        callback(hook!, claim, 0),
        callback(hook!, claim, 1),
        a!.pollOnce(),
        b!.pollOnce(),
      ]);
      for (const r of [one!, two!]) {
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ code: 1, properties: { status: 'FAILURE' } });
      }
      await owner(mjId).delivered();
      // Reported again by every relay: Billing's ledger applies it once.
      await Promise.all([a!.refundDue(), b!.refundDue()]);
      // The reason is the upstream's, not the callback's: the body was only a hint.
      expect(await row(mjId)).toMatchObject({
        status: 'FAILURE',
        fail_reason: 'Job action restricted',
        refund: 2,
      });
      expect(await balances(user.id, token.id)).toMatchObject({ user: QUOTA, token: QUOTA, tokenUsed: 0 });
      const refunds = await refundRows(user.id);
      expect(refunds).toHaveLength(1);
      expect(Number(refunds[0]!.quota)).toBe(IMAGINE);
      const ledger = await stack.sql('select request_id from usage_ledger where request_id = ?', [
        `mj-refund:${String((await row(mjId)).id)}`,
      ]);
      expect(ledger).toHaveLength(1);
      // A callback after the end changes nothing.
      expect((await callback(hook!, claim)).body).toMatchObject({ properties: { status: 'FAILURE' } });
      expect(await refundRows(user.id)).toHaveLength(1);
    });
  });

  it('the upstream’s own callback updates the task without a poll, and a failure it reports is refunded', async () => {
    await withNotify(true, async () => {
      const { user, token } = await account();
      const { mjId, hook } = await imagine(token.key, 'pushed');
      owner(mjId).fail(mjId, 'banned prompt');
      owner(mjId).tick(mjId); // the proxy moves on by itself and POSTs the task to the callback URL
      await owner(mjId).delivered();
      const sent = owner(mjId).notified.filter((n) => n.url === hook);
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.every((n) => n.status === 200)).toBe(true);
      expect(await row(mjId)).toMatchObject({ status: 'FAILURE', fail_reason: 'banned prompt', refund: 2 });
      expect(await balances(user.id, token.id)).toMatchObject({ user: QUOTA, token: QUOTA });
    });
  });

  it('a wrong secret, another task’s secret or a malformed callback is refused and changes nothing', async () => {
    await withNotify(true, async () => {
      const { user, token } = await account();
      const victim = await account();
      const mine = await imagine(token.key, 'mine');
      const theirs = await imagine(victim.token.key, 'theirs');
      for (const t of [mine, theirs]) owner(t.mjId).fail(t.mjId, 'Job action restricted');
      const before = upstreamFetches(theirs.mjId) + upstreamFetches(mine.mjId);
      const claim = { id: theirs.mjId, status: 'FAILURE', failReason: 'x' };
      const base = `${relayUrl()}/mj/notify`;
      const attempts = [
        // My task's secret for their task.
        await callback(mine.hook!, claim),
        // Their secret with one character changed, a made-up one, a malformed one, none.
        await callback(
          theirs.hook!.replace(/.$/, (ch) => (ch === 'A' ? 'B' : 'A')),
          claim,
        ),
        await callback(`${base}/${'x'.repeat(43)}`, claim),
        await callback(`${base}/short`, claim),
        await callback(`${base}/${'x'.repeat(43)}%00`, claim),
      ];
      for (const r of attempts) {
        expect(r.status).toBe(403);
        expect(r.body).toMatchObject({ code: 4, description: 'unknown task callback secret' });
      }
      // The right secret with a body that names no task, or no JSON at all: 400.
      for (const body of [{ status: 'FAILURE' }, '[]', 'not json']) {
        const r = await callback(theirs.hook!, body);
        expect(r.status).toBe(400);
        expect(r.body).toMatchObject({ code: 4 });
      }
      expect(upstreamFetches(theirs.mjId) + upstreamFetches(mine.mjId)).toBe(before);
      for (const t of [mine, theirs]) expect(await row(t.mjId)).toMatchObject({ status: '', refund: 0 });
      // The right secret while the upstream cannot confirm (it lost the task): nothing is believed.
      owner(theirs.mjId).forget(theirs.mjId);
      const unconfirmed = await callback(theirs.hook!, claim);
      expect(unconfirmed.status).toBe(502);
      expect(unconfirmed.body).toMatchObject({ code: 4 });
      expect(await row(theirs.mjId)).toMatchObject({ status: '', refund: 0 });
      expect((await balances(user.id, token.id)).user).toBe(QUOTA - IMAGINE);
      expect((await balances(victim.user.id, victim.token.id)).user).toBe(QUOTA - IMAGINE);
    });
  });
});

describe('Midjourney relay, upstream failures', () => {
  it('a channel whose key the upstream refuses answers 502 and charges nothing; an unreachable one too', async () => {
    const wrong = await startFakeMidjourney({ secret: 'right' });
    try {
      const refused = await seedChannel(stack, {
        type: 2,
        baseUrl: wrong.url,
        key: 'wrong',
        models: ['mj_imagine'],
      });
      const gone = await seedChannel(stack, {
        type: 2,
        baseUrl: 'http://127.0.0.1:9',
        key: 'k',
        models: ['mj_imagine'],
      });
      await setOptions(stack, {});
      const admin = await seedUser(stack, { quota: QUOTA, role: 100 });
      const key = (await seedToken(stack, admin.id, { remainQuota: QUOTA })).key;
      for (const ch of [refused, gone]) {
        const res = await post('/mj/submit/imagine', { prompt: 'x' }, bearer(`${key}-${ch.id}`));
        expect([ch.id, res.status, res.body.code]).toEqual([ch.id, 502, 4]);
      }
      await drained(stack);
      const [u] = await stack.sql<{ quota: string }>('select quota from users where id = ?', [admin.id]);
      expect(Number(u!.quota)).toBe(QUOTA);
      expect(await stack.relays[0]!.store.balance({ kind: 'user', id: admin.id })).toBe(QUOTA);
      await stack.sql('update channels set status = 2 where id in (?, ?)', [refused.id, gone.id]);
      await stack.sql('update abilities set enabled = false where channel_id in (?, ?)', [
        refused.id,
        gone.id,
      ]);
      await setOptions(stack, {});
    } finally {
      await wrong.close();
    }
  });
});

describe('Midjourney relay, concurrent submits', () => {
  it('hold the price before the upstream is asked: 6 concurrent imagines on 120,000 quota, two accepted', async () => {
    const { user, token } = await account(120_000);
    const before = fake.submits.length + other.submits.length;
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        post('/mj/submit/imagine', { prompt: `race ${i}` }, bearer(token.key), i % 2),
      ),
    );
    const accepted = answers.filter((a) => a.body.code === 1);
    expect(accepted).toHaveLength(2);
    expect(answers.filter((a) => a.status === 403)).toHaveLength(4);
    // The refused ones never reached an upstream.
    expect(fake.submits.length + other.submits.length - before).toBe(2);
    const b = await balances(user.id, token.id);
    expect([b.user, b.token]).toEqual([120_000 - 2 * IMAGINE, 120_000 - 2 * IMAGINE]);
  });
});

describe('Midjourney relay, every submit kind', () => {
  it('blend, describe, shorten, change, simple-change, modal and upload are each charged their own fixed price', async () => {
    const { user, token } = await account();
    const imagine = await post('/mj/submit/imagine', { prompt: 'base' }, bearer(token.key));
    const id = String(imagine.body.result);
    await pollUntil(id, ['SUCCESS']);
    const kinds: [string, Record<string, unknown>, string, number][] = [
      ['blend', { base64Array: ['data:image/png;base64,AA', 'data:image/png;base64,BB'] }, 'BLEND', 50_000],
      ['describe', { base64: 'data:image/png;base64,AA' }, 'DESCRIBE', 25_000],
      ['shorten', { prompt: 'a very long prompt' }, 'SHORTEN', 50_000],
      ['change', { taskId: id, action: 'UPSCALE', index: 2 }, 'UPSCALE', 25_000],
      ['simple-change', { content: `${id} V1` }, 'VARIATION', 50_000],
      ['modal', { taskId: id, prompt: 'remix' }, 'MODAL', 50_000],
      ['upload-discord-images', { base64Array: ['data:image/png;base64,AA'] }, 'UPLOAD', 25_000],
    ];
    for (const [kind, body, action, price] of kinds) {
      const res = await post(`/mj/submit/${kind}`, body, bearer(token.key));
      expect([kind, res.body.code]).toEqual([kind, 1]);
      const [row] = await stack.sql<{ action: string; quota: string; status: string }>(
        'select action, quota, status from midjourney_tasks where mj_id = ?',
        [String(res.body.result)],
      );
      expect([kind, row!.action, Number(row!.quota)]).toEqual([kind, action, price]);
      if (kind === 'upload-discord-images') expect(row!.status).toBe('SUCCESS');
    }
    const simple = await post('/mj/submit/simple-change', { content: 'no-such-format' }, bearer(token.key));
    expect(simple.status).toBe(400);
    const spent = IMAGINE + kinds.reduce((n, k) => n + k[3], 0);
    const b = await balances(user.id, token.id);
    expect([b.user, b.token]).toEqual([QUOTA - spent, QUOTA - spent]);
    const models = await stack.sql<{ model_name: string }>(
      'select model_name from logs where user_id = ? and type = 2 order by id',
      [user.id],
    );
    // One consume row per charge (batched by the outbox, so not necessarily in submit order).
    expect(models.map((m) => m.model_name).sort()).toEqual(
      [
        'mj_imagine',
        'mj_blend',
        'mj_describe',
        'mj_shorten',
        'mj_upscale',
        'mj_variation',
        'mj_modal',
        'mj_upload',
      ].sort(),
    );
  });
});

describe('Midjourney relay, InsightFace swap (swap_face)', () => {
  const faces = { sourceBase64: 'data:image/png;base64,AA', targetBase64: 'data:image/png;base64,BB' };
  const swapsSent = () =>
    [fake, other].flatMap((f) => f.requests).filter((r) => r.path === '/mj/insight-face/swap').length;

  it('is charged its fixed price once on accept (behind a mode prefix too); refused or malformed costs nothing; a failed swap is refunded', async () => {
    const { user, token } = await account();
    const before = swapsSent();

    // Malformed: refused by the gateway before any upstream.
    const missing = await post(
      '/mj/insight-face/swap',
      { sourceBase64: faces.sourceBase64 },
      bearer(token.key),
    );
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      code: 4,
      description: 'sourceBase64 and targetBase64 are required',
    });
    expect(swapsSent()).toBe(before);

    // Refused by the upstream: its answer passes through, nothing is charged or recorded.
    fake.refuseNext({ code: 24, description: '可能包含敏感词' });
    other.refuseNext({ code: 24, description: '可能包含敏感词' });
    const refused = await post('/mj/insight-face/swap', faces, bearer(token.key));
    fake.refuseNext(null);
    other.refuseNext(null);
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ code: 24, result: null });
    expect(swapsSent()).toBe(before + 1);
    let b = await balances(user.id, token.id);
    expect([b.user, b.token]).toEqual([QUOTA, QUOTA]);
    expect(await stack.sql('select id from midjourney_tasks where user_id = ?', [user.id])).toHaveLength(0);

    // Accepted behind /mj-fast: the prefix is not forwarded, the body is, and swap_face is charged once.
    const ok = await post('/mj-fast/mj/insight-face/swap', faces, bearer(token.key));
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ code: 1 });
    const mjId = String(ok.body.result);
    const owner = fake.tasks.has(mjId) ? fake : other;
    const sent = owner.requests.filter((r) => r.path === '/mj/insight-face/swap').at(-1);
    expect(sent?.body).toMatchObject(faces);
    expect(owner.tasks.get(mjId)?.action).toBe('SWAP_FACE');
    const [row] = await stack.sql<Record<string, unknown>>(
      'select action, prompt, progress, quota from midjourney_tasks where mj_id = ?',
      [mjId],
    );
    expect(row).toMatchObject({ action: 'SWAP_FACE', prompt: 'InsightFace', progress: '0%' });
    expect(Number(row!.quota)).toBe(SWAP_FACE);
    b = await balances(user.id, token.id);
    expect([b.user, b.token]).toEqual([QUOTA - SWAP_FACE, QUOTA - SWAP_FACE]);
    const consumed = await stack.sql<{ model_name: string; quota: string }>(
      'select model_name, quota from logs where user_id = ? and type = 2',
      [user.id],
    );
    expect(consumed.map((r) => [r.model_name, Number(r.quota)])).toEqual([['swap_face', SWAP_FACE]]);
    // The task is the caller's like any other: fetched from the gateway's own rows.
    const fetched = await get(`/mj/task/${mjId}/fetch`, bearer(token.key));
    expect(fetched.body).toMatchObject({ id: mjId, action: 'SWAP_FACE' });
    await pollUntil(mjId, ['SUCCESS']);

    // A second swap that the upstream fails is refunded once, to user and token.
    const bad = await post('/mj/insight-face/swap', faces, bearer(token.key));
    expect(bad.body.code).toBe(1);
    const badId = String(bad.body.result);
    (fake.tasks.has(badId) ? fake : other).fail(badId, 'no face found');
    const failed = await pollUntil(badId, ['FAILURE']);
    expect(failed).toMatchObject({ fail_reason: 'no face found' });
    await stack.relays[0]!.pipeline!.midjourneyPoller.pollOnce();
    b = await balances(user.id, token.id);
    expect([b.user, b.token]).toEqual([QUOTA - SWAP_FACE, QUOTA - SWAP_FACE]);
    const refunds = await stack.sql('select id from logs where user_id = ? and type = 4', [user.id]);
    expect(refunds).toHaveLength(1);
  });
});

describe('Midjourney relay, in-process store and scheduled polling', () => {
  let solo: Stack;
  let up: FakeMidjourney;

  beforeAll(async () => {
    up = await startFakeMidjourney({ durationMs: 200, secret: 'solo' });
    // No Redis: the in-process store (its outbox journaled in PostgreSQL) and the in-process leader lease.
    solo = await startStack({ suffix: 'mjsolo', relays: 1, env: { RELAY_TASK_POLL_INTERVAL_MS: '100' } });
    await setOptions(solo, { RetryTimes: '0' });
    await seedChannel(solo, { type: 5, baseUrl: up.url, key: up.secret, models: MODELS });
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
      fetch(`${solo.relays[0]!.httpUrl}/mj/submit/imagine`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'mj-api-secret': `sk-${token.key}` },
        body: JSON.stringify({ prompt }),
      }).then((r) => r.json() as Promise<Record<string, unknown>>);
    const ok = await submit('a lake');
    const bad = await submit('a lake --fail');
    expect([ok.code, bad.code]).toEqual([1, 1]);
    const status = async (id: unknown) =>
      (
        await solo.sql<{ status: string; refund: number }>(
          'select status, refund from midjourney_tasks where mj_id = ?',
          [String(id)],
        )
      )[0]!;
    await until(async () => (await status(ok.result)).status === 'SUCCESS');
    await until(async () => (await status(bad.result)).refund === 2);
    await drained(solo);
    const [u] = await solo.sql<{ quota: string }>('select quota from users where id = ?', [user.id]);
    const [t] = await solo.sql<{ remain_quota: string }>('select remain_quota from tokens where id = ?', [
      token.id,
    ]);
    expect(Number(u!.quota)).toBe(QUOTA - IMAGINE);
    expect(Number(t!.remain_quota)).toBe(QUOTA - IMAGINE);
    const refunds = await solo.sql('select request_id from usage_ledger where request_id like ?', [
      'mj-refund:%',
    ]);
    expect(refunds).toHaveLength(1);
  });
});
