import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, launch, MODES, type Mode, ready, submit } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await launch();
});
afterAll(async () => {
  await h?.close();
});

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
    const wide = await h.page(mode, { width: 1024, height: 768 });
    await wide.goto('/pricing-does-not-exist-yet');
    expect(await wide.getByTestId('sidebar').isVisible()).toBe(true);
    const narrow = await h.page(mode, { width: 600, height: 800 });
    await narrow.goto('/pricing-does-not-exist-yet');
    expect(await narrow.getByTestId('sidebar').count()).toBe(1);
    expect(await narrow.getByTestId('sidebar').isVisible()).toBe(false);
  });

  it('collapses the side menu and remembers it', async () => {
    const page = await h.page(mode);
    await page.goto('/no/such/page');
    await ready(page, mode);
    const sidebar = page.getByTestId('sidebar');
    expect(await sidebar.getAttribute('data-collapsed')).toBe('false');
    await submit(page, mode, () => page.getByRole('button', { name: '收起侧边栏' }).click());
    await expect.poll(() => sidebar.getAttribute('data-collapsed')).toBe('true');
    await page.reload();
    expect(await page.getByTestId('sidebar').getAttribute('data-collapsed')).toBe('true');
    expect(await page.getByRole('button', { name: '展开侧边栏' }).count()).toBe(1);
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

  it('sends a signed-out visitor following a protected link to /login', async () => {
    const page = await h.page(mode);
    await page.goto('/no/such/page');
    await ready(page, mode);
    await page.getByRole('navigation', { name: '控制台菜单' }).getByRole('link', { name: '令牌' }).click();
    await page.waitForURL((url) => url.pathname === '/login');
    expect(new URL(page.url()).searchParams.get('redirectTo')).toBe('/token');
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
