/**
 * Auth pages end to end, with JavaScript on and off: register -> login -> logout, wrong password, register
 * with e-mail verification (code read from the SMTP capture fake), forgot password -> mailed link -> new
 * password, and Turnstile refusing a failing token. Options are changed through an OptionService on the
 * product's database (the product reloads them through Redis) and restored afterwards.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { OptionService } from '@switchyard/db/options/service.ts';
import type { Page } from 'playwright-core';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findCode, findLink, type SmtpCapture, startSmtpCapture } from '../fakes/smtp.ts';
import { type Harness, launch, MODES, type Mode, ready, submit } from './harness.ts';

let h: Harness;
let smtp: SmtpCapture;
let orm: MikroORM | null = null;
let options: OptionService | null = null;
let closePubSub: (() => Promise<void>) | null = null;
const saved = new Map<string, string>();
const run = Date.now().toString(36);

type Setter = (key: string, value: string, actor: number) => Promise<unknown>;
type Getter = { get(key: string): unknown; list?: () => unknown };

/** Sets an option in the product (remembering the first previous value) and waits until it is live. */
async function setOption(key: string, value: string): Promise<void> {
  if (!options) throw new Error('no OptionService (databaseURL not provided)');
  if (!saved.has(key)) {
    const current = (options as unknown as Getter).get(key);
    saved.set(key, typeof current === 'string' ? current : JSON.stringify(current));
  }
  await (options.set.bind(options) as Setter)(key, value, 1);
}

/** The product reloads a changed option within about a second; poll the public status for status keys. */
async function waitForStatus(check: (status: Record<string, unknown>) => boolean): Promise<void> {
  await expect
    .poll(
      async () => {
        const res = await fetch(`${h.baseURL}/api/status`);
        const body = (await res.json()) as { data: Record<string, unknown> };
        return check(body.data);
      },
      { timeout: 5000, interval: 100 },
    )
    .toBe(true);
}

/** Clears the product's critical rate-limit counters, so this file's many logins fit in 20 per 20 minutes. */
async function resetCriticalLimits(): Promise<void> {
  const url = inject('redisURL');
  if (!url) return;
  const client = createClient({ url });
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: '*rl:critical:*', COUNT: 200 })) {
      const list = Array.isArray(keys) ? keys : [keys];
      if (list.length > 0) await client.del(list);
    }
  } finally {
    await client.quit();
  }
}

beforeAll(async () => {
  h = await launch();
  smtp = await startSmtpCapture();
  const databaseURL = inject('databaseURL');
  const redisURL = inject('redisURL');
  if (databaseURL) {
    const { initOrm } = await import('@switchyard/db/orm.ts');
    const { createRedisPubSub } = await import('@switchyard/db/pubsub.ts');
    const { OptionService: Service } = await import('@switchyard/db/options/service.ts');
    orm = await initOrm(databaseURL, { poolMax: 2 });
    const pubsub = await createRedisPubSub(redisURL);
    closePubSub = async () => {
      await (pubsub as unknown as { close?: () => Promise<void> }).close?.();
    };
    options = new Service({ orm, pubsub });
    await options.load();
  }
  await setOption('SMTPServer', smtp.host);
  await setOption('SMTPPort', String(smtp.port));
  await setOption('SMTPFrom', 'noreply@switchyard.test');
  await setOption('SMTPAccount', '');
  await resetCriticalLimits();
});

afterAll(async () => {
  for (const [key, value] of [...saved].reverse()) {
    await (options?.set.bind(options) as Setter | undefined)?.(key, value, 1).catch((e) =>
      console.error(`restoring ${key} failed`, e),
    );
  }
  await closePubSub?.();
  await orm?.close(true);
  await smtp?.close();
  await h?.close();
});

async function fill(page: Page, label: string, value: string) {
  await page.getByLabel(label, { exact: true }).fill(value);
}

async function register(page: Page, mode: Mode, username: string, password: string) {
  await page.goto('/register');
  await ready(page, mode);
  await fill(page, '用户名', username);
  await fill(page, '密码', password);
  await fill(page, '确认密码', password);
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/login'),
    page.getByRole('button', { name: '注册', exact: true }).click(),
  ]);
}

async function login(page: Page, mode: Mode, username: string, password: string) {
  await page.goto('/login');
  await ready(page, mode);
  await fill(page, '用户名或邮箱', username);
  await fill(page, '密码', password);
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/token'),
    page.getByRole('button', { name: '登录', exact: true }).click(),
  ]);
}

async function sessionCookie(page: Page): Promise<string | undefined> {
  return (await page.context().cookies()).find((c) => c.name === 'sy_session')?.value;
}

describe.each(MODES)('auth pages with JavaScript %s', (mode: Mode) => {
  const name = (what: string) => `${what}_${mode}_${run}`.slice(0, 20);

  it('login and register pages hide header and sidebar; the form is labelled', async () => {
    const page = await h.page(mode);
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    const res = await page.goto('/login?expired=true');
    await ready(page, mode);
    expect(res?.status()).toBe(200);
    expect(await page.locator('header').count()).toBe(0);
    expect(await page.locator('nav#side-menu, .sidebar').count()).toBe(0);
    expect(await page.getByTestId('login-expired').textContent()).toBe('未登录或登录已过期，请重新登录');
    expect(await page.getByLabel('用户名或邮箱').getAttribute('autocomplete')).toBe('username');
    expect(await page.getByLabel('密码', { exact: true }).getAttribute('autocomplete')).toBe(
      'current-password',
    );
    expect(await page.getByRole('link', { name: '注册' }).getAttribute('href')).toBe('/register');
    expect(await page.getByRole('link', { name: '点击重置' }).getAttribute('href')).toBe('/reset');
    await page.goto('/register');
    await ready(page, mode);
    expect(await page.locator('header').count()).toBe(0);
    expect(await page.getByLabel('密码', { exact: true }).getAttribute('placeholder')).toContain('8');
    for (const path of ['/register', '/reset', '/user/reset?email=a%40b.c&token=x']) {
      await page.goto(path);
      await ready(page, mode);
    }
    // no hydration mismatches or script errors on the auth pages
    expect(errors).toEqual([]);
  });

  it('registers, logs in, and logs out', async () => {
    const page = await h.page(mode);
    const username = name('u');
    await register(page, mode, username, 'password-123');
    expect(await page.getByTestId('toast').first().textContent()).toContain('注册成功');
    await login(page, mode, username, 'password-123');
    expect(await sessionCookie(page)).toBeTruthy();
    // log out through the header's user menu
    await page.goto('/about');
    await ready(page, mode);
    if (mode === 'js') {
      await page.getByRole('button', { name: '用户菜单' }).click();
      await Promise.all([
        page.waitForURL((u) => u.pathname === '/login'),
        page.getByRole('menuitem', { name: '退出' }).click(),
      ]);
    } else {
      await page.locator('details.dropdown summary', { hasText: '用户菜单' }).click();
      await submit(page, mode, () => page.getByRole('button', { name: '退出' }).click());
      expect(new URL(page.url()).pathname).toBe('/login');
    }
    await expect.poll(() => sessionCookie(page)).toBeUndefined();
  });

  it('refuses a wrong password with the message, keeping the username', async () => {
    const page = await h.page(mode);
    await page.goto('/login');
    await ready(page, mode);
    await fill(page, '用户名或邮箱', 'root');
    await fill(page, '密码', 'not-the-password');
    await page.getByRole('button', { name: '登录', exact: true }).click();
    await expect
      .poll(() => page.getByTestId('form-error').textContent())
      .toBe('用户名或密码错误，或用户已被封禁');
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(await page.getByLabel('用户名或邮箱').inputValue()).toBe('root');
    expect(await sessionCookie(page)).toBeUndefined();
  });

  it('checks the register form with the seed messages', async () => {
    const page = await h.page(mode);
    await page.goto('/register');
    await ready(page, mode);
    await fill(page, '用户名', name('short'));
    await fill(page, '密码', 'short');
    await fill(page, '确认密码', 'short');
    await page.getByRole('button', { name: '注册', exact: true }).click();
    await expect.poll(() => page.getByText('密码长度不得小于 8 位！').count()).toBe(1);
    await fill(page, '密码', 'password-123');
    await fill(page, '确认密码', 'password-456');
    await page.getByRole('button', { name: '注册', exact: true }).click();
    await expect.poll(() => page.getByText('两次输入的密码不一致').count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe('/register');
  });

  it('registers with e-mail verification, then resets the forgotten password from the mailed link', async () => {
    await setOption('EmailVerificationEnabled', 'true');
    await waitForStatus((s) => s.email_verification === true);
    const page = await h.page(mode);
    const username = name('mail');
    const email = `${username}@example.com`.toLowerCase();
    await page.goto('/register');
    await ready(page, mode);
    await fill(page, '用户名', username);
    await fill(page, '邮箱', email);
    await page.getByRole('button', { name: '获取验证码' }).click();
    await expect
      .poll(() => page.getByTestId('form-success').textContent())
      .toBe('验证码发送成功，请检查你的邮箱！');
    if (mode === 'js') {
      // the button counts down before it can resend
      await expect.poll(() => page.getByTestId('send-code').textContent()).toMatch(/重新发送 \(\d+\)/);
      expect(await page.getByTestId('send-code').isDisabled()).toBe(true);
    }
    // the fields were kept (without JavaScript the page re-rendered)
    expect(await page.getByLabel('用户名', { exact: true }).inputValue()).toBe(username);
    expect(await page.getByLabel('邮箱', { exact: true }).inputValue()).toBe(email);
    const codeMail = await smtp.waitFor((m) => m.to.includes(email), 10_000);
    const code = findCode(codeMail);
    expect(code).toBeTruthy();
    await fill(page, '密码', 'password-123');
    await fill(page, '确认密码', 'password-123');
    await fill(page, '验证码', code ?? '');
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/login'),
      page.getByRole('button', { name: '注册', exact: true }).click(),
    ]);

    // forgot password
    await page.goto('/reset');
    await ready(page, mode);
    await fill(page, '邮箱地址', email);
    await page.getByTestId('reset-submit').click();
    await expect
      .poll(() => page.getByTestId('form-success').textContent())
      .toBe('重置邮件发送成功，请检查邮箱！');
    if (mode === 'js') {
      expect(await page.getByTestId('reset-submit').isDisabled()).toBe(true);
      expect(await page.getByTestId('reset-submit').textContent()).toMatch(/重试 \(\d+\)/);
    }
    const resetMail = await smtp.waitFor((m) => m.to.includes(email) && m !== codeMail, 10_000);
    const link = findLink(resetMail, '/user/reset?');
    expect(link?.searchParams.get('email')).toBe(email);
    await page.goto(`${link?.pathname}${link?.search}`);
    await ready(page, mode);
    expect(await page.getByLabel('邮箱地址').inputValue()).toBe(email);
    expect(await page.getByLabel('邮箱地址').getAttribute('readonly')).not.toBeNull();
    await page.getByRole('button', { name: '重置密码' }).click();
    const shown = page.getByTestId('new-password');
    await shown.waitFor();
    const password = await shown.inputValue();
    expect(password).toHaveLength(12);
    if (mode === 'js') {
      // copied, or the manual-copy fallback when the clipboard is not available
      await expect
        .poll(() => page.getByTestId('copy-state').textContent())
        .toMatch(/已复制|无法复制到剪贴板，请手动复制/);
    }
    await login(page, mode, username, password);
    expect(await sessionCookie(page)).toBeTruthy();
    await setOption('EmailVerificationEnabled', 'false');
  });

  it('with Turnstile on, a failing token is refused and a passing one logs in', async () => {
    await setOption('TurnstileSiteKey', 'site-key-e2e');
    await setOption('TurnstileSecretKey', 'secret-e2e');
    await setOption('TurnstileCheckEnabled', 'true');
    await waitForStatus((s) => s.turnstile_check === true);
    try {
      const page = await h.page(mode);
      await page.goto('/login');
      await ready(page, mode);
      expect(await page.getByTestId('turnstile').getAttribute('data-sitekey')).toBe('site-key-e2e');
      if (mode === 'nojs') {
        expect(await page.getByText('需要启用 JavaScript').count()).toBe(1);
      } else {
        // no token yet (the real widget cannot load here): the seed's info, nothing posted
        await fill(page, '用户名或邮箱', 'root');
        await fill(page, '密码', 'whatever-pass');
        await page.getByRole('button', { name: '登录', exact: true }).click();
        await expect
          .poll(() => page.getByTestId('form-info').textContent())
          .toBe('请稍后几秒重试，Turnstile 正在检查用户环境！');
      }
      await setToken(page, 'fail-token');
      await fill(page, '用户名或邮箱', 'root');
      await fill(page, '密码', '123456');
      await page.getByRole('button', { name: '登录', exact: true }).click();
      await expect.poll(() => page.getByTestId('form-error').textContent()).toBeTruthy();
      expect(new URL(page.url()).pathname).toBe('/login');
      expect(await sessionCookie(page)).toBeUndefined();
      await setToken(page, 'pass-token');
      await fill(page, '密码', '123456');
      await Promise.all([
        page.waitForURL((u) => u.pathname === '/token'),
        page.getByRole('button', { name: '登录', exact: true }).click(),
      ]);
      expect(await sessionCookie(page)).toBeTruthy();
    } finally {
      await setOption('TurnstileCheckEnabled', 'false');
      await waitForStatus((s) => s.turnstile_check === false);
    }
  });
});

/**
 * Puts a `cf-turnstile-response` value into the login form, as the widget would. Scripts of the page are off
 * in the no-JS context, but Playwright's evaluation still runs (it is not page script).
 */
async function setToken(page: Page, token: string) {
  await page.locator('form:has(input[name="password"])').evaluate((form, value) => {
    let input = form.querySelector<HTMLInputElement>('input[name="cf-turnstile-response"]');
    if (!input) {
      input = document.createElement('input');
      input.type = 'hidden';
      input.name = 'cf-turnstile-response';
      form.appendChild(input);
    }
    input.value = value;
  }, token);
}
