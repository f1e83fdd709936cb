/**
 * Settings "operation", "ratelimit", "other" and "pay" tabs (seed 000 §2, §4, §5, §8; ADR 023) with JavaScript on and off: an admin
 * changes a key and sees the form's confirmation, saving again says 'you seem to have changed nothing', a bad
 * value is refused with the registry's message next to its field and nothing is stored, and the update check
 * answers 'failed to check for updates' (the suite's RELEASES_URL points at a closed port, as when offline).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Option } from '@switchyard/db/entities/option.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready } from './harness.ts';

let h: Harness;
let orm: MikroORM;
const run = Date.now().toString(36).slice(-6);
const TOUCHED = [
  'ModelRequestRateLimitEnabled',
  'ModelRequestRateLimitCount',
  'ModelRequestRateLimitSuccessCount',
  'ModelRequestRateLimitDurationMinutes',
  'Notice',
  'About',
  'Price',
  'MinTopUp',
  'ProductConfig',
  'TopupConfig',
  'AlipayAppId',
  'AlipayPrivateKey',
  'QuotaForNewUser',
  'RetryTimes',
  'UserUsableGroups',
  'DataExportInterval',
];

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
});
afterAll(async () => {
  // Back to the defaults for other suites sharing the product database.
  if (orm) await orm.em.fork().nativeDelete(Option, { key: { $in: TOUCHED } });
  await h?.close();
  await orm?.close(true);
});

const stored = async (key: string) => (await orm.em.fork().findOne(Option, { key }))?.value;
const toast = (page: Page) => page.getByTestId('toast');

async function openTab(page: Page, mode: Mode, tab: string) {
  const res = await page.goto(`/setting?tab=${tab}`);
  await ready(page, mode);
  return res;
}

/** Clicks a submit button and waits for the POST's answer (a redirect on success, the re-rendered tab otherwise). */
async function post(page: Page, click: () => Promise<void>) {
  await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), click()]);
  await page.waitForLoadState('networkidle');
}
const save = (page: Page, intent: string) =>
  post(page, () => page.locator(`button[name="intent"][value="${intent}"]`).click());

describe.each(MODES)('settings tabs with JavaScript %s', (mode: Mode) => {
  const p = `${mode}${run}`;
  let admin: E2eUser;
  let page: Page;

  beforeAll(async () => {
    admin = await createE2eUser(orm, `tadm_${p}`, { role: Role.Admin });
    page = await h.page(mode);
    await signIn(h, mode, admin);
  });

  it('ratelimit: saves the changed keys, then says nothing changed', async () => {
    const res = await openTab(page, mode, 'ratelimit');
    expect(res?.status()).toBe(200);
    const count = mode === 'js' ? '40' : '30';
    await page.getByLabel('启用用户模型请求速率限制（可能会影响高并发性能）').check();
    await page.getByLabel('用户每周期最多请求次数', { exact: true }).fill(count);
    await save(page, 'option:ratelimit');
    await expect.poll(() => toast(page).first().textContent()).toContain('模型速率限制已更新');
    expect(await stored('ModelRequestRateLimitEnabled')).toBe('true');
    expect(await stored('ModelRequestRateLimitCount')).toBe(count);
    await openTab(page, mode, 'ratelimit');
    expect(await page.getByLabel('用户每周期最多请求次数', { exact: true }).inputValue()).toBe(count);
    await save(page, 'option:ratelimit');
    await expect.poll(() => page.getByTestId('ratelimit-error').textContent()).toBe('你似乎并没有修改什么');
  });

  it('ratelimit: refuses a success count below 1 next to its field and stores nothing', async () => {
    await openTab(page, mode, 'ratelimit');
    const before = await stored('ModelRequestRateLimitCount');
    await page.getByLabel('用户每周期最多请求次数', { exact: true }).fill('77');
    const success = page.getByLabel('用户每周期最多请求完成次数');
    await success.fill('0');
    await save(page, 'option:ratelimit');
    const message = 'ModelRequestRateLimitSuccessCount：不能小于 1';
    await expect
      .poll(() => page.getByTestId('opt-ratelimit-ModelRequestRateLimitSuccessCount-error').textContent())
      .toBe(message);
    expect(await page.getByLabel('用户每周期最多请求完成次数').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('用户每周期最多请求次数', { exact: true }).inputValue()).toBe('77');
    expect(await stored('ModelRequestRateLimitCount')).toBe(before);
    expect(await stored('ModelRequestRateLimitSuccessCount')).toBeUndefined();
  });

  it('other: system info, the update check, and a notice with its own confirmation', async () => {
    const res = await openTab(page, mode, 'other');
    expect(res?.status()).toBe(200);
    expect(await page.getByTestId('system-version').textContent()).toMatch(/^v\d/);
    await post(page, () => page.getByRole('button', { name: '检查更新' }).click());
    await expect.poll(() => page.getByTestId('update-result').textContent()).toBe('检查更新失败，请稍后再试');
    if (mode === 'nojs') await openTab(page, mode, 'other');
    const notice = `maintenance ${p}\nsecond line`;
    await page.getByLabel('公告', { exact: true }).fill(notice);
    await save(page, 'option:notice');
    await expect.poll(() => toast(page).first().textContent()).toContain('公告已更新');
    expect(await stored('Notice')).toBe(notice);
    // Another form's unchanged field saves nothing.
    await openTab(page, mode, 'other');
    await save(page, 'option:about');
    await expect.poll(() => page.getByTestId('about-error').textContent()).toBe('你似乎并没有修改什么');
    expect(await stored('About')).toBeUndefined();
  });

  it('other: refuses an API address list that is not JSON', async () => {
    await openTab(page, mode, 'other');
    await page.locator('[name="apiAddressList"]').fill('[{"title": ');
    await save(page, 'option:apiAddressList');
    await expect
      .poll(() => page.getByTestId('opt-apiAddressList-apiAddressList-error').textContent())
      .toBe('apiAddressList：不是合法的 JSON 字符串');
    expect(await stored('apiAddressList')).toBeUndefined();
  });
  it('pay: plan amounts as one input each, MinTopUp >= 1, a write-only secret', async () => {
    const res = await openTab(page, mode, 'pay');
    expect(res?.status()).toBe(200);
    expect(await page.getByLabel('充值价格（x 元/美金）').inputValue()).toMatch(/^7\.3$|^\d/);
    await page.getByLabel('卡密充值方案（美元） 第 1 项').fill(mode === 'js' ? '10' : '20');
    await page.getByLabel('卡密充值方案（美元） 第 2 项').fill('50.5');
    await save(page, 'option:payPlan');
    await expect.poll(() => toast(page).first().textContent()).toContain('充值方案已更新');
    expect(JSON.parse((await stored('ProductConfig')) ?? '[]')).toEqual([mode === 'js' ? 10 : 20, 50.5]);
    await openTab(page, mode, 'pay');
    await page.getByLabel('最低充值美元数量').fill('0');
    await save(page, 'option:payPlan');
    await expect
      .poll(() => page.getByTestId('opt-payPlan-MinTopUp-error').textContent())
      .toBe('MinTopUp：不能小于 1');
    expect(await stored('MinTopUp')).toBeUndefined();

    await openTab(page, mode, 'pay');
    const key = page.getByLabel('支付宝应用私钥');
    expect(await key.inputValue()).toBe('');
    await key.fill(`pk-${p}`);
    await page.getByLabel('支付宝 AppID').fill(`app-${p}`);
    await save(page, 'option:alipay');
    await expect.poll(() => toast(page).first().textContent()).toContain('支付宝设置已更新');
    expect(await stored('AlipayPrivateKey')).toBeDefined();
    const sealed = await stored('AlipayPrivateKey');
    await openTab(page, mode, 'pay');
    // The secret is never sent back: the field is empty and says it is set; left empty it is kept.
    expect(await page.getByLabel('支付宝应用私钥').inputValue()).toBe('');
    expect(await page.getByLabel('支付宝应用私钥').getAttribute('data-secret-set')).toBe('true');
    expect(await page.content()).not.toContain(`pk-${p}`);
    await page.getByLabel('支付宝 AppID').fill(`app2-${p}`);
    await save(page, 'option:alipay');
    await expect.poll(() => stored('AlipayAppId')).toBe(`app2-${p}`);
    expect(await stored('AlipayPrivateKey')).toBe(sealed);
  });

  it('operation: a section saves its changed keys, JSON and the export interval are refused, logs need a time', async () => {
    const res = await openTab(page, mode, 'operation');
    expect(res?.status()).toBe(200);
    const quota = mode === 'js' ? '200000' : '100000';
    await page.getByLabel('新用户初始额度').fill(quota);
    await save(page, 'option:opQuota');
    await expect.poll(() => toast(page).first().textContent()).toContain('额度设置已更新');
    expect(await stored('QuotaForNewUser')).toBe(quota);
    expect(await stored('PreConsumedQuota')).toBeUndefined();

    await openTab(page, mode, 'operation');
    const groups = page.getByLabel('用户可选分组');
    await groups.fill('{"default":');
    if (mode === 'js') {
      await groups.blur();
      await expect
        .poll(() => page.getByTestId('opt-opGroups-UserUsableGroups-error').textContent())
        .toBe('用户可选分组：不是合法的 JSON 字符串');
    }
    await save(page, 'option:opGroups');
    await expect
      .poll(() => page.getByTestId('opGroups-error').textContent())
      .toBe('UserUsableGroups：不是合法的 JSON 字符串');
    expect(await stored('UserUsableGroups')).toBeUndefined();

    await openTab(page, mode, 'operation');
    await page.getByLabel('数据看板更新间隔（分钟）').fill('0');
    await save(page, 'option:opDashboard');
    await expect
      .poll(() => page.getByTestId('opt-opDashboard-DataExportInterval-error').textContent())
      .toBe('DataExportInterval：不能小于 1');
    expect(await stored('DataExportInterval')).toBeUndefined();

    await openTab(page, mode, 'operation');
    await Promise.all([
      page.waitForURL(/\/log\/clear/),
      page.getByRole('button', { name: '清除历史日志' }).click(),
    ]);
    await ready(page, mode);
    await expect.poll(() => page.locator('p[role="alert"]').textContent()).toBe('请选择日志时间');
  });
});
