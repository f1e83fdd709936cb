/**
 * Pricing (seed 001 §2.13, seed 000 modelTab) with JavaScript on and off: a served model without a price shows
 * in the admin's "no ratio set" list; the admin sets its ratios in the settings model tab; a user then finds it
 * on /pricing (GET search form) at the price the relay bills; a visitor sees the default-group notice; an ordinary
 * user gets 403 from the model tab.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Ability } from '@switchyard/db/entities/ability.ts';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Channel } from '@switchyard/db/entities/channel.ts';
import { Option } from '@switchyard/db/entities/option.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready } from './harness.ts';

let h: Harness;
let orm: MikroORM;
const run = Date.now().toString(36).slice(-6);

beforeAll(async () => {
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

/** A stored option (or its shipped default when never set). */
async function optionNumber(key: string, fallback: number): Promise<number> {
  const row = await orm.em.fork().findOne(Option, { key });
  return row ? Number(row.value) : fallback;
}

/** Submits a form by clicking `button`: a fetch + redirect with JavaScript, a navigation without. */
async function post(page: Page, mode: Mode, click: () => Promise<void>) {
  if (mode === 'js') {
    await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), click()]);
  } else {
    await Promise.all([page.waitForLoadState('load'), click()]);
  }
}

describe.each(MODES)('pricing with JavaScript %s', (mode: Mode) => {
  const model = `e2e-price-${mode}-${run}`;

  beforeAll(async () => {
    // A channel serving the model in the default group, so the model is "enabled" but has no price yet.
    const em = orm.em.fork();
    const channel = em.create(Channel, {
      name: `price-${mode}-${run}`,
      type: 1,
      key: 'sk-e2e',
      models: model,
      group: 'default',
    } as never);
    await em.flush();
    em.create(Ability, {
      group: 'default',
      model,
      channelId: channel.id,
      enabled: true,
      priority: 0,
      weight: 0,
    } as never);
    await em.flush();
  });

  it('answers 403 to an ordinary user on the model tab', async () => {
    const plain = await createE2eUser(orm, `pplain_${mode}${run}`, { role: Role.User });
    const page = await signedIn(mode, plain);
    const res = await page.goto('/setting?tab=modelTab');
    expect(res?.status()).toBe(403);
    await expect(page.getByText('此设置页仅管理员可见。').count()).resolves.toBe(1);
  });

  it('the admin sets a model ratio in the model tab and a user sees the billed price on /pricing', async () => {
    const admin = await createE2eUser(orm, `padm_${mode}${run}`, { role: Role.Admin });
    const page = await signedIn(mode, admin);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    let res = await page.goto('/setting?tab=modelTab');
    expect(res?.status()).toBe(200);
    await ready(page, mode);

    // The served model has no price: it is listed under "models with no ratio set"; its link opens the add form.
    await page.getByRole('link', { name: `为 ${model} 设置倍率` }).click();
    const form = mode === 'js' ? page.getByRole('dialog') : page.locator('#dialog-model');
    await form.waitFor();
    expect(await form.getByLabel('模型名称').inputValue()).toBe(model);
    if (mode === 'js') {
      // A fixed price excludes the ratios: typing one disables the ratio fields (seed 000 §4).
      await form.getByLabel('固定价格（美元/次）').fill('0.1');
      await expect(form.getByLabel('模型倍率').isDisabled()).resolves.toBe(true);
      await expect(form.getByLabel('补全倍率').isDisabled()).resolves.toBe(true);
      await form.getByLabel('固定价格（美元/次）').fill('');
      await expect(form.getByLabel('模型倍率').isDisabled()).resolves.toBe(false);
    }
    await form.getByLabel('模型倍率').fill('abc');
    await post(page, mode, () => form.getByRole('button', { name: '保存' }).click());
    await form.getByRole('alert').waitFor();
    await expect(form.getByRole('alert').textContent()).resolves.toBe('请输入数字');

    await form.getByLabel('模型倍率').fill('1.5');
    await form.getByLabel('补全倍率').fill('3');
    await post(page, mode, () => form.getByRole('button', { name: '保存' }).click());
    await page.waitForURL((u) => !u.search.includes('mdialog'));
    await page.getByTestId('toast').filter({ hasText: '保存成功' }).first().waitFor();
    const audits = await orm.em.fork().find(AuditEntry, { actorId: admin.id, action: 'option.set' });
    expect(audits.map((a) => a.targetId).sort()).toEqual(['CompletionRatio', 'ModelRatio']);

    // The row is in the table (search the tab), and the model left the unset list.
    await page.getByLabel('搜索模型').fill(model);
    await Promise.all([
      page.waitForURL(/mq=/),
      page.getByRole('button', { name: '搜索', exact: true }).click(),
    ]);
    const row = page.locator(`tr[data-model="${model}"]`);
    await expect(row.locator('[data-col="ratio"]').textContent()).resolves.toBe('1.5');
    await expect(row.locator('[data-col="completion"]').textContent()).resolves.toBe('3');
    await expect(page.getByRole('link', { name: `为 ${model} 设置倍率` }).count()).resolves.toBe(0);

    // A user of the default group. Expected price (seed 001 §9, as the relay bills it):
    //   input per 1M tokens = 1,000,000 × model ratio × group ratio / QuotaPerUnit USD
    //                       = model ratio × 2 × group ratio with the default QuotaPerUnit 500000 → 1.5 × 2 × 1 = $3
    //   output per 1M tokens = input × completion ratio → $3 × 3 = $9
    const groupRatio = JSON.parse(
      (await orm.em.fork().findOne(Option, { key: 'GroupRatio' }))?.value ?? '{"default":1}',
    ) as Record<string, number>;
    const perUnit = await optionNumber('QuotaPerUnit', 500000);
    const g = groupRatio.default ?? 1;
    const input = (1_000_000 * 1.5 * g) / perUnit;
    const output = input * 3;
    const user = await createE2eUser(orm, `puser_${mode}${run}`, { role: Role.User });
    const userPage = await signedIn(mode, user);
    res = await userPage.goto('/pricing');
    expect(res?.status()).toBe(200);
    await ready(userPage, mode);
    await expect(userPage.getByTestId('pricing-banner').textContent()).resolves.toContain(
      `您的分组为 default，分组倍率为 ${g}`,
    );
    await userPage.getByLabel('模型名称').fill(model.toUpperCase());
    await Promise.all([
      userPage.waitForURL(/q=/),
      userPage.getByRole('button', { name: '搜索', exact: true }).click(),
    ]);
    const priced = userPage.locator(`tr[data-model="${model}"]`);
    await expect(priced.locator('[data-price="input"]').textContent()).resolves.toContain(
      `输入：$${input} / 100 万 tokens`,
    );
    await expect(priced.locator('[data-price="output"]').textContent()).resolves.toContain(
      `输出：$${output} / 100 万 tokens`,
    );
    await expect(priced.getByText('按量计费').count()).resolves.toBe(1);
    await expect(priced.locator('[data-available="true"]').count()).resolves.toBe(1);
    await expect(priced.textContent()).resolves.toContain('模型倍率：1.5');

    // The JSON call agrees with the page.
    const api = await fetch(`${h.baseURL}/api/pricing`);
    const body = (await api.json()) as { success: boolean; data: { model_name: string }[] };
    expect(body.success).toBe(true);
    expect(body.data.find((e) => e.model_name === model)).toMatchObject({
      quota_type: 0,
      model_ratio: 1.5,
      completion_ratio: 3,
      enable_groups: ['default'],
    });
    // Through the real HTTP routing: the user's groups, and the admin's view of the price tables.
    const asUser = { Cookie: `sy_session=${user.token}`, 'New-Api-User': String(user.id) };
    const groups = (await (await fetch(`${h.baseURL}/api/user/self/groups`, { headers: asUser })).json()) as {
      data: Record<string, { desc: string; ratio: number }>;
    };
    expect(groups.data.default).toMatchObject({ ratio: g });
    const forbidden = await fetch(`${h.baseURL}/api/product/getv3price`, { headers: asUser });
    expect(forbidden.status).toBe(403);
    const asAdmin = { Cookie: `sy_session=${admin.token}`, 'New-Api-User': String(admin.id) };
    const v3 = (await (await fetch(`${h.baseURL}/api/product/getv3price`, { headers: asAdmin })).json()) as {
      data: { ModelRatio: Record<string, number>; CompletionRatio: Record<string, number> };
    };
    expect([v3.data.ModelRatio[model], v3.data.CompletionRatio[model]]).toEqual([1.5, 3]);
    const enabled = (await (
      await fetch(`${h.baseURL}/api/channel/models_enabled`, { headers: asAdmin })
    ).json()) as {
      data: string[];
    };
    expect(enabled.data).toContain(model);
    expect(errors).toEqual([]);
  });

  it('the admin deletes the row after confirming, and the model is unpriced again', async () => {
    const admin = await createE2eUser(orm, `pdel_${mode}${run}`, { role: Role.Admin });
    const page = await signedIn(mode, admin);
    await page.goto(`/setting?tab=modelTab&mq=${model}`);
    await ready(page, mode);
    const row = page.locator(`tr[data-model="${model}"]`);
    // Batch set: without a selection it is refused; with the row ticked the completion ratio becomes 5.
    await page.getByLabel('设置项').selectOption('completion');
    await page.getByLabel('数值', { exact: true }).fill('5');
    await post(page, mode, () => page.getByRole('button', { name: '应用到所选模型' }).click());
    await page.getByText('请先选择需要批量设置的模型').waitFor();
    await page.getByLabel(`选择 ${model}`).check();
    await page.getByLabel('设置项').selectOption('completion');
    await page.getByLabel('数值', { exact: true }).fill('5');
    await post(page, mode, () => page.getByRole('button', { name: '应用到所选模型' }).click());
    await page.getByTestId('toast').filter({ hasText: '已批量设置 1 个模型' }).first().waitFor();
    await expect(row.locator('[data-col="completion"]').textContent()).resolves.toBe('5');
    await expect(row.locator('[data-col="ratio"]').textContent()).resolves.toBe('1.5');
    await row.getByRole('link', { name: '删除' }).click();
    // The confirmation: a react-aria dialog with JavaScript, a page section without.
    const confirm = mode === 'js' ? page.getByRole('dialog') : page.locator('#dialog-model-delete');
    await confirm.waitFor();
    await expect(confirm.textContent()).resolves.toContain(`确定删除模型 ${model} 的价格设置吗？`);
    expect(await orm.em.fork().findOne(Option, { key: 'ModelRatio' })).toBeTruthy();
    await post(page, mode, () => confirm.getByRole('button', { name: '删除' }).click());
    await page.getByTestId('toast').filter({ hasText: '已删除' }).first().waitFor();
    await expect(page.locator(`tr[data-model="${model}"]`).count()).resolves.toBe(0);
    await expect(page.getByRole('link', { name: `为 ${model} 设置倍率` }).count()).resolves.toBe(1);
    const ratios = JSON.parse((await orm.em.fork().findOneOrFail(Option, { key: 'ModelRatio' })).value);
    expect(Object.hasOwn(ratios, model)).toBe(false);
    // The public pricing now reports it unpriced.
    const visitor = await h.page(mode);
    await visitor.goto(`/pricing?q=${model}`);
    await expect(visitor.locator(`tr[data-model="${model}"]`).textContent()).resolves.toContain('未设置价格');
  });

  it('shows a visitor the not-signed-in notice with the default ratio', async () => {
    const page = await h.page(mode);
    const res = await page.goto(`/pricing?q=${model}`);
    expect(res?.status()).toBe(200);
    await expect(page.getByTestId('pricing-banner').textContent()).resolves.toContain('您还未登录');
    await expect(page.locator(`tr[data-model="${model}"]`).count()).resolves.toBe(1);
  });
});
