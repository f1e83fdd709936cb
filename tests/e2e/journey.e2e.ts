/**
 * Issue 5's "done when" as one journey, with JavaScript on and off: an admin creates an OpenAI channel against a
 * fake upstream (models fetched from the upstream in the form), tests it from the list and prices its model in
 * the settings model tab; a user creates a token on /token and copies its key, calls the product's own /v1 with
 * the official SDK, sees the call on /log at the hand-computed cost and the model on /pricing, then redeems a
 * code the admin made on /redemption and sees the balance rise on /topup.
 *
 * The fake upstream is this file's own (as in channels.e2e.ts): the one global setup starts lives in another
 * process, so its rules (`fake.on`, used here for a fixed usage) cannot be reached from a test.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Channel } from '@switchyard/db/entities/channel.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Option } from '@switchyard/db/entities/option.ts';
import { Token } from '@switchyard/db/entities/token.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready, submit } from './harness.ts';

let h: Harness;
let orm: MikroORM;
const run = Date.now().toString(36).slice(-6);

/** Earlier runs' redeems share the per-IP 'redeem' bucket (127.0.0.1): start from a clean one. */
async function clearRedeemLimits(): Promise<void> {
  const client = createClient({ url: inject('redisURL') });
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: '*rl:critical:redeem*', COUNT: 200 })) {
      const list = Array.isArray(keys) ? keys : [keys];
      if (list.length > 0) await client.del(list);
    }
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  await clearRedeemLimits();
  h = await launch();
  orm = await openProductOrm();
});
afterAll(async () => {
  await h?.close();
  await orm?.close(true);
});

async function signedIn(mode: Mode, who: E2eUser): Promise<Page> {
  const page = await h.page(mode);
  await signIn(h, mode, who);
  return page;
}

const toasts = async (page: Page) => (await page.getByTestId('toast').allTextContents()).join(' | ');

/** A stored option as JSON / number, or the shipped default when never set. */
async function option<T>(key: string, fallback: T): Promise<T> {
  const row = await orm.em.fork().findOne(Option, { key });
  return row ? (JSON.parse(row.value) as T) : fallback;
}

// The usage the fake reports for the journey's call, and the prices the admin sets.
const PROMPT = 1000;
const COMPLETION = 200;
const MODEL_RATIO = 2;
const COMPLETION_RATIO = 3;
const SECRET = 'sk-journey-upstream';

describe.each(MODES)('the issue 5 journey with JavaScript %s', (mode: Mode) => {
  const p = `${mode}${run}`;
  const model = `journey-${mode}-${run}`;
  let fake: FakeOpenAI;
  let admin: E2eUser;
  let user: E2eUser;

  beforeAll(async () => {
    // The upstream lists only this mode's model, so "fetch model list" has a known answer.
    fake = await startFakeOpenAI({ keys: [SECRET], models: [model] });
    // A fixed usage for every chat call of the model; a small delay so the test's response time is never 0 ms.
    fake.on({
      model,
      path: '/chat/completions',
      respond: { usage: { prompt_tokens: PROMPT, completion_tokens: COMPLETION }, delayMs: 20 },
    });
    admin = await createE2eUser(orm, `jadm_${p}`, { role: Role.Admin });
    user = await createE2eUser(orm, `jusr_${p}`, { role: Role.User, quota: 1_000_000 } as never);
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('channel, price, token, relay call, log, pricing and top-up', async () => {
    const errors: string[] = [];
    const watch = (page: Page) => {
      page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message.slice(0, 120)}`));
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(`${page.url()}: ${m.text().slice(0, 120)}`);
      });
    };

    // ---- 1. The admin creates the channel, fetching its models from the upstream in the form --------------
    let page = await signedIn(mode, admin);
    watch(page);
    await page.goto('/channel');
    await ready(page, mode);
    const name = `journey_${p}`;
    const form = mode === 'js' ? page.getByRole('dialog') : page;
    if (mode === 'js') {
      await page.getByRole('button', { name: '添加渠道' }).click();
      await form.getByLabel('名称', { exact: true }).waitFor();
    } else {
      await page.getByRole('link', { name: '添加渠道' }).click();
      await page.waitForURL(/\/channel\/new$/);
    }
    await form.getByLabel('类型').selectOption({ label: 'OpenAI' });
    await form.getByLabel('名称', { exact: true }).fill(name);
    await form.getByLabel('密钥', { exact: true }).fill(SECRET);
    await form.getByLabel('代理地址 / API 地址').fill(fake.url);
    const fetchButton = form.getByRole('button', { name: '获取模型列表' });
    if (mode === 'js') {
      await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/api/channel/fetch_models')),
        fetchButton.click(),
      ]);
    } else {
      // without JavaScript the button posts the form; the page answers with the models filled in
      await Promise.all([
        page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'POST'),
        fetchButton.click(),
      ]);
      await page.waitForLoadState('load');
    }
    await expect.poll(() => form.getByRole('status').first().textContent()).toContain('已获取 1 个模型');
    expect(await form.getByLabel('模型', { exact: true }).inputValue()).toBe(model);
    expect(fake.requests.some((r) => r.path === '/v1/models' && r.key === SECRET)).toBe(true);
    // the key is never echoed back into a page: without JavaScript it is typed again
    if (mode === 'nojs') await form.getByLabel('密钥', { exact: true }).fill(SECRET);
    await submit(page, mode, () => form.getByRole('button', { name: '提交' }).click());
    if (mode === 'js') await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    else await page.waitForURL(/\/channel$/);
    await expect.poll(() => toasts(page)).toContain('已创建 1 个渠道');
    const channel = await orm.em.fork().findOneOrFail(Channel, { name });
    expect([channel.type, channel.baseUrl, channel.models, channel.key]).toEqual([
      1,
      fake.url,
      model,
      SECRET,
    ]);

    // ---- ... tests it from the channel list: the response time is shown -------------------------------------
    await page.goto(`/channel?${new URLSearchParams({ keyword: name })}`);
    await ready(page, mode);
    const row = page.locator(`tr[data-channel-id="${channel.id}"]`);
    expect(await row.locator('[data-rt]').textContent()).toBe('未测试');
    if (mode === 'js') {
      await row.getByRole('button', { name: '测试' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('测试模型').selectOption(model);
      await Promise.all([
        page.waitForResponse((r) => r.url().includes(`/api/channel/test/${channel.id}`)),
        dialog.getByRole('button', { name: '测试' }).click(),
      ]);
    } else {
      await row.getByRole('link', { name: '测试' }).click();
      await page.waitForURL(/\/channel\/\d+\/test/);
      await page.getByLabel('测试模型').selectOption(model);
      await submit(page, mode, () => page.getByRole('button', { name: '测试' }).click());
    }
    await expect.poll(() => toasts(page), { timeout: 15_000 }).toContain(`渠道 ${name} 测试成功`);
    await expect.poll(() => row.locator('[data-rt]').textContent()).toMatch(/^\d+\.\d\d 秒$/);
    expect(await row.locator('[data-rt]').getAttribute('data-rt')).not.toBe('grey');
    expect(
      Number((await orm.em.fork().findOneOrFail(Channel, { id: channel.id })).responseTime),
    ).toBeGreaterThan(0);

    // ---- ... and prices its model in the settings model tab --------------------------------------------------
    await page.goto('/setting?tab=modelTab');
    await ready(page, mode);
    await page.getByRole('link', { name: `为 ${model} 设置倍率` }).click();
    const priceForm = mode === 'js' ? page.getByRole('dialog') : page.locator('#dialog-model');
    await priceForm.waitFor();
    expect(await priceForm.getByLabel('模型名称').inputValue()).toBe(model);
    await priceForm.getByLabel('模型倍率').fill(String(MODEL_RATIO));
    await priceForm.getByLabel('补全倍率').fill(String(COMPLETION_RATIO));
    if (mode === 'js')
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        priceForm.getByRole('button', { name: '保存' }).click(),
      ]);
    else
      await Promise.all([
        page.waitForLoadState('load'),
        priceForm.getByRole('button', { name: '保存' }).click(),
      ]);
    await page.getByTestId('toast').filter({ hasText: '保存成功' }).first().waitFor();
    expect((await option<Record<string, number>>('ModelRatio', {}))[model]).toBe(MODEL_RATIO);
    expect((await option<Record<string, number>>('CompletionRatio', {}))[model]).toBe(COMPLETION_RATIO);

    // ---- 2. The user creates a token on /token and copies its key -------------------------------------------
    page = await signedIn(mode, user);
    watch(page);
    await page.goto('/token');
    await ready(page, mode);
    const tokenName = `jtok_${p}`;
    const editor = mode === 'js' ? page.getByRole('dialog') : page;
    if (mode === 'js') {
      await page.getByRole('button', { name: '添加令牌' }).click();
      await editor.getByLabel('名称', { exact: true }).waitFor();
    } else {
      await page.getByRole('link', { name: '添加令牌' }).click();
      await page.waitForURL(/\/token\/new$/);
    }
    await editor.getByLabel('名称', { exact: true }).fill(tokenName);
    if (mode === 'js') await editor.getByRole('button', { name: '$10', exact: true }).click();
    else await editor.getByLabel('快捷额度').selectOption('5000000');
    await submit(page, mode, () => editor.getByRole('button', { name: '提交' }).click());
    await expect.poll(() => toasts(page)).toContain('令牌创建成功');
    await page.goto(`/token?keyword=${tokenName}`);
    await ready(page, mode);
    const tokenRow = page.locator(`tr[data-token-name="${tokenName}"]`);
    let apiKey: string;
    if (mode === 'js') {
      // the row's copy button puts the full key on the clipboard
      await h.contexts.js.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.baseURL });
      await tokenRow.getByRole('button', { name: '复制', exact: true }).click();
      await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toMatch(/^sk-/);
      apiKey = await page.evaluate(() => navigator.clipboard.readText());
    } else {
      // without JavaScript the row links to a page showing the full key to copy by hand
      await tokenRow.getByRole('link', { name: '查看' }).click();
      await page.waitForURL(/\/token\/\d+\/key/);
      apiKey = await page.getByTestId('full-key').inputValue();
    }
    const token = await orm.em.fork().findOneOrFail(Token, { userId: user.id, name: tokenName });
    expect(apiKey).toBe(`sk-${token.key}`);

    // ---- 3. One chat completion through the product's own origin with the official SDK ----------------------
    const client = new OpenAI({ apiKey, baseURL: `${h.baseURL}/v1`, maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'hello from the journey' }],
    });
    expect(answer.choices[0]?.message.content).toBe(`Hello from ${model}`);
    expect(answer.usage).toMatchObject({ prompt_tokens: PROMPT, completion_tokens: COMPLETION });
    expect(fake.requests.filter((r) => r.path === '/v1/chat/completions' && r.key === SECRET)).toHaveLength(
      2,
    );

    // ---- 4. The call on /log at the right cost --------------------------------------------------------------
    // quota = round((prompt + completion × CompletionRatio) × ModelRatio × GroupRatio)   (seed 001 §9)
    //       = (1000 + 200 × 3) × 2 × 1 = 3200 quota; at QuotaPerUnit 500000 quota/USD → $0.006400
    const groupRatio = (await option<Record<string, number>>('GroupRatio', { default: 1 })).default ?? 1;
    const perUnit = await option<number>('QuotaPerUnit', 500_000);
    expect([groupRatio, perUnit]).toEqual([1, 500_000]);
    const cost = Math.round((PROMPT + COMPLETION * COMPLETION_RATIO) * MODEL_RATIO * groupRatio);
    expect(cost).toBe(3200);
    await expect
      .poll(
        async () => (await orm.em.fork().findOne(Log, { userId: user.id, type: LogType.Consume }))?.quota,
        {
          timeout: 15_000,
        },
      )
      .toBe(cost);
    await page.goto('/log');
    await ready(page, mode);
    const logRow = page.locator('tbody[data-log-id]').filter({ hasText: model });
    await expect.poll(() => logRow.count()).toBe(1);
    expect(await logRow.getByTestId('log-model').textContent()).toContain(model);
    expect(await logRow.getByTestId('log-prompt').textContent()).toBe(String(PROMPT));
    expect(await logRow.getByTestId('log-completion').textContent()).toBe(String(COMPLETION));
    expect(await logRow.getByTestId('log-cost').textContent()).toBe('$0.006400');
    expect(await logRow.textContent()).toContain(tokenName);
    // the user's balance and the token's remaining quota both paid it
    expect(Number((await orm.em.fork().findOneOrFail(User, { id: user.id })).quota)).toBe(1_000_000 - cost);
    expect(Number((await orm.em.fork().findOneOrFail(Token, { id: token.id })).remainQuota)).toBe(
      5_000_000 - cost,
    );

    // ---- ... and the model on /pricing at the price per 1M tokens -------------------------------------------
    //   input  = 1,000,000 × ModelRatio × GroupRatio / QuotaPerUnit = 1e6 × 2 × 1 / 500000 = $4 per 1M tokens
    //   output = input × CompletionRatio = $12 per 1M tokens
    await page.goto(`/pricing?${new URLSearchParams({ q: model })}`);
    await ready(page, mode);
    const priced = page.locator(`tr[data-model="${model}"]`);
    expect(await priced.locator('[data-price="input"]').textContent()).toContain('输入：$4 / 100 万 tokens');
    expect(await priced.locator('[data-price="output"]').textContent()).toContain(
      '输出：$12 / 100 万 tokens',
    );

    // ---- 5. The admin makes a code on /redemption; the user redeems it on /topup ----------------------------
    page = await signedIn(mode, admin);
    watch(page);
    await page.goto('/redemption');
    await ready(page, mode);
    const codes = mode === 'js' ? page.getByRole('dialog') : page;
    if (mode === 'js') await page.getByRole('button', { name: '添加兑换码' }).click();
    else {
      await page.getByRole('link', { name: '添加兑换码' }).click();
      await page.waitForURL(/\/redemption\/new$/);
    }
    await codes.getByLabel('名称').fill(`jr_${p}`);
    await codes.getByLabel('额度').fill('1000000');
    await codes.getByLabel('生成数量').fill('1');
    if (mode === 'js')
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        codes.getByRole('button', { name: '提交' }).click(),
      ]);
    else
      await Promise.all([page.waitForLoadState('load'), codes.getByRole('button', { name: '提交' }).click()]);
    const fresh = codes.getByTestId('fresh-codes');
    await fresh.waitFor();
    const code = await fresh.getByRole('textbox').inputValue();
    expect(code).toMatch(/^[0-9a-f]{32}$/);

    page = await signedIn(mode, user);
    watch(page);
    await page.goto('/topup');
    await ready(page, mode);
    const balance = () => page.getByTestId('wallet-balance').textContent();
    // 1,000,000 − 3200 = 996,800 quota = $1.9936
    expect(await balance()).toBe('$1.99');
    await page.getByRole('textbox', { name: '兑换码', exact: true }).fill(code);
    await submit(page, mode, () => page.getByRole('button', { name: '兑换余额', exact: true }).click());
    // 996,800 + 1,000,000 = 1,996,800 quota = $3.9936
    await expect.poll(balance).toBe('$3.99');
    await expect.poll(() => toasts(page)).toContain('兑换成功！已充值 $2.00');
    expect(Number((await orm.em.fork().findOneOrFail(User, { id: user.id })).quota)).toBe(2_000_000 - cost);
    expect(errors).toEqual([]);
  }, 180_000);
});
