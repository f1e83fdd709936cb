/**
 * Usage logs (seed 001 §2.10, §3 Log record / Log stats, §4, §7 Logs) with JavaScript on and off: a user sees
 * their own consume row with its cost and expands it (billed vs upstream model, ratios, no retry path); an admin
 * filters by username, opens the user info and clears the logs before a time after a confirmation.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready, submit } from './harness.ts';

let h: Harness;
let orm: MikroORM;
const run = Date.now().toString(36).slice(-6);
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
});
afterAll(async () => {
  await h?.close();
  await orm?.close(true);
});

async function signedIn(mode: Mode, who: E2eUser): Promise<Page> {
  const page = await h.page(mode);
  await signIn(h, mode, who);
  return page;
}

const toasts = async (page: Page) => (await page.getByTestId('toast').allTextContents()).join(' | ');

async function seedLog(who: E2eUser, over: Partial<Record<keyof Log, unknown>> = {}): Promise<Log> {
  const em = orm.em.fork();
  const log = em.create(Log, {
    userId: who.id,
    username: who.username,
    type: LogType.Consume,
    createdAt: now() - 30,
    tokenName: `tok_${who.username}`,
    modelName: 'gpt-4o',
    quota: 1500,
    promptTokens: 100,
    completionTokens: 20,
    useTime: 4,
    isStream: true,
    channelId: 7,
    channelName: 'primary',
    group: 'default',
    content: 'model ratio 2.5, group ratio 1',
    other: JSON.stringify({
      model_ratio: 2.5,
      completion_ratio: 4,
      group_ratio: 1,
      model_price: -1,
      cache_tokens: 30,
      cache_ratio: 0.5,
      reasoning_tokens: 12,
      frt: 1200,
      is_model_mapped: true,
      upstream_model_name: 'gpt-4o-2024-11-20',
      admin_info: { use_channel: ['3', '7'] },
    }),
    ...over,
  } as never);
  await em.flush();
  return log;
}

describe.each(MODES)('usage logs with JavaScript %s', (mode: Mode) => {
  const p = `${mode}${run}`;

  it('a user sees their own consume row with its cost and expands it', async () => {
    const user = await createE2eUser(orm, `lu_${p}`, { role: Role.User });
    const other = await createE2eUser(orm, `lo_${p}`, { role: Role.User });
    const mine = await seedLog(user);
    await seedLog(user, {
      type: LogType.TopUp,
      quota: 500000,
      other: '',
      content: 'redeemed',
      createdAt: now() - 60,
    });
    const theirs = await seedLog(other, { quota: 99999 });
    const page = await signedIn(mode, user);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const res = await page.goto('/log');
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('使用日志');
    await ready(page, mode);
    expect(await page.locator('tbody[data-log-id]').count()).toBe(2);
    expect(await page.locator(`tbody[data-log-id="${theirs.id}"]`).count()).toBe(0);
    // a user has no channel, user or retry columns
    expect(await page.getByRole('columnheader', { name: '渠道' }).count()).toBe(0);
    expect(await page.getByRole('columnheader', { name: '重试' }).count()).toBe(0);
    expect(await page.getByTestId('stat-quota').textContent()).toContain('$0.003000');

    const row = page.locator(`tbody[data-log-id="${mine.id}"]`);
    expect(await row.getByTestId('log-cost').textContent()).toBe('$0.003000');
    expect(await row.getByTestId('log-prompt').textContent()).toBe('100');
    // the relay's English price text in the reader's language
    expect(await row.getByTestId('log-content').textContent()).toBe('模型倍率 2.5，分组倍率 1');
    expect(await row.getByTestId('upstream-model').textContent()).toBe('gpt-4o-2024-11-20');
    expect(await row.getByTestId('use-time').getAttribute('data-tone')).toBe('green');
    expect(await row.getByTestId('frt').textContent()).toBe('首字 1.2 秒');

    const details = row.getByTestId('log-details');
    expect(await details.getByTestId('detail-modelRatio').isVisible()).toBe(false);
    await details.locator('summary').click();
    await expect.poll(() => details.getByTestId('detail-modelRatio').isVisible()).toBe(true);
    expect(await details.getByTestId('detail-modelRatio').textContent()).toBe('模型倍率2.5');
    expect(await details.getByTestId('detail-upstreamModel').textContent()).toBe('实际模型gpt-4o-2024-11-20');
    expect(await details.getByTestId('detail-cacheTokens').textContent()).toBe('缓存 Tokens30');
    expect(await details.getByTestId('detail-reasoningTokens').textContent()).toBe('推理 Tokens12');
    expect(await details.getByTestId('detail-retryPath').count()).toBe(0);

    // the type selector (a GET form) narrows to top-ups
    await page.getByLabel('日志类型').selectOption('1');
    await Promise.all([page.waitForURL(/type=1/), page.getByRole('button', { name: '查询' }).click()]);
    await ready(page, mode);
    await expect.poll(() => page.locator('tbody[data-log-id]').count()).toBe(1);
    expect(await page.locator('tbody[data-log-id]').getAttribute('data-type')).toBe('topup');

    if (mode === 'js') {
      // a name copies on click; the live region says what happened
      await h.contexts.js.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.baseURL });
      await page.goto('/log');
      await ready(page, mode);
      await row.getByRole('button', { name: `tok_lu_${p}` }).click();
      await expect.poll(() => row.getByTestId('copy-status').first().textContent()).toContain(`tok_lu_${p}`);
    }
    expect(errors).toEqual([]);
  });

  it('an admin filters by username, opens the user info and clears logs before a time', async () => {
    const admin = await createE2eUser(orm, `la_${p}`, { role: Role.Admin });
    const alice = await createE2eUser(orm, `lalice_${p}`, {
      role: Role.User,
      quota: 777000,
      requestCount: 5,
    } as never);
    const bob = await createE2eUser(orm, `lbob_${p}`, { role: Role.User });
    const aliceRow = await seedLog(alice);
    await seedLog(bob);
    const page = await signedIn(mode, admin);
    await page.goto('/log');
    await ready(page, mode);
    await page.getByLabel('用户名').fill(alice.username);
    await Promise.all([page.waitForURL(/username=/), page.getByRole('button', { name: '查询' }).click()]);
    await ready(page, mode);
    await expect.poll(() => page.locator('tbody[data-log-id]').count()).toBe(1);
    const row = page.locator(`tbody[data-log-id="${aliceRow.id}"]`);
    expect(await row.getByTestId('log-retry').textContent()).toBe('3 → 7');
    expect(await row.getByTestId('log-channel').textContent()).toBe('7');
    await row.getByTestId('log-details').locator('summary').click();
    await expect.poll(() => row.getByTestId('detail-retryPath').textContent()).toBe('重试路径3 → 7');

    // user info: a dialog with JavaScript, a page without
    await row
      .getByRole('link', { name: `查看用户 ${alice.username} 的信息` })
      .or(row.getByRole('button', { name: `查看用户 ${alice.username} 的信息` }))
      .click();
    const info = mode === 'js' ? page.getByRole('dialog') : page;
    if (mode === 'nojs') await page.waitForURL(/\/log\/user\/\d+/);
    await expect.poll(() => info.getByTestId('user-requests').textContent()).toBe('5');
    expect(await info.getByTestId('user-quota').textContent()).toBe('$1.55');
    if (mode === 'js') await info.getByRole('button', { name: '关闭' }).click();
    else {
      await page.getByRole('link', { name: '返回日志' }).click();
      await page.waitForURL(/\/log\?/);
    }

    // cleanup before 2020-01-01 (rows of this run dated 2019; nothing else in the product is that old)
    const cut = Date.UTC(2020, 0, 1) / 1000;
    await seedLog(alice, { createdAt: cut - 86400 });
    await seedLog(bob, { createdAt: cut - 3600 });
    const before = await orm.em.fork().count(Log, { createdAt: { $lt: cut } });
    expect(before).toBeGreaterThanOrEqual(2);
    await page.getByLabel('清除此时间之前的日志（UTC）').fill('2020-01-01T00:00');
    await page.getByRole('button', { name: '清除日志' }).click();
    const confirm = mode === 'js' ? page.getByRole('alertdialog') : page;
    if (mode === 'nojs') await page.waitForURL(/\/log\/clear\?/);
    await expect.poll(() => confirm.getByTestId('clear-body').textContent()).toContain(`共 ${before} 条`);
    await submit(page, mode, () => confirm.getByRole('button', { name: '确认清除' }).click());
    await expect.poll(() => toasts(page)).toContain(`已清除 ${before} 条日志`);
    expect(await orm.em.fork().count(Log, { createdAt: { $lt: cut } })).toBe(0);
    expect(await orm.em.fork().count(Log, { id: aliceRow.id })).toBe(1);
  });

  it('answers 403 to a user on the admin pages and calls', async () => {
    const plain = await createE2eUser(orm, `lp_${p}`, { role: Role.User });
    const page = await signedIn(mode, plain);
    const res = await page.goto('/log/clear?before=2020-01-01T00:00');
    expect(res?.status()).toBe(403);
    expect(await page.locator('h1').textContent()).toBe('无权访问');
    const api = await fetch(`${h.baseURL}/api/log/?p=1`, {
      headers: { Cookie: `sy_session=${plain.token}`, 'New-Api-User': String(plain.id) },
    });
    expect(api.status).toBe(403);
  });
});
