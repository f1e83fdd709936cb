/**
 * The console shell on a phone (390 x 844) and in the user's time zone (issue 15): the menu button's drawer with
 * JavaScript (react-aria modal: focus inside, Escape closes, focus back on the button) and its <details> menu
 * without; no page scrolls sideways; times in Asia/Shanghai when the browser's zone is Asia/Shanghai; the
 * numbered pagination's page jump without JavaScript.
 */
import { randomBytes } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Token } from '@switchyard/db/entities/token.ts';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '#app/domain/auth/session.server.ts';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready } from './harness.ts';

let h: Harness;
let orm: MikroORM;
let member: E2eUser;
let root: E2eUser;
const run = Date.now().toString(36).slice(-6);
const PHONE = { width: 390, height: 844 };
/** 2026-03-04 05:06:07 UTC = 13:06:07 in Shanghai */
const CREATED = Date.UTC(2026, 2, 4, 5, 6, 7) / 1000;

async function addTokens(userId: number, n: number, prefix: string) {
  const em = orm.em.fork();
  for (let i = 0; i < n; i++) {
    em.create(Token, {
      userId,
      name: `${prefix}${String(i).padStart(2, '0')}`,
      key: randomBytes(32).toString('hex').slice(0, 48),
    } as never);
  }
  await em.flush();
  await em.nativeUpdate(Token, { userId }, { createdTime: CREATED });
}

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
  member = await createE2eUser(orm, `mob_${run}`, { affCode: `mb${run}` });
  root = await createE2eUser(orm, `mobroot_${run}`, { affCode: `mr${run}`, role: 100 } as never);
  await addTokens(member.id, 25, 'mt');
});
afterAll(async () => {
  await h?.close();
  await orm?.close(true);
});

async function phone(mode: Mode, who: E2eUser | null = member): Promise<Page> {
  const page = await h.page(mode, PHONE);
  if (who) await signIn(h, mode, who);
  return page;
}

/** How far the document is wider than the viewport (0 = no sideways scrolling). */
const overflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe.each(MODES)('mobile shell with JavaScript %s', (mode: Mode) => {
  it('replaces the top nav and the sidebar with a menu button at 390px', async () => {
    const page = await phone(mode);
    await page.goto('/token');
    await ready(page, mode);
    expect(await page.locator('.topnav').isVisible()).toBe(false);
    expect(await page.getByTestId('sidebar').isVisible()).toBe(false);
    expect(await page.getByTestId('mobile-menu').isVisible()).toBe(true);
    // the header is one row, not a column of wrapped words
    const header = await page.locator('header.topbar').boundingBox();
    expect(header?.height ?? 999).toBeLessThan(80);
    // and on a desktop the button is not there
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await page.getByTestId('mobile-menu').isVisible()).toBe(false);
    expect(await page.locator('.topnav').isVisible()).toBe(true);
  });

  it('opens the menu and follows a console link', async () => {
    const page = await phone(mode);
    await page.goto('/pricing');
    await ready(page, mode);
    if (mode === 'js') {
      const button = page.getByRole('button', { name: '打开菜单' });
      await button.click();
      const drawer = page.getByRole('dialog', { name: '菜单' });
      await drawer.waitFor();
      // focus is inside the drawer, Escape closes it and gives the focus back to the button
      expect(await drawer.evaluate((d) => d.contains(document.activeElement))).toBe(true);
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      expect(await drawer.evaluate((d) => d.contains(document.activeElement))).toBe(true);
      await page.keyboard.press('Escape');
      await drawer.waitFor({ state: 'detached' });
      expect(await button.evaluate((b) => b === document.activeElement)).toBe(true);
      // open again and navigate: the drawer closes on the new page
      await button.click();
      await drawer
        .getByRole('navigation', { name: '控制台菜单' })
        .getByRole('link', { name: '令牌' })
        .click();
      await page.waitForURL((u) => u.pathname === '/token');
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
      // the top nav is in the drawer too
      await button.click();
      expect(
        await page.getByRole('dialog').getByRole('navigation', { name: '主导航' }).getByRole('link').count(),
      ).toBeGreaterThanOrEqual(6);
    } else {
      const summary = page.locator('details.mobile-menu > summary');
      expect((await summary.textContent())?.trim()).toBe('打开菜单');
      await summary.click();
      const panel = page.locator('details.mobile-menu .mobile-menu-panel');
      expect(await panel.isVisible()).toBe(true);
      await Promise.all([
        page.waitForURL((u) => u.pathname === '/token'),
        panel.getByRole('navigation', { name: '控制台菜单' }).getByRole('link', { name: '令牌' }).click(),
      ]);
      expect(await page.locator('tr[data-token-name^="mt"]').count()).toBe(10);
    }
  });

  it('shows a visitor the top navigation in the menu and no console entries', async () => {
    const page = await phone(mode, null);
    await page.goto('/pricing');
    await ready(page, mode);
    if (mode === 'js') await page.getByRole('button', { name: '打开菜单' }).click();
    else await page.locator('details.mobile-menu > summary').click();
    const box = mode === 'js' ? page.getByRole('dialog') : page.locator('.mobile-menu-panel');
    expect(await box.getByRole('link', { name: '模型价格' }).count()).toBe(1);
    expect(await box.getByRole('navigation', { name: '控制台菜单' }).count()).toBe(0);
  });

  it('never scrolls sideways at 390px', async () => {
    const pages = {
      visitor: ['/', '/pricing', '/about', '/download', '/login', '/register', '/reset', '/no/such/page'],
      member: ['/token', '/log', '/midjourney', '/topup', '/setting', '/token?page_size=10&p=2'],
      root: ['/channel', '/redemption', '/user', '/version', '/log', '/midjourney', '/setting?tab=operation'],
    };
    const wide: string[] = [];
    for (const [who, paths] of Object.entries(pages)) {
      const page = await phone(mode, who === 'visitor' ? null : who === 'root' ? root : member);
      for (const path of paths) {
        await page.goto(path);
        await ready(page, mode);
        const extra = await overflow(page);
        if (extra > 0) {
          // name what sticks out (outside a scroll box), so a failure says where to look
          const culprits = await page.evaluate(() =>
            [...document.querySelectorAll('body *')]
              .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
              .filter(
                (el) =>
                  !el.parentElement?.closest('.list-table-wrap') ||
                  getComputedStyle(el).position === 'absolute',
              )
              .slice(0, 5)
              .map((el) => `${el.tagName.toLowerCase()}.${String(el.className).split(' ')[0]}`),
          );
          wide.push(`${who} ${path}: ${extra}px (${culprits.join(', ')})`);
        }
      }
    }
    expect(wide).toEqual([]);
  });

  it('says that a wide table scrolls sideways, and lets the keyboard scroll it', async () => {
    const page = await phone(mode);
    await page.goto('/token');
    expect(await page.locator('.scroll-hint').first().isVisible()).toBe(true);
    const region = page.getByRole('region', { name: '可横向滚动的表格' });
    expect(await region.getAttribute('tabindex')).toBe('0');
    expect(await region.evaluate((r) => r.scrollWidth > r.clientWidth)).toBe(true);
  });
});

describe('numbered pagination', () => {
  it('jumps to a page with the GET form without JavaScript, keeping the page size', async () => {
    const page = await h.page('nojs');
    await signIn(h, 'nojs', member);
    await page.goto('/token?page_size=10');
    const nav = page.getByRole('navigation', { name: '分页' });
    expect(await nav.getByRole('link', { name: '第 3 页' }).count()).toBe(1);
    expect(await nav.getByRole('link', { name: '最后一页' }).getAttribute('href')).toContain('p=3');
    await nav.getByLabel('跳至').fill('3');
    await Promise.all([
      page.waitForURL((u) => u.searchParams.get('p') === '3'),
      nav.getByRole('button', { name: '跳转' }).click(),
    ]);
    const url = new URL(page.url());
    expect(url.searchParams.get('page_size')).toBe('10');
    expect(await nav.getByRole('link', { name: '第 3 页' }).getAttribute('aria-current')).toBe('page');
    expect(await page.locator('tr[data-token-name]').count()).toBe(5);
    // first / previous go back
    await Promise.all([
      page.waitForURL((u) => u.searchParams.get('p') === '1'),
      nav.getByRole('link', { name: '第一页' }).click(),
    ]);
    expect(await page.locator('tr[data-token-name]').count()).toBe(10);
    expect(await page.getByText('第 1 / 3 页，共 25 条').count()).toBe(1);
  });
});

describe('local time', () => {
  let ctx: BrowserContext;
  afterAll(async () => {
    await ctx?.close();
  });

  it('shows times in Asia/Shanghai when that is the browser zone (JavaScript sets the cookie)', async () => {
    ctx = await h.browser.newContext({
      baseURL: h.baseURL,
      locale: 'zh-CN',
      timezoneId: 'Asia/Shanghai',
      javaScriptEnabled: true,
    });
    await ctx.addCookies([{ name: SESSION_COOKIE, value: member.token, url: h.baseURL }]);
    const page = await ctx.newPage();
    await page.goto('/token?keyword=mt00');
    await ready(page, 'js');
    const row = page.locator('tr[data-token-name="mt00"]');
    await expect.poll(() => row.textContent()).toContain('2026-03-04 13:06:07');
    expect((await ctx.cookies()).find((c) => c.name === 'tz')?.value).toBe('Asia%2FShanghai');
    // the next page is rendered in the zone by the server
    const html = await (await ctx.request.get(`${h.baseURL}/token?keyword=mt00`)).text();
    expect(html).toContain('2026-03-04 13:06:07');
  });

  it('shows UTC until the zone is known, and takes a zone from the settings form without JavaScript', async () => {
    const page = await h.page('nojs');
    await signIn(h, 'nojs', member);
    await page.goto('/token?keyword=mt00');
    expect(await page.locator('tr[data-token-name="mt00"]').textContent()).toContain('2026-03-04 05:06:07');
    await page.goto('/setting?tab=personal');
    const form = page.getByTestId('timezone-form');
    await form.getByLabel('时区').selectOption('Asia/Shanghai');
    await Promise.all([page.waitForURL(/\/setting/), form.getByRole('button', { name: '保存时区' }).click()]);
    await page.goto('/token?keyword=mt00');
    expect(await page.locator('tr[data-token-name="mt00"]').textContent()).toContain('2026-03-04 13:06:07');
  });
});
