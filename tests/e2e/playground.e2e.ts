/**
 * The playground (seed 001 §2.14, §4 "Playground message") with JavaScript on and off, against the product's own
 * relay in front of this file's fake upstream (its rules: a slow stream, so the reply is seen in parts):
 * - with JavaScript the reply streams through /pg/chat/completions: it shows in parts (incomplete), then
 *   complete; the temperature slider works from the keyboard; the call is billed to the user and logged as
 *   playground-default;
 * - without JavaScript the form posts and the page shows the full reply, the conversation carried to the next
 *   turn;
 * - a model the relay has no channel for shows on the page as the reply marked error with the relay's message
 *   (it was a plain-text 500 in the built product);
 * - the expired=1 notice; at 390 px nothing scrolls sideways.
 */
import { createRequire } from 'node:module';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Ability } from '@switchyard/db/entities/ability.ts';
import { Channel } from '@switchyard/db/entities/channel.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready } from './harness.ts';

/** Registers nothing: for a case that exists only in one mode. */
const noTest = (..._args: unknown[]) => undefined;

let h: Harness;
let orm: MikroORM;
let fake: FakeOpenAI;
let admin: E2eUser;
const run = Date.now().toString(36).slice(-6);
const MODEL = `pg-e2e-${run}`;
const STALE = `pg-stale-${run}`;
const REPLY = 'one two three four five six';
const QUOTA = 50_000_000;
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

async function api(who: E2eUser, path: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(`${h.baseURL}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      'Content-Type': 'application/json',
      Cookie: `sy_session=${who.token}`,
      'New-Api-User': String(who.id),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const body = (await res.json()) as { success: boolean; message: string; data: unknown };
  if (!body.success) throw new Error(`${path}: ${body.message}`);
  return body.data;
}

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
  fake = await startFakeOpenAI();
  // Six word chunks 400 ms apart: the page shows the reply in parts before it completes.
  fake.on({ model: MODEL, path: '/chat/completions', respond: { content: REPLY, streamDelayMs: 400 } });
  admin = await createE2eUser(orm, `pgadm_${run}`, { role: Role.Admin });

  // A stale route: a disabled channel whose ability still says enabled. The page lists the model; the relay
  // has no channel for it.
  const em = orm.em.fork();
  const stale = em.create(Channel, {
    name: `pg-stale-${run}`,
    type: 1,
    key: 'sk-stale',
    models: STALE,
    group: 'default',
    status: 2,
  } as never);
  await em.flush();
  em.create(Ability, {
    group: 'default',
    model: STALE,
    channelId: stale.id,
    enabled: true,
    priority: 0,
    weight: 0,
  } as never);
  await em.flush();

  // The served model: a channel made through the console (so the relay reloads its routes), and prices for both.
  await api(admin, '/api/channel/', {
    method: 'POST',
    body: { name: `pg-${run}`, key: 'sk-pg', base_url: fake.url, models: MODEL, groups: ['default'] },
  });
  const options = (await api(admin, '/api/option/')) as { key: string; value: string }[];
  const ratios = JSON.parse(options.find((o) => o.key === 'ModelRatio')?.value || '{}') as Record<
    string,
    number
  >;
  await api(admin, '/api/option/', {
    method: 'PUT',
    body: { key: 'ModelRatio', value: JSON.stringify({ ...ratios, [MODEL]: 1, [STALE]: 1 }) },
  });
});

afterAll(async () => {
  await h?.close();
  await orm?.close(true);
  await fake?.close();
});

async function signedIn(
  mode: Mode,
  who: E2eUser,
  viewport?: { width: number; height: number },
): Promise<Page> {
  const page = await h.page(mode, viewport);
  await signIn(h, mode, who);
  return page;
}

const messages = (page: Page) => page.getByTestId('pg-message');
const lastReply = (page: Page) => page.locator('[data-testid="pg-message"][data-role="assistant"]').last();
const replyState = async (page: Page) => {
  const reply = lastReply(page);
  if ((await reply.count()) === 0) return null;
  return {
    status: await reply.getAttribute('data-status'),
    text: (await reply.locator('.pg-msg-text').textContent()) ?? '',
  };
};

/** Sends the question: with JavaScript it streams in place; without, the form posts and the page comes back. */
async function ask(page: Page, mode: Mode, question: string) {
  await page.getByLabel('消息').fill(question);
  const send = page.getByRole('button', { name: '发送' });
  if (mode === 'js') await send.click();
  else
    await Promise.all([
      page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'POST'),
      send.click(),
    ]);
  if (mode === 'nojs') await page.waitForLoadState('load');
}

async function playgroundLogs(userId: number) {
  return orm.em.fork().find(Log, { userId, type: LogType.Consume }, { orderBy: { id: 'asc' } });
}

describe.each(MODES)('playground with JavaScript %s', (mode: Mode) => {
  let user: E2eUser;
  beforeAll(async () => {
    user = await createE2eUser(orm, `pg_${mode}${run}`, { quota: QUOTA } as never);
  });

  it('answers a question: streamed in parts with JavaScript, whole without; billed and logged', async () => {
    const page = await signedIn(mode, user);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const res = await page.goto('/playground');
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('操练场');
    await ready(page, mode);
    expect(await page.getByLabel('系统提示词').inputValue()).toBe('You are a helpful assistant');
    expect(await page.getByLabel('最大 Token 数').inputValue()).toBe('0');
    await page.getByLabel('模型', { exact: true }).selectOption(MODEL);
    if (mode === 'js') {
      // the temperature slider from the keyboard: 0.7 -> 0.8
      const slider = page.getByRole('slider', { name: '温度' });
      await slider.focus();
      await page.keyboard.press('ArrowRight');
      await expect.poll(() => page.getByTestId('pg-temperature').textContent()).toBe('0.8');
    } else {
      expect(await page.getByLabel('温度').inputValue()).toBe('0.7');
      await page.getByLabel('温度').fill('0.8');
    }

    await ask(page, mode, 'count to six');
    if (mode === 'js') {
      // seen in parts: some words, not all, while the message is incomplete
      await expect
        .poll(
          async () => {
            const s = await replyState(page);
            return s?.status === 'incomplete' && s.text.length > 0 && s.text.length < REPLY.length;
          },
          { timeout: 10_000, interval: 50 },
        )
        .toBe(true);
    }
    await expect
      .poll(() => replyState(page), { timeout: 15_000 })
      .toEqual({ status: 'complete', text: REPLY });
    expect(await page.getByTestId('pg-state').textContent()).toBe('回复完成');
    const sent = fake.requests.filter((r) => r.body?.model === MODEL).at(-1)?.body ?? {};
    expect(sent).toMatchObject({
      temperature: 0.8,
      stream: mode === 'js',
      messages: [
        { role: 'system', content: 'You are a helpful assistant' },
        { role: 'user', content: 'count to six' },
      ],
    });

    // billed to the user, logged under playground-<group>
    await expect
      .poll(async () => (await playgroundLogs(user.id)).map((l) => l.tokenName), { timeout: 10_000 })
      .toEqual(['playground-default']);
    const [log] = await playgroundLogs(user.id);
    expect(log?.modelName).toBe(MODEL);
    const row = await orm.em.fork().findOneOrFail(User, { id: user.id });
    expect(Number(row.quota)).toBe(QUOTA - Number(log?.quota));
    expect(Number(log?.quota)).toBeGreaterThan(0);

    // the next turn carries the conversation
    await ask(page, mode, 'again');
    await expect.poll(() => messages(page).count(), { timeout: 15_000 }).toBe(4);
    await expect
      .poll(() => replyState(page), { timeout: 15_000 })
      .toEqual({ status: 'complete', text: REPLY });
    expect(fake.requests.filter((r) => r.body?.model === MODEL).at(-1)?.body?.messages).toEqual([
      { role: 'system', content: 'You are a helpful assistant' },
      { role: 'user', content: 'count to six' },
      { role: 'assistant', content: REPLY },
      { role: 'user', content: 'again' },
    ]);

    // clear context
    if (mode === 'js') await page.getByRole('button', { name: '清空上下文' }).click();
    else
      await Promise.all([
        page.waitForURL('**/playground'),
        page.getByRole('button', { name: '清空上下文' }).click(),
      ]);
    await expect.poll(() => messages(page).count()).toBe(0);
    expect(errors).toEqual([]);
  }, 90_000);

  // defined only with JavaScript (not a skipped test without it)
  (mode === 'js' ? it : (noTest as typeof it))(
    'stops a streaming reply: what arrived stays as the complete reply, and is billed',
    async () => {
      const stopper = await createE2eUser(orm, `pgstop_${run}`, { quota: QUOTA } as never);
      const page = await signedIn(mode, stopper);
      await page.goto('/playground');
      await ready(page, mode);
      await page.getByLabel('模型', { exact: true }).selectOption(MODEL);
      // sent from the keyboard (Ctrl + Enter); the keyboard stays in the message box
      await page.getByLabel('消息').fill('count slowly');
      await page.getByLabel('消息').press('Control+Enter');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('pg-question');
      await expect
        .poll(async () => (await replyState(page))?.status, { timeout: 10_000, interval: 50 })
        .toBe('incomplete');
      await page.getByRole('button', { name: '停止生成' }).click();
      await expect.poll(async () => (await replyState(page))?.status).toBe('complete');
      const text = (await replyState(page))?.text ?? '';
      expect(text.length).toBeGreaterThan(0);
      expect(text.length).toBeLessThan(REPLY.length);
      expect(REPLY.startsWith(text)).toBe(true);
      await expect.poll(() => page.getByRole('button', { name: '发送' }).isEnabled()).toBe(true);
      await expect
        .poll(async () => (await playgroundLogs(stopper.id)).map((l) => l.tokenName), { timeout: 15_000 })
        .toEqual(['playground-default']);
    },
    60_000,
  );

  it('shows a model without a channel as the reply marked error, with the relay message', async () => {
    const page = await signedIn(mode, user);
    await page.goto('/playground');
    await ready(page, mode);
    await page.getByLabel('模型', { exact: true }).selectOption(STALE);
    await ask(page, mode, 'hello');
    await expect
      .poll(() => replyState(page), { timeout: 15_000 })
      .toEqual({ status: 'error', text: `no available channel for model ${STALE} in group default` });
    expect(await lastReply(page).textContent()).toContain('出错');
  }, 60_000);

  it('shows the expired notice, and fits a 390 px screen', async () => {
    const page = await signedIn(mode, user, { width: 390, height: 844 });
    await page.goto('/playground?expired=1');
    await ready(page, mode);
    expect(await page.getByTestId('pg-expired').textContent()).toBe('未登录或登录已过期，请重新登录');
    const box = await page.getByRole('button', { name: '发送' }).boundingBox();
    expect(box && box.x + box.width).toBeLessThanOrEqual(390);
    if (mode === 'js') {
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      // axe-core on the playground itself (the page's <main>): no serious or critical violation
      await page.getByLabel('模型', { exact: true }).selectOption(MODEL);
      await page.getByLabel('消息').fill('hi');
      await page.getByRole('button', { name: '发送' }).click();
      await expect.poll(async () => (await replyState(page))?.status, { timeout: 15_000 }).toBe('complete');
      await page.addScriptTag({ path: AXE });
      const violations = await page.evaluate(async () => {
        const axe = (
          window as unknown as {
            axe: {
              run(
                c: unknown,
              ): Promise<{ violations: { id: string; impact: string; nodes: { target: unknown }[] }[] }>;
            };
          }
        ).axe;
        const result = await axe.run({ include: [['.pg-page']] });
        return result.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id}: ${JSON.stringify(v.nodes.map((n) => n.target))}`);
      });
      expect(violations).toEqual([]);
    }
  });
});
