/**
 * Settings "operation", "ratelimit", "other", "pay" and "system" tabs (seed 000 §2, §4, §5, §8; ADR 023) with JavaScript on and off: an admin
 * changes a key and sees the form's confirmation, saving again says 'you seem to have changed nothing', a bad
 * value is refused with the registry's message next to its field and nothing is stored, and the update check
 * answers 'failed to check for updates' (the suite's RELEASES_URL points at a closed port, as when offline).
 * Disabling password login asks first: a react-aria dialog with JavaScript, a confirmation step without.
 * Root-only keys (ADR 033: mail, addresses, OAuth, payment keys, links) are changed by root; an administrator sees
 * them read-only with "only root can change this", can still save the other keys of a mixed form, and a post that
 * forces one is refused.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Option } from '@switchyard/db/entities/option.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import {
  defaultOptionValues,
  type OptionKey,
  serializeOptionValue,
} from '@switchyard/db/options/registry.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createRedisPubSub } from '@switchyard/db/pubsub.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type SmtpCapture, startSmtpCapture } from '../fakes/smtp.ts';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready } from './harness.ts';

let h: Harness;
let orm: MikroORM;
let smtp: SmtpCapture;
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
  'ServerAddress',
  'WorkerUrl',
  'PasswordLoginEnabled',
  'GitHubClientSecret',
  'SMTPServer',
  'SMTPPort',
  'SMTPAccount',
  'SMTPFrom',
  'SMTPToken',
  'EmailDomainWhitelist',
  'apiAddressList',
];

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
  smtp = await startSmtpCapture();
});
afterAll(async () => {
  // Back to the defaults for other suites sharing the product database, announced like any change so the
  // running product's option cache follows (a bare DELETE left it serving this suite's Alipay keys).
  if (orm) {
    const pubsub = await createRedisPubSub(inject('redisURL'));
    const options = new OptionService({ orm, pubsub });
    await options.load();
    const defaults = defaultOptionValues();
    for (const key of TOUCHED as OptionKey[])
      await options.set(key, serializeOptionValue(key, defaults[key] as never), 1);
    await options.close();
    await pubsub.close();
  }
  await h?.close();
  await orm?.close(true);
  await smtp?.close();
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
  let root: E2eUser;
  let page: Page;

  beforeAll(async () => {
    admin = await createE2eUser(orm, `tadm_${p}`, { role: Role.Admin, email: `tadm_${p}@example.com` });
    root = await createE2eUser(orm, `troot_${p}`, { role: Role.Root, email: `troot_${p}@example.com` });
    page = await h.page(mode);
    await signIn(h, mode, admin);
  });
  /** The session cookie of `who` replaces the current one (root-only keys are root's to change). */
  const signInAs = (who: E2eUser) => signIn(h, mode, who);

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
    // (Other suites, such as admin-html's, may have left an About row in the shared product database.)
    const aboutBefore = await stored('About');
    await openTab(page, mode, 'other');
    await save(page, 'option:about');
    await expect.poll(() => page.getByTestId('about-error').textContent()).toBe('你似乎并没有修改什么');
    expect(await stored('About')).toBe(aboutBefore);
  });

  it('other: refuses an API address list that is not JSON (root)', async () => {
    await signInAs(root);
    await openTab(page, mode, 'other');
    await page.locator('[name="apiAddressList"]').fill('[{"title": ');
    await save(page, 'option:apiAddressList');
    await expect
      .poll(() => page.getByTestId('opt-apiAddressList-apiAddressList-error').textContent())
      .toBe('apiAddressList：不是合法的 JSON 字符串');
    expect(await stored('apiAddressList')).toBeUndefined();
    await signInAs(admin);
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
    // Other suites (the wallet's) set MinTopUp in the shared product database: the refusal leaves it as it was.
    const minTopUp = await stored('MinTopUp');
    await page.getByLabel('最低充值美元数量').fill('0');
    await save(page, 'option:payPlan');
    await expect
      .poll(() => page.getByTestId('opt-payPlan-MinTopUp-error').textContent())
      .toBe('MinTopUp：不能小于 1');
    expect(await stored('MinTopUp')).toBe(minTopUp);

    // Payment keys are root's (ADR 033).
    await signInAs(root);
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
    await signInAs(admin);
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

  it('system: addresses lose their trailing slash; secrets are write-only (root)', async () => {
    await signInAs(root);
    const res = await openTab(page, mode, 'system');
    expect(res?.status()).toBe(200);
    await page.getByLabel('服务器地址', { exact: true }).fill(`https://${p}.example.com/`);
    await page.getByLabel('Worker 代理地址').fill(`https://w${p}.example.com//`);
    await save(page, 'option:systemGeneral');
    await expect.poll(() => toast(page).first().textContent()).toContain('通用设置已更新');
    expect(await stored('ServerAddress')).toBe(`https://${p}.example.com`);
    expect(await stored('WorkerUrl')).toBe(`https://w${p}.example.com`);
    await openTab(page, mode, 'system');
    await page.getByLabel('GitHub Client Secret').fill(`gh-${p}`);
    await save(page, 'option:systemGitHub');
    await expect.poll(() => toast(page).first().textContent()).toContain('GitHub OAuth 设置已更新');
    await openTab(page, mode, 'system');
    expect(await page.getByLabel('GitHub Client Secret').inputValue()).toBe('');
    expect(await page.getByLabel('GitHub Client Secret').getAttribute('data-secret-set')).toBe('true');
    expect(await page.content()).not.toContain(`gh-${p}`);
    // The e-mail domain whitelist is an administrator's.
    await signInAs(admin);
    await openTab(page, mode, 'system');
    await page.getByLabel('允许的邮箱域名').fill(`example.com,${p}.org`);
    await save(page, 'option:systemEmailDomain');
    await expect.poll(() => toast(page).first().textContent()).toContain('邮箱域名设置已更新');
    expect(await stored('EmailDomainWhitelist')).toBe(`example.com,${p}.org`);
  });

  it('system: disabling password login is confirmed first', async () => {
    await openTab(page, mode, 'system');
    const box = page.getByLabel('允许通过密码进行登录');
    expect(await box.isChecked()).toBe(true);
    await box.uncheck();
    await save(page, 'option:systemLogin');
    const ask = page.getByTestId('systemLogin-confirm');
    await expect.poll(() => ask.textContent()).toContain('包括管理员');
    expect(await stored('PasswordLoginEnabled')).not.toBe('false');
    if (mode === 'js') {
      expect(await page.getByRole('alertdialog').count()).toBe(1);
      await ask.getByRole('button', { name: '取消', exact: true }).click();
      await expect.poll(() => ask.count()).toBe(0);
      expect(await stored('PasswordLoginEnabled')).not.toBe('false');
      await save(page, 'option:systemLogin');
      await expect.poll(() => ask.count()).toBe(1);
    }
    await post(page, () => page.getByRole('button', { name: '确认取消密码登录' }).click());
    await expect.poll(() => toast(page).first().textContent()).toContain('登录设置已更新');
    expect(await stored('PasswordLoginEnabled')).toBe('false');
    // Enabling again needs no confirmation (and lets the other suites sign in with a password).
    await openTab(page, mode, 'system');
    await page.getByLabel('允许通过密码进行登录').check();
    await save(page, 'option:systemLogin');
    await expect.poll(() => stored('PasswordLoginEnabled')).toBe('true');
  });

  it('system: root saves SMTP; the admin sends a test mail to themselves through it', async () => {
    await signInAs(root);
    await openTab(page, mode, 'system');
    await page.getByLabel('SMTP 服务器地址').fill(smtp.host);
    await page.getByLabel('SMTP 端口').fill(String(smtp.port));
    await page.getByLabel('SMTP 账户').fill(`mailer-${p}@example.com`);
    await page.getByLabel('发件人地址').fill(`noreply-${p}@example.com`);
    await page.getByLabel('SMTP 访问凭证 / 密码').fill(`pw-${p}`);
    await save(page, 'option:systemSmtp');
    await expect.poll(() => toast(page).first().textContent()).toContain('SMTP 设置已更新');
    await signInAs(admin);
    await openTab(page, mode, 'system');
    await post(page, () => page.getByRole('button', { name: '发送测试邮件' }).click());
    await expect
      .poll(() => page.getByTestId('test-mail-result').textContent())
      .toBe(`测试邮件已发送至 tadm_${p}@example.com`);
    const mail = await smtp.waitFor((m) => m.to.includes(`tadm_${p}@example.com`));
    expect(mail.from).toBe(`noreply-${p}@example.com`);
  });

  it('root-only settings are read-only to an administrator, and a forced post is refused', async () => {
    await openTab(page, mode, 'system');
    const server = page.getByLabel('SMTP 服务器地址');
    expect(await server.isDisabled()).toBe(true);
    expect(await page.getByLabel('SMTP 访问凭证 / 密码').isDisabled()).toBe(true);
    expect(await page.getByLabel('SMTP 访问凭证 / 密码').inputValue()).toBe('');
    expect(await page.getByTestId('systemSmtp-root-only').textContent()).toBe(
      '仅超级管理员（root）可以修改这些设置',
    );
    expect(await page.locator('button[name="intent"][value="option:systemSmtp"]').isDisabled()).toBe(true);
    // Login switches stay the administrator's.
    expect(await page.getByLabel('允许通过密码进行登录').isDisabled()).toBe(false);

    // A mixed form: the root-only fields are disabled with a note, the others save (disabled fields are not posted).
    await openTab(page, mode, 'operation');
    expect(await page.getByLabel('充值链接').isDisabled()).toBe(true);
    expect(await page.getByTestId('opt-opGeneral-TopUpLink-root-only').textContent()).toBe(
      '仅超级管理员（root）可以修改',
    );
    const retry = page.getByLabel('失败重试次数');
    expect(await retry.isDisabled()).toBe(false);
    const times = mode === 'js' ? '4' : '5';
    await retry.fill(times);
    await save(page, 'option:opGeneral');
    await expect.poll(() => toast(page).first().textContent()).toContain('通用设置已更新');
    expect(await stored('RetryTimes')).toBe(times);

    // A post that forces a root-only key (what a crafted page or a script would send) changes nothing.
    const before = await stored('SMTPServer');
    const forced = await page.request.post('/setting?tab=system', {
      form: { intent: 'option:systemSmtp', SMTPServer: 'smtp.attacker.example' },
      headers: { Origin: h.baseURL, 'Sec-Fetch-Site': 'same-origin' },
      maxRedirects: 0,
    });
    expect(forced.status()).toBe(400);
    expect(await forced.text()).toContain('SMTPServer：仅超级管理员（root）可以修改此设置');
    expect(await stored('SMTPServer')).toBe(before);
  });
});
