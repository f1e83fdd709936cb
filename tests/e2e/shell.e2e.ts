import type { MikroORM } from '@mikro-orm/postgresql';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready, submit } from './harness.ts';

let h: Harness;
let orm: MikroORM;
let member: E2eUser;
const run = Date.now().toString(36).slice(-6);
beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
  member = await createE2eUser(orm, `shell_${run}`, { affCode: `sh${run}` });
});
afterAll(async () => {
  await h?.close();
  await orm?.close(true);
});

/** A fresh page signed in as a regular user (the console sidebar is for signed-in users only). */
async function memberPage(mode: Mode, viewport?: { width: number; height: number }): Promise<Page> {
  const page = await h.page(mode, viewport);
  await signIn(h, mode, member);
  return page;
}

const htmlAttr = (page: Page, name: string) => page.locator('html').getAttribute(name);

describe.each(MODES)('console shell with JavaScript %s', (mode: Mode) => {
  it('renders the home page in Chinese by default', async () => {
    const page = await h.page(mode);
    const res = await page.goto('/');
    expect(res?.status()).toBe(200);
    expect(await htmlAttr(page, 'lang')).toBe('zh');
    expect(await page.locator('h1').textContent()).toContain('欢迎使用');
    expect(
      await page
        .getByRole('navigation', { name: '主导航' })
        .getByRole('link', { name: '首页' })
        .getAttribute('aria-current'),
    ).toBe('page');
    // Landmarks and the skip link
    expect(await page.locator('header').count()).toBe(1);
    expect(await page.locator('main#main').count()).toBe(1);
    expect(await page.locator('footer').count()).toBe(1);
    expect(await page.locator('a.skip-link[href="#main"]').count()).toBe(1);
  });

  it('switches the language to English and keeps it across a reload', async () => {
    const page = await h.page(mode);
    await page.goto('/');
    await ready(page, mode);
    if (mode === 'js') {
      await page.getByRole('button', { name: '语言' }).click();
      await page.getByRole('menuitem', { name: 'English' }).click();
    } else {
      await page.locator('details.dropdown summary', { hasText: '语言' }).click();
      await submit(page, mode, () => page.getByRole('button', { name: 'English' }).click());
    }
    await page.waitForFunction(() => document.documentElement.lang === 'en');
    await expect.poll(() => page.locator('h1').textContent()).toContain('Welcome to');
    expect(await page.getByRole('link', { name: 'Pricing' }).count()).toBe(1);
    await page.reload();
    expect(await htmlAttr(page, 'lang')).toBe('en');
    expect(await page.locator('h1').textContent()).toContain('Welcome to');
  });

  it('toggles the theme between light and dark and keeps it across a reload', async () => {
    const page = await h.page(mode);
    await page.goto('/about');
    await ready(page, mode);
    expect(await htmlAttr(page, 'data-theme')).toBe('light');
    await submit(page, mode, () => page.getByTestId('theme-switch').click());
    await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
    expect(new URL(page.url()).pathname).toBe('/about');
    // the server-rendered dark theme survives a reload
    await page.reload();
    expect(await htmlAttr(page, 'data-theme')).toBe('dark');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe('rgb(17, 21, 28)');
    await ready(page, mode);
    await submit(page, mode, () => page.getByTestId('theme-switch').click());
    await page.waitForFunction(() => document.documentElement.dataset.theme === 'light');
    await page.reload();
    expect(await htmlAttr(page, 'data-theme')).toBe('light');
  });

  it('answers an unknown address with the not-found page and HTTP 404', async () => {
    const page = await h.page(mode);
    const res = await page.goto('/no/such/page');
    expect(res?.status()).toBe(404);
    expect(await page.getByTestId('not-found-message').textContent()).toBe(
      '页面不存在，请检查你的浏览器地址是否正确',
    );
  });

  it('hides the side menu at 600px width and shows it on wider screens', async () => {
    const wide = await memberPage(mode, { width: 1024, height: 768 });
    await wide.goto('/pricing-does-not-exist-yet');
    expect(await wide.getByTestId('sidebar').isVisible()).toBe(true);
    const narrow = await memberPage(mode, { width: 600, height: 800 });
    await narrow.goto('/pricing-does-not-exist-yet');
    expect(await narrow.getByTestId('sidebar').count()).toBe(1);
    expect(await narrow.getByTestId('sidebar').isVisible()).toBe(false);
  });

  it('collapses the side menu and remembers it, keeping the entries named', async () => {
    const page = await memberPage(mode);
    await page.goto('/no/such/page');
    await ready(page, mode);
    const sidebar = page.getByTestId('sidebar');
    expect(await sidebar.getAttribute('data-collapsed')).toBe('false');
    await submit(page, mode, () => page.getByRole('button', { name: '收起侧边栏' }).click());
    await expect.poll(() => sidebar.getAttribute('data-collapsed')).toBe('true');
    await page.reload();
    expect(await page.getByTestId('sidebar').getAttribute('data-collapsed')).toBe('true');
    expect(await page.getByRole('button', { name: '展开侧边栏' }).count()).toBe(1);
    // collapsed: icons only, but every link keeps its accessible name
    const menu = page.getByRole('navigation', { name: '控制台菜单' });
    expect(await menu.getByRole('link', { name: '令牌' }).count()).toBe(1);
    expect(await menu.getByRole('link', { name: '操练场' }).count()).toBe(1);
    const label = await menu.locator('.side-label').first().boundingBox();
    expect(label?.width ?? 0).toBeLessThanOrEqual(1);
  });

  it('draws the side menu with icons (hidden from screen readers) and visible labels', async () => {
    const page = await memberPage(mode);
    await page.goto('/no/such/page');
    const menu = page.getByRole('navigation', { name: '控制台菜单' });
    const links = menu.getByRole('link');
    const n = await links.count();
    expect(n).toBeGreaterThanOrEqual(5);
    for (let i = 0; i < n; i++) {
      const link = links.nth(i);
      expect(await link.locator('svg[aria-hidden="true"]').count()).toBe(1);
      expect((await link.locator('.side-label').textContent())?.trim()).not.toBe('');
    }
  });

  it('shows the flash toast after logout (POST-redirect-GET)', async () => {
    const page = await h.page(mode);
    const res = await page.context().request.post(`${h.baseURL}/logout`, { maxRedirects: 0 });
    expect(res.status()).toBe(302);
    expect(res.headers().location).toBe('/login');
    await page.goto('/login');
    expect(await page.getByTestId('toast').textContent()).toContain('注销成功');
    // shown once
    await page.reload();
    expect(await page.getByTestId('toast').count()).toBe(0);
  });

  it('renders without console errors', async () => {
    const page = await h.page(mode);
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    for (const path of ['/', '/about', '/no/such/page']) {
      await page.goto(path);
      await ready(page, mode);
    }
    // a 404 document is reported by chromium itself as a failed resource
    expect(errors.filter((e) => !e.includes('status of 404'))).toEqual([]);
  });

  it('hides the side menu on the home and about pages', async () => {
    const page = await h.page(mode);
    await page.goto('/');
    expect(await page.getByTestId('sidebar').count()).toBe(0);
    await page.goto('/about');
    expect(await page.getByTestId('sidebar').count()).toBe(0);
  });

  it('shows a signed-out visitor no console sidebar; the console link leads to /login', async () => {
    const page = await h.page(mode);
    await page.goto('/no/such/page');
    await ready(page, mode);
    expect(await page.getByTestId('sidebar').count()).toBe(0);
    await page.getByRole('navigation', { name: '主导航' }).getByRole('link', { name: '控制台' }).click();
    await page.waitForURL((url) => url.pathname === '/login');
    // the console entry: the dashboard when data export is on, else tokens
    const status = (await (await fetch(`${h.baseURL}/api/status`)).json()) as {
      data: { enable_data_export: boolean };
    };
    expect(new URL(page.url()).searchParams.get('redirectTo')).toBe(
      status.data.enable_data_export ? '/detail' : '/token',
    );
  });

  it('leads every side-menu and top-nav link of a signed-in user to a page that exists', async () => {
    const page = await memberPage(mode);
    await page.goto('/token');
    const hrefs = new Set<string>();
    for (const nav of ['控制台菜单', '主导航']) {
      for (const href of await page
        .getByRole('navigation', { name: nav })
        .getByRole('link')
        .evaluateAll((els) => els.map((e) => e.getAttribute('href') ?? ''))) {
        hrefs.add(href);
      }
    }
    expect(hrefs.has('/playground')).toBe(true);
    // every feature page exists now: each menu link answers (no "page does not exist")
    for (const href of hrefs) {
      const res = await page.context().request.get(`${h.baseURL}${href}`, { maxRedirects: 0 });
      expect(res.status(), href).toBeLessThan(400);
    }
  });
});

describe('HTTP endpoints', () => {
  it('GET /api/status returns every public field and no secrets', async () => {
    const res = await fetch(`${h.baseURL}/api/status`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { success: boolean; message: string; data: Record<string, unknown> };
    expect(body.success).toBe(true);
    expect(body.message).toBe('');
    for (const key of [
      'system_name',
      'logo',
      'footer_html',
      'quota_per_unit',
      'display_in_currency',
      'enable_drawing',
      'enable_task',
      'enable_data_export',
      'chats',
      'data_export_default_time',
      'default_collapse_sidebar',
      'mj_notify_enabled',
      'chat_link',
      'chat_link2',
      'email_verification',
      'turnstile_check',
      'turnstile_site_key',
      'github_oauth',
      'github_client_id',
      'linuxdo_oauth',
      'linuxdo_client_id',
      'wechat_login',
      'wechat_qrcode',
      'telegram_oauth',
      'telegram_bot_name',
      'version',
      'start_time',
      'top_up_link',
      'min_topup',
      'enable_online_topup',
      'server_address',
      'self_use_mode_enabled',
      'demo_site_enabled',
    ]) {
      expect(body.data, key).toHaveProperty(key);
    }
    expect(typeof body.data.version).toBe('string');
    expect(body.data.start_time).toBeGreaterThan(1_600_000_000);
    expect(Object.keys(body.data).filter((k) => /secret|password|token$|private/i.test(k))).toEqual([]);
  });

  it('GET /healthz answers ok', async () => {
    const res = await fetch(`${h.baseURL}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
  });

  it('falls back to Chinese without Accept-Language and follows it otherwise', async () => {
    const zh = await (await fetch(`${h.baseURL}/`, { headers: { 'Accept-Language': '' } })).text();
    expect(zh).toContain('<html lang="zh"');
    const en = await (
      await fetch(`${h.baseURL}/`, { headers: { 'Accept-Language': 'en-US,en;q=0.9' } })
    ).text();
    expect(en).toContain('<html lang="en"');
  });
});
