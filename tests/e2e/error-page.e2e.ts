/**
 * The root error page (issue 15): when a page's loaders fail, the answer is HTTP 500 with the seed's message
 * ('internal server error, contact administrator') and a retry link that loads the same address again, with
 * JavaScript on and off.
 *
 * The failure is real: the built server bundle the product runs is called here with services that throw on
 * every use (as when the database is gone), and the browser receives its answer for a console address.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequestHandler, type ServerBuild } from '@remix-run/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, launch, MODES, type Mode, ready } from './harness.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let h: Harness;
let handler: (request: Request) => Promise<Response>;

beforeAll(async () => {
  h = await launch();
  const build = (await import(path.join(root, 'build/server/index.js'))) as ServerBuild;
  const remix = createRequestHandler(build, 'production');
  const broken = new Proxy(
    {},
    {
      get() {
        throw new Error('database unavailable (e2e)');
      },
    },
  );
  handler = (request) => remix(request, { services: broken } as never);
});
afterAll(async () => {
  await h?.close();
});

describe.each(MODES)('500 page with JavaScript %s', (mode: Mode) => {
  it("shows the seed's message and a retry link to the same address", async () => {
    const page = await h.page(mode);
    const hits: string[] = [];
    await page.route(
      (url) => url.pathname === '/pricing',
      async (route) => {
        hits.push(route.request().url());
        const request = new Request(route.request().url(), {
          headers: { 'Accept-Language': 'zh-CN', Accept: 'text/html' },
        });
        // the page's data requests fail the same way once JavaScript is on
        const res = await handler(request);
        await route.fulfill({
          status: res.status,
          headers: Object.fromEntries(res.headers),
          body: Buffer.from(await res.arrayBuffer()),
        });
      },
    );
    const res = await page.goto('/pricing?sort=a&group=b');
    expect(res?.status()).toBe(500);
    await ready(page, mode);
    expect(await page.locator('h1').textContent()).toBe('出错了');
    expect(await page.getByTestId('error-message').textContent()).toBe('服务器内部错误，请联系管理员');
    const retry = page.getByRole('link', { name: '重试' });
    expect(await retry.getAttribute('href')).toBe('/pricing?sort=a&group=b');
    expect(await page.getByRole('link', { name: '返回首页' }).getAttribute('href')).toBe('/');
    // the retry link loads the page again (a full request, with or without JavaScript)
    await Promise.all([page.waitForRequest((r) => r.url().includes('/pricing?sort=a')), retry.click()]);
    await expect.poll(() => hits.length).toBeGreaterThanOrEqual(2);
    expect(await page.getByTestId('error-message').textContent()).toBe('服务器内部错误，请联系管理员');
  });
});
