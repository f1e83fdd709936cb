/**
 * Browser harness: one chromium (Debian /usr/bin/chromium through playwright-core) and two contexts, one with
 * JavaScript and one with `javaScriptEnabled: false`, so every behaviour can be checked with and without JS.
 */
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { inject } from 'vitest';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

export type Mode = 'js' | 'nojs';
export const MODES: Mode[] = ['js', 'nojs'];

export type Harness = {
  baseURL: string;
  browser: Browser;
  contexts: Record<Mode, BrowserContext>;
  /** a fresh page in the given context, cookies cleared, at the given size */
  page(mode: Mode, viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
};

export function baseURL(): string {
  return process.env.E2E_BASE_URL?.replace(/\/$/, '') ?? inject('baseURL');
}

export async function launch(): Promise<Harness> {
  const url = baseURL();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
  // The product's audience reads Chinese: the browser asks for zh-CN like theirs would.
  const common = { baseURL: url, locale: 'zh-CN', viewport: { width: 1280, height: 800 } };
  const contexts: Record<Mode, BrowserContext> = {
    js: await browser.newContext({ ...common, javaScriptEnabled: true }),
    nojs: await browser.newContext({ ...common, javaScriptEnabled: false }),
  };
  const pages: Page[] = [];
  return {
    baseURL: url,
    browser,
    contexts,
    async page(mode, viewport) {
      await Promise.all(pages.splice(0).map((p) => p.close().catch(() => {})));
      const context = contexts[mode];
      await context.clearCookies();
      const page = await context.newPage();
      if (viewport) await page.setViewportSize(viewport);
      pages.push(page);
      return page;
    },
    async close() {
      await browser.close();
    },
  };
}

/** With JavaScript, wait until React has hydrated (root.tsx sets <html data-hydrated>); no-op without JS. */
export async function ready(page: Page, mode: Mode): Promise<void> {
  if (mode === 'js')
    await page.waitForSelector('html[data-hydrated="true"]', { state: 'attached', timeout: 15_000 });
}

/**
 * Runs `act` (a click that submits a form) and waits until its effect is stored. Without JavaScript the form
 * posts natively and the answer redirects back, so wait for the next document; with JavaScript a fetcher
 * posts in place (the UI updates optimistically), so wait for the POST's answer.
 */
export async function submit(page: Page, mode: Mode, act: () => Promise<void>): Promise<void> {
  const done =
    mode === 'js'
      ? page.waitForResponse((r) => r.request().method() === 'POST')
      : page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'GET');
  await Promise.all([done, act()]);
  if (mode === 'nojs') await page.waitForLoadState('load');
}
