/**
 * Issue 17's "done when" as one journey against the built product: drawing and music tasks through the relay on
 * the product's own origin, polled by the relay (every 0.5 s in e2e, see global-setup.ts), billed and shown on the
 * console pages with JavaScript on and off.
 * - A user with an `sk-` token submits imagine, then an upscale of its result (/mj/submit/imagine, /mj/submit/action)
 *   to a Midjourney Proxy channel (type 2) on the midjourney-proxy fake; both finish; /midjourney shows both with
 *   the full progress bar and the image (through the gateway's image proxy); user and token paid exactly the two
 *   fixed prices (ModelPrice of mj_imagine and mj_upscale).
 * - A task the fake fails is refunded exactly once (balance back, one refund log row) and shows its fail reason.
 * - A Suno music task (/suno/submit/music, a Suno channel, type 36, on the Suno fake) appears on /task and is
 *   charged once.
 * The fakes are this file's own (loopback servers in the test process); the channels carry their base URLs.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Role } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createRedisPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type FakeMidjourney, startFakeMidjourney } from '../fakes/midjourney.ts';
import { type FakeSuno, startFakeSuno } from '../fakes/suno.ts';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, ready } from './harness.ts';

let h: Harness;
let orm: MikroORM;
let pubsub: PubSub;
let options: OptionService;
let mj: FakeMidjourney;
let suno: FakeSuno;
let admin: E2eUser;
const saved = new Map<string, string>();
const run = Date.now().toString(36).slice(-6);

// Prices chosen apart from new-api's defaults, so the figures below can only come from the options set here.
const PRICES = { mj_imagine: 0.2, mj_upscale: 0.06, suno_music: 0.3 };
const QUOTA = 5_000_000;

const api = (who: E2eUser) => ({
  'Content-Type': 'application/json',
  Cookie: `sy_session=${who.token}`,
  'New-Api-User': String(who.id),
});

async function setOption(key: string, value: unknown): Promise<void> {
  if (!saved.has(key)) saved.set(key, options.getRaw(key as never));
  await options.set(key as never, value as never, admin.id);
}

async function sql<T>(query: string, params: unknown[] = []): Promise<T[]> {
  return (await orm.em.getConnection().execute(query, params)) as T[];
}

/** The quota a fixed price costs: USD × QuotaPerUnit (group `default`, ratio 1). */
function cost(model: keyof typeof PRICES): number {
  return Math.round(PRICES[model] * Number(options.get('QuotaPerUnit' as never)));
}

async function createChannel(fields: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${h.baseURL}/api/channel/`, {
    method: 'POST',
    headers: api(admin),
    body: JSON.stringify({ groups: ['default'], ...fields }),
  });
  const body = (await res.json()) as { success: boolean; message?: string; data: number[] };
  expect(body.success, body.message).toBe(true);
  return body.data[0]!;
}

/** A user with QUOTA and one `sk-` token limited to QUOTA, made through /api/token as the user would. */
async function account(name: string): Promise<{ user: E2eUser; key: string; tokenId: number }> {
  const user = await createE2eUser(orm, name, { role: Role.User, quota: QUOTA } as never);
  const res = await fetch(`${h.baseURL}/api/token/`, {
    method: 'POST',
    headers: api(user),
    body: JSON.stringify({
      name: `${name}_tok`,
      remain_quota: QUOTA,
      unlimited_quota: false,
      expired_time: -1,
    }),
  });
  expect(((await res.json()) as { success: boolean }).success).toBe(true);
  const [token] = await sql<{ id: number; key: string }>('select id, key from tokens where user_id = ?', [
    user.id,
  ]);
  return { user, key: `sk-${token!.key}`, tokenId: Number(token!.id) };
}

async function balances(userId: number, tokenId: number) {
  const [u] = await sql<{ quota: string; used_quota: string }>(
    'select quota, used_quota from users where id = ?',
    [userId],
  );
  const [t] = await sql<{ remain_quota: string; used_quota: string }>(
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

async function relayPost(path: string, key: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${h.baseURL}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Waits for the relay's poller to bring the task row to one of `statuses`; returns the row. */
async function settled(table: 'midjourney_tasks' | 'tasks', id: string, statuses: string[]) {
  const column = table === 'midjourney_tasks' ? 'mj_id' : 'task_id';
  let row: Record<string, unknown> | undefined;
  await expect
    .poll(
      async () => {
        [row] = await sql<Record<string, unknown>>(`select * from ${table} where ${column} = ?`, [id]);
        return String(row?.status);
      },
      { timeout: 20_000, interval: 250 },
    )
    .toSatisfy((s: string) => statuses.includes(s));
  return row!;
}

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
  pubsub = await createRedisPubSub(inject('redisURL'));
  options = new OptionService({ orm, pubsub });
  await options.load();
  admin = await createE2eUser(orm, `tjadm_${run}`, { role: Role.Admin });
  // Tasks take 3 s upstream: several polls see them in progress before they finish.
  mj = await startFakeMidjourney({ durationMs: 3_000 });
  suno = await startFakeSuno({ durationMs: 3_000 });
  await setOption('ModelPrice', {
    ...(options.get('ModelPrice' as never) as Record<string, number>),
    ...PRICES,
  });
  await setOption('DrawingEnabled', true);
  await setOption('MjNotifyEnabled', false);
  // MjForwardUrlEnabled (on by default) rewrites image URLs to `${ServerAddress}/mj/image/<id>`: the product's origin.
  await setOption('ServerAddress', h.baseURL);
  await createChannel({
    type: 2,
    name: `tj_mj_${run}`,
    key: mj.secret,
    base_url: mj.url,
    models: 'mj_imagine,mj_upscale',
  });
  await createChannel({
    type: 36,
    name: `tj_suno_${run}`,
    key: suno.secret,
    base_url: suno.url,
    models: 'suno_music',
  });
}, 60_000);

afterAll(async () => {
  for (const [key, raw] of saved) await options?.set(key as never, raw as never, admin.id);
  await options?.close();
  await pubsub?.close();
  await h?.close();
  await orm?.close(true);
  await mj?.close();
  await suno?.close();
});

describe('the issue 17 journey: drawing and music tasks through the relay', () => {
  it('imagine then upscale with an sk- token: progress and image on /midjourney, charged the two fixed prices', async () => {
    const { user, key, tokenId } = await account(`tju_${run}`);
    const imagine = await relayPost('/mj/submit/imagine', key, { prompt: `a red fox in the snow ${run}` });
    expect(imagine).toMatchObject({ code: 1 });
    const imagineId = String(imagine.result);
    // the fake proxy got it with the channel's secret
    expect(mj.tasks.has(imagineId)).toBe(true);

    // The poller follows the fake: seen in progress (a progress between 0 and 100 %), then done with the image.
    const seen = new Set<string>();
    await expect
      .poll(
        async () => {
          const [row] = await sql<{ status: string; progress: string }>(
            'select status, progress from midjourney_tasks where mj_id = ?',
            [imagineId],
          );
          if (row) seen.add(`${row.status} ${row.progress}`);
          return row?.status;
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBe('SUCCESS');
    expect([...seen].some((s) => /^IN_PROGRESS (2[5-9]|[3-9]\d)%$/.test(s))).toBe(true);

    const upscale = await relayPost('/mj/submit/action', key, {
      taskId: imagineId,
      customId: `MJ::JOB::upsample::1::${imagineId}`,
    });
    expect(upscale).toMatchObject({ code: 1 });
    const upscaleId = String(upscale.result);
    expect(mj.tasks.get(upscaleId)?.action).toBe('UPSCALE');
    const done = await settled('midjourney_tasks', upscaleId, ['SUCCESS', 'FAILURE']);
    expect(done).toMatchObject({ status: 'SUCCESS', progress: '100%', action: 'UPSCALE' });

    // Exactly the two fixed prices, from the user and from the token.
    const paid = cost('mj_imagine') + cost('mj_upscale');
    expect(paid).toBe(130_000); // at the shipped 500,000 quota per USD: 100,000 + 30,000
    await expect
      .poll(() => balances(user.id, tokenId), { timeout: 10_000 })
      .toEqual({ user: QUOTA - paid, userUsed: paid, token: QUOTA - paid, tokenUsed: paid });
    const logs = await sql<{ model_name: string; quota: string }>(
      'select model_name, quota from logs where user_id = ? order by id',
      [user.id],
    );
    expect(logs.map((l) => [l.model_name, Number(l.quota)])).toEqual([
      ['mj_imagine', cost('mj_imagine')],
      ['mj_upscale', cost('mj_upscale')],
    ]);
    // the image proxy serves the fake's picture through the gateway
    const image = await fetch(`${h.baseURL}/mj/image/${upscaleId}`);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toContain('image/png');
    await image.arrayBuffer();

    for (const mode of MODES) {
      const page = await h.page(mode);
      await signIn(h, mode, user);
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      // the pictures the browser fetched through the gateway's image proxy
      const pictures = new Set<string>();
      page.on('response', (r) => {
        const m = /\/mj\/image\/([^/?]+)$/.exec(r.url());
        if (m && r.status() === 200 && r.headers()['content-type']?.includes('image/png'))
          pictures.add(m[1]!);
      });
      expect((await page.goto('/midjourney'))?.status()).toBe(200);
      await ready(page, mode);
      expect(await page.getByTestId('mj-row').count()).toBe(2);
      for (const id of [imagineId, upscaleId]) {
        const row = page.locator(`[data-mj-id="${id}"]`);
        expect(await row.getByTestId('mj-progress').getAttribute('value'), `${mode} ${id}`).toBe('100');
        expect(await row.getByTestId('mj-status').textContent()).toBe('成功');
        expect(await row.getByTestId('mj-image').locator('img').getAttribute('src')).toMatch(
          new RegExp(`/mj/image/${id}$`),
        );
      }
      await expect.poll(() => [...pictures].sort()).toEqual([imagineId, upscaleId].sort());
      expect(errors).toEqual([]);
      await page.close();
    }
  }, 120_000);

  it('a task the upstream fails is refunded exactly once and shows its fail reason on /midjourney', async () => {
    const { user, key, tokenId } = await account(`tjf_${run}`);
    // the fake fails a prompt containing "--fail" with "banned prompt"
    const submit = await relayPost('/mj/submit/imagine', key, { prompt: `a forbidden fox ${run} --fail` });
    expect(submit).toMatchObject({ code: 1 });
    const id = String(submit.result);
    const row = await settled('midjourney_tasks', id, ['SUCCESS', 'FAILURE']);
    expect(row).toMatchObject({ status: 'FAILURE', fail_reason: 'banned prompt' });

    // Charged on accept, then the refund: balances back; the consume row stays, plus one refund row.
    await expect
      .poll(() => balances(user.id, tokenId), { timeout: 10_000 })
      .toEqual({ user: QUOTA, userUsed: cost('mj_imagine'), token: QUOTA, tokenUsed: 0 });
    await expect
      .poll(async () =>
        Number(
          (await sql<{ refund: number }>('select refund from midjourney_tasks where mj_id = ?', [id]))[0]
            ?.refund,
        ),
      )
      .toBe(2);
    // more polls go by: the refund is not applied again
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await balances(user.id, tokenId)).toEqual({
      user: QUOTA,
      userUsed: cost('mj_imagine'),
      token: QUOTA,
      tokenUsed: 0,
    });
    const refunds = await sql<{ quota: string }>('select quota from logs where user_id = ? and type = 4', [
      user.id,
    ]);
    expect(refunds.map((r) => Number(r.quota))).toEqual([cost('mj_imagine')]);

    for (const mode of MODES) {
      const page = await h.page(mode);
      await signIn(h, mode, user);
      await page.goto('/midjourney');
      await ready(page, mode);
      const failed = page.locator(`[data-mj-id="${id}"]`);
      expect(await failed.getByTestId('mj-status').textContent()).toBe('失败');
      expect(await failed.getByTestId('mj-fail').textContent()).toContain('banned prompt');
      await page.close();
    }
  }, 120_000);

  it('a Suno music task appears on /task and is charged once', async () => {
    const { user, key, tokenId } = await account(`tjs_${run}`);
    const submit = await relayPost('/suno/submit/music', key, {
      prompt: `a song about foxes ${run}`,
      tags: 'pop',
      mv: 'chirp-v3-5',
      title: 'Foxes',
    });
    expect(submit).toMatchObject({ code: 'success' });
    const id = String(submit.data);
    expect(suno.tasks.has(id)).toBe(true);
    const row = await settled('tasks', id, ['SUCCESS', 'FAILURE']);
    expect(row).toMatchObject({ status: 'SUCCESS', progress: '100%', action: 'MUSIC' });

    const price = cost('suno_music');
    expect(price).toBe(150_000);
    await expect
      .poll(() => balances(user.id, tokenId), { timeout: 10_000 })
      .toEqual({ user: QUOTA - price, userUsed: price, token: QUOTA - price, tokenUsed: price });
    const logs = await sql<{ model_name: string; quota: string }>(
      'select model_name, quota from logs where user_id = ? order by id',
      [user.id],
    );
    expect(logs.map((l) => [l.model_name, Number(l.quota)])).toEqual([['suno_music', price]]);

    for (const mode of MODES) {
      const page = await h.page(mode);
      await signIn(h, mode, user);
      expect((await page.goto('/task'))?.status()).toBe(200);
      await ready(page, mode);
      const task = page.locator(`[data-task-id="${id}"]`);
      expect(await task.count()).toBe(1);
      expect(await task.getByTestId('task-progress').textContent()).toBe('100%');
      expect(await task.locator('.task-status').getAttribute('data-status')).toBe('SUCCESS');
      await page.close();
    }
  }, 120_000);
});
