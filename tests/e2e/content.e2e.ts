/**
 * Content pages and chat pages (seed 001 §2.1, §2.2, §2.15) with JavaScript on and off: a chat page shows the
 * configured chat in a frame filled with the user's first enabled token and the server address, with one tab
 * per chat and no sidebar; without an enabled token it says so and moves to /token; /chat2link answers 302 to
 * the filled link; home renders Markdown HomePageContent (its script shown as text); the notice is a dialog
 * (a block without JavaScript) that stays closed once dismissed; /guide shows this site's address and a model
 * from /api/pricing. The options it changes are restored in afterAll.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Ability } from '@switchyard/db/entities/ability.ts';
import { Token, TokenStatus } from '@switchyard/db/entities/token.ts';
import {
  defaultOptionValues,
  type OptionKey,
  serializeOptionValue,
} from '@switchyard/db/options/registry.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createRedisPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready } from './harness.ts';

let h: Harness;
let orm: MikroORM;
let pubsub: PubSub;
let options: OptionService;
const run = Date.now().toString(36).slice(-6);
const TOUCHED: OptionKey[] = [
  'Chats',
  'ServerAddress',
  'HomePageContent',
  'Notice',
  'SelfUseModeEnabled',
  'DemoSiteEnabled',
];
const ADDRESS = `https://api-${run}.e2e.test`;
/** Port 9 (discard) is closed: the frame fails at once instead of waiting on DNS. */
const CHATS = [
  { [`E2E Chat ${run}`]: 'http://127.0.0.1:9/#/?settings={"key":"{key}","url":"{address}"}' },
  { [`Second ${run}`]: 'http://127.0.0.1:9/second?k={key}' },
];
const MODEL = `e2e-content-${run}`;
const CHANNEL_ID = 900_000 + Math.floor(Math.random() * 90_000);
const NOTICE = `Maintenance window ${run}: **tonight**`;

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
  pubsub = await createRedisPubSub(inject('redisURL'));
  options = new OptionService({ orm, pubsub });
  await options.load();
  await options.set('Chats', JSON.stringify(CHATS), 1);
  await options.set('ServerAddress', ADDRESS, 1);
  await options.set(
    'HomePageContent',
    `# Welcome ${run}\n\nSome **bold** text.\n\n<script>window.pwned=1</script>`,
    1,
  );
  await options.set('Notice', NOTICE, 1);
  const em = orm.em.fork();
  em.create(Ability, { group: 'default', model: MODEL, channelId: CHANNEL_ID, enabled: true } as never);
  await em.flush();
  await waitForStatus((s) => s.server_address === ADDRESS && s.chats.length === CHATS.length);
});

afterAll(async () => {
  if (options) {
    const defaults = defaultOptionValues();
    for (const key of TOUCHED) await options.set(key, serializeOptionValue(key, defaults[key] as never), 1);
    await options.close();
  }
  await orm?.em.fork().nativeDelete(Ability, { channelId: CHANNEL_ID });
  await pubsub?.close();
  await h?.close();
  await orm?.close(true);
});

type Status = {
  server_address: string;
  chats: unknown[];
  self_use_mode_enabled: boolean;
  demo_site_enabled: boolean;
};

/** Waits until the running product's status satisfies `ok` (option changes travel through Redis). */
async function waitForStatus(ok: (s: Status) => boolean) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const body = (await (await fetch(`${h.baseURL}/api/status`)).json()) as { data: Status };
    if (ok(body.data)) return;
    if (Date.now() > deadline) throw new Error('the product did not pick up the options');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function addToken(user: E2eUser, key: string, status: number = TokenStatus.Enabled) {
  const em = orm.em.fork();
  em.create(Token, { userId: user.id, key, name: key.slice(0, 8), status, unlimitedQuota: true } as never);
  await em.flush();
}

const key = (c: string) => `${c}${run}`.padEnd(48, c).slice(0, 48);

async function open(page: Page, mode: Mode, path: string) {
  const res = await page.goto(path);
  await ready(page, mode);
  return res;
}

describe.each(MODES)('content pages with JavaScript %s', (mode: Mode) => {
  const p = `${mode}${run}`;

  it('chat page: the configured chat in a frame with the first enabled token and the address; one tab per chat; no sidebar', async () => {
    const user = await createE2eUser(orm, `chat_${p}`);
    const tokenKey = key(mode === 'js' ? 'a' : 'b');
    await addToken(user, key(mode === 'js' ? 'y' : 'z'), TokenStatus.Disabled);
    await addToken(user, tokenKey);
    const page = await h.page(mode);
    await signIn(h, mode, user);
    const res = await open(page, mode, '/chat');
    expect(res?.status()).toBe(200);
    const frame = page.getByTestId('chat-frame');
    const expected = `http://127.0.0.1:9/#/?settings={"key":"sk-${tokenKey}","url":"${encodeURIComponent(ADDRESS)}"}`;
    expect(await frame.getAttribute('src')).toBe(expected);
    expect(await frame.getAttribute('title')).toContain(`E2E Chat ${run}`);
    expect(await page.locator('.shell').getAttribute('data-sidebar')).toBe('none');

    if (mode === 'js') {
      const tabs = page.getByRole('tab');
      expect(await tabs.count()).toBe(2);
      expect(await tabs.first().getAttribute('aria-selected')).toBe('true');
      // keyboard: arrows move between tabs, Enter opens the focused one
      await tabs.first().focus();
      await page.keyboard.press('ArrowRight');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(`Second ${run}`);
      await Promise.all([page.waitForURL('**/chat/1'), page.keyboard.press('Enter')]);
      await expect.poll(() => frame.getAttribute('src')).toBe(`http://127.0.0.1:9/second?k=sk-${tokenKey}`);
      expect(await page.getByRole('tab', { name: `Second ${run}` }).getAttribute('aria-selected')).toBe(
        'true',
      );
    } else {
      // the react-aria tab list (unselected tabs are tabindex=-1) gives way to plain links
      expect(await page.locator('.chat-tablist').isVisible()).toBe(false);
      const links = page.getByRole('navigation', { name: '聊天应用' }).getByRole('link');
      expect(await links.count()).toBe(2);
      await Promise.all([page.waitForURL('**/chat/1'), links.nth(1).click()]);
      expect(await page.getByTestId('chat-frame').getAttribute('src')).toBe(
        `http://127.0.0.1:9/second?k=sk-${tokenKey}`,
      );
    }
  });

  it('chat page without an enabled token: the message, then /token after 1.5 s', async () => {
    const user = await createE2eUser(orm, `notok_${p}`);
    await addToken(user, key(mode === 'js' ? 'c' : 'd'), TokenStatus.Disabled);
    const page = await h.page(mode);
    await signIn(h, mode, user);
    const started = Date.now();
    await open(page, mode, '/chat/0');
    await expect
      .poll(() => page.getByTestId('chat-no-token').textContent(), { timeout: 1_000 })
      .toContain('当前没有可用的启用令牌，请确认是否有令牌处于启用状态！');
    await page.waitForURL('**/token', { timeout: 8_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it('a bad chat index says the chat link configuration is wrong (404)', async () => {
    const user = await createE2eUser(orm, `badix_${p}`);
    await addToken(user, key(mode === 'js' ? 'e' : 'f'));
    const page = await h.page(mode);
    await signIn(h, mode, user);
    const res = await open(page, mode, '/chat/7');
    expect(res?.status()).toBe(404);
    expect(await page.getByTestId('chat-config-error').textContent()).toBe('聊天链接配置错误，请联系管理员');
  });

  it('/chat2link redirects (302) to the first chat filled with the first enabled token; a visitor logs in first', async () => {
    const user = await createE2eUser(orm, `c2l_${p}`);
    const tokenKey = key(mode === 'js' ? 'g' : 'h');
    await addToken(user, tokenKey);
    await h.page(mode);
    const visitor = await h.contexts[mode].request.get('/chat2link', { maxRedirects: 0 });
    expect(visitor.status()).toBe(302);
    expect(visitor.headers().location).toMatch(/^\/login/);
    await signIn(h, mode, user);
    const res = await h.contexts[mode].request.get('/chat2link', { maxRedirects: 0 });
    expect(res.status()).toBe(302);
    expect(res.headers().location).toBe(
      `http://127.0.0.1:9/#/?settings={"key":"sk-${tokenKey}","url":"${encodeURIComponent(ADDRESS)}"}`,
    );
  });

  it('home renders Markdown HomePageContent; the notice shows until dismissed, then stays closed', async () => {
    const page = await h.page(mode);
    // with JavaScript the footer is refreshed from /api/status after load (seed 001 §9)
    const polled = mode === 'js' ? page.waitForResponse((r) => r.url().endsWith('/api/status')) : null;
    await open(page, mode, '/');
    if (polled) expect((await polled).status()).toBe(200);
    const notice = page.getByTestId('notice');
    await expect.poll(() => notice.isVisible()).toBe(true);
    expect(await notice.textContent()).toContain(`Maintenance window ${run}`);
    expect(await notice.locator('strong').textContent()).toBe('tonight');
    if (mode === 'js') expect(await page.getByRole('dialog').count()).toBe(1);

    const content = page.getByTestId('home-content');
    expect(await content.getByRole('heading', { level: 1 }).textContent()).toBe(`Welcome ${run}`);
    expect(await content.locator('strong').textContent()).toBe('bold');
    expect(await content.textContent()).toContain('<script>window.pwned=1</script>');
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned ?? 0)).toBe(0);

    const dismiss = page.getByRole('button', { name: '关闭公告' });
    if (mode === 'js') {
      await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), dismiss.click()]);
      await expect.poll(() => page.getByTestId('notice').count()).toBe(0);
    } else {
      await Promise.all([page.waitForURL((u) => u.pathname === '/'), dismiss.click()]);
      expect(await page.getByTestId('notice').count()).toBe(0);
    }
    await open(page, mode, '/');
    expect(await page.getByTestId('home-content').isVisible()).toBe(true);
    expect(await page.getByTestId('notice').count()).toBe(0);
  });

  it("/guide shows this site's address and a model from /api/pricing in the examples", async () => {
    const pricing = (await (await fetch(`${h.baseURL}/api/pricing`)).json()) as {
      data: Array<{ model_name: string }>;
    };
    const models = pricing.data.map((m) => m.model_name);
    expect(models).toContain(MODEL);
    const page = await h.page(mode);
    const res = await open(page, mode, '/guide');
    expect(res?.status()).toBe(200);
    expect(await page.getByTestId('guide-address').textContent()).toBe(ADDRESS);
    expect(await page.getByTestId('guide-base-url').textContent()).toBe(`${ADDRESS}/v1`);
    const curl = (await page.getByTestId('snippet-curl').locator('code').textContent()) ?? '';
    expect(curl).toContain(`${ADDRESS}/v1/chat/completions`);
    const model = /"model": "([^"]+)"/.exec(curl)?.[1] ?? '';
    expect(models).toContain(model);
    expect(await page.getByTestId('snippet-python').textContent()).toContain(`model="${model}"`);
    expect(await page.getByTestId('snippet-javascript').textContent()).toContain(`baseURL: "${ADDRESS}/v1"`);
    const copyButtons = page.getByRole('button', { name: /^复制/ });
    expect(await copyButtons.count()).toBe(mode === 'js' ? 8 : 0);
  });
});

describe.each(MODES)('site badges with JavaScript %s', (mode: Mode) => {
  it('self-use mode and demo site show their badges, and self-use mode hides sign-up', async () => {
    await options.set('SelfUseModeEnabled', true, 1);
    await options.set('DemoSiteEnabled', true, 1);
    try {
      await options.set('HomePageContent', '', 1);
      await options.set('Notice', '', 1);
      await waitForStatus((s) => s.self_use_mode_enabled === true && s.demo_site_enabled === true);
      await expect
        .poll(async () =>
          (await (await fetch(`${h.baseURL}/`)).text()).includes('data-testid="home-default"'),
        )
        .toBe(true);
      const page = await h.page(mode);
      await open(page, mode, '/');
      const header = page.locator('header');
      expect(await header.getByText('自用模式', { exact: true }).isVisible()).toBe(true);
      expect(await header.getByText('演示站点', { exact: true }).isVisible()).toBe(true);
      expect(await page.getByRole('link', { name: '注册' }).count()).toBe(0);
      expect(await page.getByTestId('home-default').getByRole('link', { name: '登录' }).count()).toBe(1);
    } finally {
      await options.set('SelfUseModeEnabled', false, 1);
      await options.set('DemoSiteEnabled', false, 1);
    }
  });
});
