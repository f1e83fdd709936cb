/**
 * Settings page, personal tab (seed 000 §2 "Settings page", §5) with JavaScript on and off: a fresh user with a
 * Session row inserted here views the profile, transfers invitation earnings, saves notification settings,
 * generates a system access token, changes the password and deletes the account; other tabs are admin-only.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createRedisPubSub } from '@switchyard/db/pubsub.ts';
import { hashPassword, verifyPassword } from '@switchyard/db/security/password.ts';
import type { Page } from 'playwright-core';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { accessTokenHash } from '#app/domain/auth/session.server.ts';
import { findCode, type SmtpCapture, startSmtpCapture } from '../fakes/smtp.ts';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready, submit } from './harness.ts';

let h: Harness;
let orm: MikroORM;
const run = Date.now().toString(36).slice(-6);

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
});
afterAll(async () => {
  await h?.close();
  await orm?.close(true);
});

type Who = E2eUser;

const makeUser = (username: string, over: Partial<User> = {}) =>
  createE2eUser(orm, username, { affCode: `s${username}`.slice(0, 32), displayName: '', ...over });

const dbUser = (id: number) => orm.em.fork().findOneOrFail(User, { id });

async function signedIn(mode: Mode, who: Who, path = '/setting'): Promise<Page> {
  const page = await h.page(mode);
  await signIn(h, mode, who);
  await page.goto(path);
  await ready(page, mode);
  return page;
}

const toast = (page: Page) => page.getByTestId('toast');

/** A submission the server refuses: the answer is the POST itself (the page re-renders with the message). */
async function refused(page: Page, act: () => Promise<void>): Promise<void> {
  await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), act()]);
  await page.waitForLoadState('load');
}

describe.each(MODES)('personal settings with JavaScript %s', (mode: Mode) => {
  const p = `${mode}${run}`;

  it('shows the profile, invitation and notification cards', async () => {
    const who = await makeUser(`set_${p}`, { quota: 1_000_000, affQuota: 250_000, affCount: 2 });
    const page = await signedIn(mode, who);
    expect(await page.getByTestId('profile-username').textContent()).toBe(who.username);
    expect(await page.getByText('普通用户').count()).toBeGreaterThan(0);
    expect(await page.getByTestId('balance').textContent()).toBe('$2.00');
    expect(await page.getByTestId('aff-quota').textContent()).toBe('$0.50');
    expect(await page.locator('input[name="invite_link"]').inputValue()).toBe(
      `${h.baseURL}/register?aff=s${who.username}`,
    );
    expect(await page.locator('input[name="quota_warning_threshold"]').inputValue()).toBe('100000');
  });

  it('refuses other tabs to a regular user with 403', async () => {
    const who = await makeUser(`tab_${p}`);
    const page = await h.page(mode);
    await signIn(h, mode, who);
    const res = await page.goto('/setting?tab=system');
    expect(res?.status()).toBe(403);
    expect(await page.getByRole('alert').first().textContent()).toContain('仅管理员');
  });

  it('lets an admin see the tab list', async () => {
    const who = await makeUser(`adm_${p}`, { role: Role.Admin });
    const page = await signedIn(mode, who, '/setting?tab=system');
    expect(await page.getByRole('link', { name: '系统设置' }).getAttribute('aria-current')).toBe('page');
    // Every tab is a real page now (issue 14): the system tab opens with its first form.
    expect(await page.getByLabel('服务器地址', { exact: true }).count()).toBe(1);
    expect(await page.getByText('后续版本').count()).toBe(0);
  });

  it('transfers invitation earnings into the balance', async () => {
    const who = await makeUser(`aff_${p}`, { affQuota: 1_000_000 });
    const page = await signedIn(mode, who);
    await page.getByRole('link', { name: '划转到余额' }).click();
    const amount = page.locator('input[name="quota"]');
    await amount.waitFor();
    await amount.fill('600000');
    await submit(page, mode, () => page.getByRole('button', { name: '确认' }).click());
    await expect.poll(() => toast(page).first().textContent()).toContain('划转成功');
    const row = await dbUser(who.id);
    expect(row.quota).toBe(600_000);
    expect(row.affQuota).toBe(400_000);
    await expect.poll(() => page.getByTestId('aff-quota').textContent()).toBe('$0.80');
  });

  it('refuses a transfer below the minimum', async () => {
    const who = await makeUser(`affmin_${p}`, { affQuota: 1_000_000 });
    const page = await signedIn(mode, who, '/setting?tab=personal&dialog=transfer');
    const amount = page.locator('input[name="quota"]');
    await amount.evaluate((el) => el.removeAttribute('min'));
    await amount.fill('10');
    await refused(page, () => page.getByRole('button', { name: '确认' }).click());
    await expect
      .poll(() => page.locator('.form-error[role="alert"]').textContent())
      .toContain('划转金额最低为 $1.00');
    expect((await dbUser(who.id)).affQuota).toBe(1_000_000);
  });

  it('saves notification settings', async () => {
    const who = await makeUser(`ntf_${p}`);
    const page = await signedIn(mode, who);
    await page.locator('input[name="notify_type"][value="webhook"]').check();
    await page.locator('input[name="webhook_url"]').fill('https://hooks.example.com/notify');
    await page.locator('input[name="webhook_secret"]').fill('s3cret');
    await page.locator('input[name="quota_warning_threshold"]').fill('500000');
    await submit(page, mode, () => page.getByRole('button', { name: '保存设置' }).click());
    await expect.poll(() => toast(page).first().textContent()).toContain('通知设置已更新');
    const setting = JSON.parse((await dbUser(who.id)).setting);
    expect(setting).toMatchObject({
      notify_type: 'webhook',
      webhook_url: 'https://hooks.example.com/notify',
      webhook_secret: 's3cret',
      quota_warning_threshold: 500000,
    });
    expect(await page.locator('input[name="webhook_secret"]').getAttribute('placeholder')).toBe('已设置密钥');
  });

  it('generates a system access token shown once', async () => {
    const who = await makeUser(`tok_${p}`);
    const page = await signedIn(mode, who);
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: '生成系统访问令牌' }).click(),
    ]);
    const field = page.locator('input[name="access_token"]');
    await field.waitFor();
    const token = await field.inputValue();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Only its SHA-256 is stored (ADR 019).
    expect((await dbUser(who.id)).accessToken).toBe(await accessTokenHash(token));
    const res = await page.request.get('/api/user/self', { headers: { Authorization: `Bearer ${token}` } });
    expect((await res.json()).data.id).toBe(who.id);
  });

  it('changes the password (both entries must match, the current password is asked for)', async () => {
    const who = await makeUser(`pwd_${p}`, { passwordHash: await hashPassword('old-password-1') });
    const page = await signedIn(mode, who);
    await page.getByRole('link', { name: '修改密码' }).click();
    await page.locator('input[name="password"]').waitFor();
    await page.getByLabel('原密码').fill('old-password-1');
    await page.locator('input[name="password"]').fill('new-password-1');
    await page.locator('input[name="password2"]').fill('new-password-2');
    await refused(page, () => page.getByRole('button', { name: '确认' }).click());
    await expect
      .poll(() => page.locator('.form-error[role="alert"]').textContent())
      .toContain('两次输入的密码不一致');
    await page.getByLabel('原密码').fill('guess-1234');
    await page.locator('input[name="password"]').fill('new-password-1');
    await page.locator('input[name="password2"]').fill('new-password-1');
    await refused(page, () => page.getByRole('button', { name: '确认' }).click());
    await expect.poll(() => page.locator('.form-error[role="alert"]').textContent()).toContain('原密码错误');
    expect(await verifyPassword('old-password-1', (await dbUser(who.id)).passwordHash)).toBe(true);
    await page.getByLabel('原密码').fill('old-password-1');
    await page.locator('input[name="password"]').fill('new-password-1');
    await page.locator('input[name="password2"]').fill('new-password-1');
    await submit(page, mode, () => page.getByRole('button', { name: '确认' }).click());
    await expect.poll(() => toast(page).first().textContent()).toContain('密码修改成功');
    expect(await verifyPassword('new-password-1', (await dbUser(who.id)).passwordHash)).toBe(true);
  });

  it('deletes the account after typing the username and password, then lands on /login', async () => {
    const who = await makeUser(`del_${p}`, { passwordHash: await hashPassword('old-password-1') });
    const page = await signedIn(mode, who);
    await page.getByRole('link', { name: '删除账户' }).click();
    const confirm = page.locator('input[name="confirm"]');
    const password = page.getByLabel('原密码');
    await confirm.waitFor();
    await confirm.fill('wrong');
    await password.fill('old-password-1');
    await refused(page, () => page.getByRole('button', { name: '删除账户' }).last().click());
    await expect
      .poll(() => page.locator('.form-error[role="alert"]').textContent())
      .toContain('请输入你的账户名以确认删除');
    await confirm.fill(who.username);
    await password.fill('guess-1234');
    await refused(page, () => page.getByRole('button', { name: '删除账户' }).last().click());
    await expect.poll(() => page.locator('.form-error[role="alert"]').textContent()).toContain('原密码错误');
    expect((await dbUser(who.id)).deletedAt).toBeNull();
    await confirm.fill(who.username);
    await password.fill('old-password-1');
    await Promise.all([
      page.waitForURL(/\/login/),
      page.getByRole('button', { name: '删除账户' }).last().click(),
    ]);
    expect((await dbUser(who.id)).deletedAt).not.toBeNull();
    expect(await orm.em.fork().count(Session, { user: who.id })).toBe(0);
    const again = await page.goto('/setting');
    expect(new URL(again?.url() ?? '').pathname).toBe('/login');
  });
});

describe('email binding', () => {
  let smtp: SmtpCapture;
  let options: OptionService;
  let closePubSub: (() => Promise<void>) | null = null;
  const saved = new Map<string, string>();
  type Setter = (key: string, value: string, actor: number) => Promise<unknown>;

  async function setOption(key: string, value: string) {
    if (!saved.has(key)) {
      const current = (options as unknown as { get(k: string): unknown }).get(key);
      saved.set(key, typeof current === 'string' ? current : JSON.stringify(current));
    }
    await (options.set.bind(options) as Setter)(key, value, 1);
  }

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    const pubsub = await createRedisPubSub(inject('redisURL'));
    closePubSub = async () => {
      await (pubsub as unknown as { close?: () => Promise<void> }).close?.();
    };
    options = new OptionService({ orm, pubsub });
    await options.load();
    await setOption('SMTPServer', smtp.host);
    await setOption('SMTPPort', String(smtp.port));
    await setOption('SMTPFrom', 'noreply@switchyard.test');
    await setOption('SMTPAccount', '');
    await new Promise((r) => setTimeout(r, 1500));
    // The send-code buttons share the critical per-IP limit with the other e2e files.
    const client = createClient({ url: inject('redisURL') });
    await client.connect();
    for await (const keys of client.scanIterator({ MATCH: '*rl:critical:*', COUNT: 200 })) {
      const list = Array.isArray(keys) ? keys : [keys];
      if (list.length > 0) await client.del(list);
    }
    await client.quit();
  });
  afterAll(async () => {
    for (const [key, value] of [...saved].reverse())
      await (options.set.bind(options) as Setter)(key, value, 1).catch(() => {});
    await closePubSub?.();
    await smtp?.close();
  });

  it.each(MODES)('binds an e-mail with a mailed code (JavaScript %s)', async (mode: Mode) => {
    const who = await makeUser(`mail_${mode}${run}`);
    const address = `bind_${mode}${run}@example.com`;
    const page = await signedIn(mode, who);
    await page.getByRole('link', { name: '绑定' }).first().click();
    const email = page.locator('input[name="email"]');
    await email.waitFor();
    await email.fill(address);
    if (mode === 'js') {
      await page.getByRole('button', { name: '获取验证码' }).click();
      await expect.poll(() => page.getByRole('button', { name: /重新发送/ }).count()).toBe(1);
    } else {
      await submit(page, mode, () => page.getByRole('button', { name: '获取验证码' }).click());
      expect(await page.locator('input[name="email"]').inputValue()).toBe(address);
    }
    const mail = await smtp.waitFor((m) => m.to.includes(address), 10_000);
    const code = findCode(mail);
    expect(code).toBeTruthy();
    await page.locator('input[name="code"]').fill(code ?? '');
    await submit(page, mode, () => page.getByRole('button', { name: '绑定邮箱' }).click());
    await expect.poll(async () => (await dbUser(who.id)).email).toBe(address);
    await expect.poll(() => page.getByTestId('email-state').textContent()).toContain(address);
  });
});
