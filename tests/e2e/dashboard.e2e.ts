/**
 * The data dashboard (issue 15) after real relay calls: a user calls a model of a fake upstream three times through
 * the product, Billing writes quota_data; the reconciliation job (ADR 026) run against the product's database
 * finds nothing to change, and rebuilds exactly what is deleted. /detail then shows the model in a server-drawn
 * SVG chart without JavaScript, a tooltip with it (hover and the keyboard), the data table, the user's time zone
 * from the cookie, and fits a 390 px screen; /api/data/self/ answers the same rows.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Token } from '@switchyard/db/entities/token.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createRedisPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { reconcileQuotaData } from '#app/domain/dashboard/reconcile.server.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, ready } from './harness.ts';

let h: Harness;
let orm: MikroORM;
let pubsub: PubSub;
let options: OptionService;
let fake: FakeOpenAI;
let user: E2eUser;
let admin: E2eUser;
const run = Date.now().toString(36).slice(-6);
const model = `dash-model-${run}`;
const SECRET = 'sk-dash-upstream';
const PROMPT = 120;
const COMPLETION = 30;
let ratiosBefore: Record<string, number> = {};

const api = (who: E2eUser) => ({
  'Content-Type': 'application/json',
  Cookie: `sy_session=${who.token}`,
  'New-Api-User': String(who.id),
});

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
  pubsub = await createRedisPubSub(inject('redisURL'));
  options = new OptionService({ orm, pubsub });
  await options.load();
  fake = await startFakeOpenAI({ keys: [SECRET], models: [model] });
  fake.on({
    model,
    path: '/chat/completions',
    respond: { usage: { prompt_tokens: PROMPT, completion_tokens: COMPLETION } },
  });
  admin = await createE2eUser(orm, `dadm_${run}`, { role: Role.Admin });
  user = await createE2eUser(orm, `dusr_${run}`, { role: Role.User, quota: 10_000_000 } as never);

  // The model is priced (ratio 1) and served by a channel to the fake upstream.
  ratiosBefore = { ...(options.get('ModelRatio') as Record<string, number>) };
  await options.set('ModelRatio', { ...ratiosBefore, [model]: 1 }, admin.id);
  await options.set('DataExportEnabled', true, admin.id);
  const channel = await fetch(`${h.baseURL}/api/channel/`, {
    method: 'POST',
    headers: api(admin),
    body: JSON.stringify({
      name: `dash_${run}`,
      key: SECRET,
      base_url: fake.url,
      models: model,
      groups: ['default'],
    }),
  });
  expect(((await channel.json()) as { success: boolean }).success).toBe(true);
  const token = await fetch(`${h.baseURL}/api/token/`, {
    method: 'POST',
    headers: api(user),
    body: JSON.stringify({ name: `dtok_${run}`, remain_quota: 0, unlimited_quota: true, expired_time: -1 }),
  });
  expect(((await token.json()) as { success: boolean }).success).toBe(true);
  const key = (await orm.em.fork().findOneOrFail(Token, { userId: user.id })).key;

  // Three calls through the product's own origin.
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${h.baseURL}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer sk-${key}` },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: `hello ${i}` }] }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    await res.text();
  }
});

afterAll(async () => {
  await options?.set('ModelRatio', ratiosBefore, admin?.id ?? 1).catch(() => {});
  await options?.close();
  await pubsub?.close();
  await fake?.close();
  await h?.close();
  await orm?.close(true);
});

/**
 * axe-core on the dashboard's own content (the shell has its own checks): serious and critical violations. Needs
 * JavaScript in the page (the no-JS markup is the same, server-rendered).
 */
async function axeViolations(page: Page): Promise<string[]> {
  const source = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.addScriptTag({ content: source });
  return page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is injected as a global
    const axe = (window as any).axe;
    const result = await axe.run({ include: [['.dash-page']] }, { resultTypes: ['violations'] });
    return (result.violations as { id: string; impact: string; nodes: unknown[] }[])
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.nodes.length})`);
  });
}

type QD = { count: number; quota: string | number; token_used: string | number; created_at: string | number };
const rows = async () =>
  (await orm.em
    .getConnection()
    .execute(
      'select count, quota, token_used, created_at from quota_data where user_id = ? and model_name = ?',
      [user.id, model],
    )) as QD[];
const sum = (r: QD[]) => ({
  count: r.reduce((a, x) => a + Number(x.count), 0),
  tokens: r.reduce((a, x) => a + Number(x.token_used), 0),
  quota: r.reduce((a, x) => a + Number(x.quota), 0),
});

describe('data dashboard after relay calls', () => {
  it('Billing wrote quota_data; the job changes nothing, and rebuilds deleted rows exactly', async () => {
    // Usage reaches Billing asynchronously (the relay's outbox).
    await expect.poll(async () => sum(await rows()).count, { timeout: 15_000 }).toBe(3);
    const billed = sum(await rows());
    expect(billed.tokens).toBe(3 * (PROMPT + COMPLETION));
    expect(billed.quota).toBeGreaterThan(0);
    const hours = (await rows()).map((r) => Number(r.created_at));
    const range = { from: Math.min(...hours), to: Math.max(...hours) + 3600 };
    const first = await reconcileQuotaData(() => orm.em.fork(), range);
    expect(first).toMatchObject({ ran: true, upserted: 0, deleted: 0 });
    await orm.em.getConnection().execute('delete from quota_data where user_id = ?', [user.id]);
    const rebuilt = await reconcileQuotaData(() => orm.em.fork(), range);
    expect(rebuilt.upserted).toBeGreaterThanOrEqual(1);
    expect(sum(await rows())).toEqual(billed);
    expect((await reconcileQuotaData(() => orm.em.fork(), range)).upserted).toBe(0);

    const now = Math.floor(Date.now() / 1000);
    const res = await fetch(
      `${h.baseURL}/api/data/self/?start_timestamp=${now - 86_400}&end_timestamp=${now + 3600}`,
      {
        headers: api(user),
      },
    );
    const body = (await res.json()) as { success: boolean; data: { model_name: string; count: number }[] };
    expect(body.success).toBe(true);
    expect(body.data.filter((d) => d.model_name === model).reduce((a, d) => a + d.count, 0)).toBe(3);
  });

  it('without JavaScript: the SVG chart with the model, the summary and the data table', async () => {
    const page = await h.page('nojs');
    await signIn(h, 'nojs', user);
    await page.goto('/detail');
    await page.getByRole('heading', { name: '数据看板' }).waitFor();
    const chart = page.locator('figure.dash-chart svg.dash-svg').first();
    await expect.poll(() => chart.count()).toBe(1);
    expect(await page.locator('.dash-legend-inline').first().textContent()).toContain(model);
    // the column of the current hour names the model and its quota in its <title> (the native tooltip)
    const titles = await page.locator('svg.dash-svg rect.dash-hit title').allTextContents();
    expect(titles.some((t) => t.includes(model))).toBe(true);
    expect(await page.getByTestId('sum-count').textContent()).toContain('3');
    expect(await page.getByTestId('sum-tokens').textContent()).toContain(String(3 * (PROMPT + COMPLETION)));
    await page.getByText('显示数据表').click();
    const row = page.getByTestId('dash-row').filter({ hasText: model });
    expect(await row.count()).toBeGreaterThanOrEqual(1);
    // the granularity form works as a plain GET
    await page.getByLabel('时间粒度').selectOption('day');
    await Promise.all([
      page.waitForURL(/granularity=day/),
      page.getByRole('button', { name: '查询' }).click(),
    ]);
    expect(await page.locator('svg.dash-svg rect.dash-hit').count()).toBe(7);
    // and the metric links
    await page.getByRole('link', { name: '调用次数' }).click();
    await page.waitForURL(/metric=count/);
    expect(await page.getByRole('link', { name: '调用次数' }).getAttribute('aria-current')).toBe('true');
  });

  it('with JavaScript: a tooltip on hover and on keyboard focus; the time zone from the cookie', async () => {
    const page = await h.page('js');
    await signIn(h, 'js', user);
    await h.contexts.js.addCookies([{ name: 'tz', value: 'Asia/Shanghai', url: h.baseURL }]);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto('/detail');
    await ready(page, 'js');
    expect(await page.locator('.dash-tz').textContent()).toContain('Asia/Shanghai');
    const withData = page.locator('svg.dash-svg rect.dash-hit', {
      has: page.locator(`title:has-text("${model}")`),
    });
    await withData.last().hover();
    const tip = page.getByRole('tooltip');
    await tip.waitFor();
    expect(await tip.textContent()).toContain(model);
    // keyboard: the chart is one tab stop; arrows walk its columns and the tooltip follows
    const first = page.locator('svg.dash-svg').first().locator('rect.dash-hit').first();
    await first.focus();
    const label0 = await first.getAttribute('aria-label');
    expect(await tip.textContent()).toBe(label0);
    await page.keyboard.press('ArrowRight');
    const second = page.locator('svg.dash-svg').first().locator('rect.dash-hit').nth(1);
    expect(await second.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await tip.textContent()).toBe(await second.getAttribute('aria-label'));
    await page.keyboard.press('End');
    expect(await tip.textContent()).toContain(model);
    expect(errors).toEqual([]);
    await page.getByText('显示数据表').click();
    expect(await axeViolations(page)).toEqual([]);
  });

  it('an admin filters by username; the page fits 390 px without sideways scrolling', async () => {
    const page = await h.page('nojs', { width: 390, height: 844 });
    await signIn(h, 'nojs', admin);
    await page.goto(`/detail?username=${user.username}`);
    await page.getByRole('heading', { name: '数据看板' }).waitFor();
    expect(await page.getByLabel('用户名').inputValue()).toBe(user.username);
    expect(await page.locator('.dash-legend-inline').first().textContent()).toContain(model);
    const other = await page.goto(`/detail?username=nobody_${run}`);
    expect(other?.status()).toBe(200);
    expect(await page.getByText('所选时间范围内没有数据').count()).toBeGreaterThanOrEqual(1);
    await page.goto(`/detail?username=${user.username}`);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
  });
});
