/**
 * Channels (seed 001 §2.4, §4, §5, §7) with JavaScript on and off: an admin creates a channel pointing at a fake
 * OpenAI upstream on loopback, finds it in the list, tests it through the relay, edits it, disables it and deletes
 * it; abilities follow every step. An ordinary user gets the 403 page and 403 from the JSON calls.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Ability } from '@switchyard/db/entities/ability.ts';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Channel } from '@switchyard/db/entities/channel.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready, submit } from './harness.ts';

let h: Harness;
let orm: MikroORM;
let fake: FakeOpenAI;
const run = Date.now().toString(36).slice(-6);

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await h?.close();
  await orm?.close(true);
  await fake?.close();
});

async function signedIn(mode: Mode, who: E2eUser): Promise<Page> {
  const page = await h.page(mode);
  await signIn(h, mode, who);
  return page;
}

const toasts = async (page: Page) => (await page.getByTestId('toast').allTextContents()).join(' | ');
const rowById = (page: Page, id: number) => page.locator(`tr[data-channel-id="${id}"]`);
const channelByName = (name: string) => orm.em.fork().findOne(Channel, { name });
const abilitiesOf = async (channelId: number) =>
  (await orm.em.fork().find(Ability, { channelId }, { orderBy: { group: 'asc', model: 'asc' } })).map((a) => [
    a.group,
    a.model,
    a.enabled,
  ]);

describe.each(MODES)('channels with JavaScript %s', (mode: Mode) => {
  const p = `${mode}${run}`;
  let admin: E2eUser;

  beforeAll(async () => {
    admin = await createE2eUser(orm, `cadm_${p}`, { role: Role.Admin });
  });

  it('answers 403 to an ordinary user, page and JSON', async () => {
    const plain = await createE2eUser(orm, `cplain_${p}`, { role: Role.User });
    const page = await signedIn(mode, plain);
    const res = await page.goto('/channel');
    expect(res?.status()).toBe(403);
    expect(await page.locator('h1').textContent()).toBe('无权访问');
    const api = await fetch(`${h.baseURL}/api/channel/?p=1`, {
      headers: { Cookie: `sy_session=${plain.token}`, 'New-Api-User': String(plain.id) },
    });
    expect(api.status).toBe(403);
    expect(((await api.json()) as { success: boolean }).success).toBe(false);
  });

  it('creates, finds, tests, edits, disables and deletes a channel', async () => {
    const page = await signedIn(mode, admin);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const res = await page.goto('/channel');
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('渠道管理');
    await ready(page, mode);

    // create: with JS a drawer, without the /channel/new page
    const name = `up_${p}`;
    const form = mode === 'js' ? page.getByRole('dialog') : page;
    if (mode === 'js') {
      await page.getByRole('button', { name: '添加渠道' }).click();
      await form.getByLabel('名称', { exact: true }).waitFor();
    } else {
      await page.getByRole('link', { name: '添加渠道' }).click();
      await page.waitForURL(/\/channel\/new$/);
    }
    await form.getByLabel('名称', { exact: true }).fill(name);
    // a refused save keeps the form and says why (seed §5 message)
    await form.getByLabel('密钥', { exact: true }).fill('sk-e2e-secret');
    await form.getByLabel('代理地址 / API 地址').fill(`${fake.url}/`);
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      form.getByRole('button', { name: '提交' }).click(),
    ]);
    if (mode === 'nojs') await page.waitForLoadState('load');
    await expect.poll(() => form.getByRole('alert').textContent()).toContain('请至少选择一个模型！');
    if (mode === 'nojs') {
      await form.getByLabel('名称', { exact: true }).fill(name);
      await form.getByLabel('密钥', { exact: true }).fill('sk-e2e-secret');
    }
    await form.getByLabel('模型', { exact: true }).fill('gpt-4o-mini, gpt-4o');
    await submit(page, mode, () => form.getByRole('button', { name: '提交' }).click());
    if (mode === 'js') await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    else await page.waitForURL(/\/channel$/);
    await expect.poll(() => toasts(page)).toContain('已创建 1 个渠道');
    await expect.poll(() => channelByName(name).then((c) => c?.id ?? 0)).toBeGreaterThan(0);
    const created = (await channelByName(name))!;
    expect([created.baseUrl, created.models, created.group, created.key]).toEqual([
      fake.url,
      'gpt-4o-mini,gpt-4o',
      'default',
      'sk-e2e-secret',
    ]);
    expect(await abilitiesOf(created.id)).toEqual([
      ['default', 'gpt-4o', true],
      ['default', 'gpt-4o-mini', true],
    ]);
    const audit = await orm.em
      .fork()
      .findOneOrFail(AuditEntry, { action: 'channel.create', targetId: String(created.id) });
    expect(audit.after).not.toContain('sk-e2e-secret');

    // found by the search form (keyword + model), with its status
    await page.goto(`/channel?${new URLSearchParams({ keyword: name, model: 'gpt-4o' })}`);
    await ready(page, mode);
    const row = rowById(page, created.id);
    await row.waitFor();
    expect(await row.locator('[data-status]').textContent()).toBe('已启用');
    expect(await row.locator('[data-rt]').textContent()).toBe('未测试');
    expect(await page.content()).not.toContain('sk-e2e-secret');

    // test through the relay (with JS: the model picker dialog; without: the test page)
    fake.reset();
    if (mode === 'js') {
      await row.getByRole('button', { name: '测试' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('测试模型').selectOption('gpt-4o');
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url().includes(`/api/channel/test/${created.id}?model=gpt-4o`)),
        dialog.getByRole('button', { name: '测试' }).click(),
      ]);
      expect(answer.status()).toBe(200);
    } else {
      await row.getByRole('link', { name: '测试' }).click();
      await page.waitForURL(/\/channel\/\d+\/test/);
      await page.getByLabel('测试模型').selectOption('gpt-4o');
      await submit(page, mode, () => page.getByRole('button', { name: '测试' }).click());
    }
    await expect.poll(() => toasts(page), { timeout: 15_000 }).toContain(`渠道 ${name} 测试成功`);
    expect(fake.requests.some((r) => r.headers.authorization === 'Bearer sk-e2e-secret')).toBe(true);
    await expect.poll(() => row.locator('[data-rt]').getAttribute('data-rt')).not.toBe('grey');

    // edit: with JS the drawer, without the edit page; a blank key keeps the saved one
    const editor = mode === 'js' ? page.getByRole('dialog') : page;
    if (mode === 'js') {
      await row.getByRole('button', { name: '编辑' }).click();
      await editor.getByLabel('名称', { exact: true }).waitFor();
    } else {
      await row.getByRole('link', { name: '编辑' }).click();
      await page.waitForURL(/\/channel\/\d+\/edit\?redirectTo=/);
    }
    expect(await editor.getByLabel('名称', { exact: true }).inputValue()).toBe(name);
    expect(await editor.getByLabel('密钥', { exact: true }).inputValue()).toBe('');
    await editor.getByLabel('模型重定向').fill('{bad');
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      editor.getByRole('button', { name: '提交' }).click(),
    ]);
    if (mode === 'nojs') await page.waitForLoadState('load');
    await expect
      .poll(() => editor.getByRole('alert').textContent())
      .toContain('模型映射必须是合法的 JSON 格式！');
    await editor.getByLabel('模型重定向').fill('{"gpt-4o":"gpt-4o-2024-08-06"}');
    await editor.getByLabel('模型', { exact: true }).fill('gpt-4o');
    await editor.getByLabel('优先级').fill('5');
    await submit(page, mode, () => editor.getByRole('button', { name: '提交' }).click());
    if (mode === 'js') await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    else await page.waitForURL(/\/channel\?keyword=/);
    await expect.poll(() => toasts(page)).toContain('渠道已更新');
    await expect.poll(async () => (await channelByName(name))?.models).toBe('gpt-4o');
    const edited = (await channelByName(name))!;
    expect([edited.key, edited.modelMapping, Number(edited.priority)]).toEqual([
      'sk-e2e-secret',
      '{"gpt-4o":"gpt-4o-2024-08-06"}',
      5,
    ]);
    expect(await abilitiesOf(created.id)).toEqual([['default', 'gpt-4o', true]]);

    // disable, then delete (with JS a dialog, without the confirmation page)
    await submit(page, mode, () => row.getByRole('button', { name: '禁用' }).click());
    await expect.poll(() => toasts(page)).toContain('渠道已禁用');
    await expect.poll(() => row.locator('[data-status]').textContent()).toBe('已禁用');
    expect(await abilitiesOf(created.id)).toEqual([['default', 'gpt-4o', false]]);

    if (mode === 'js') {
      await row.getByRole('button', { name: '删除' }).click();
      const dialog = page.getByRole('alertdialog');
      expect(await dialog.textContent()).toContain(name);
      await submit(page, mode, () => dialog.getByRole('button', { name: '确认删除' }).click());
    } else {
      await row.getByRole('link', { name: '删除' }).click();
      await page.waitForURL(/\/channel\/\d+\/delete/);
      expect(await page.locator('h1').textContent()).toBe('删除渠道');
      await submit(page, mode, () => page.getByRole('button', { name: '确认删除' }).click());
    }
    await expect.poll(() => toasts(page)).toMatch(/渠道已删除|已删除 1 个通道/);
    await expect.poll(() => channelByName(name)).toBeNull();
    expect(await abilitiesOf(created.id)).toEqual([]);
    await expect.poll(() => rowById(page, created.id).count()).toBe(0);
    expect(errors).toEqual([]);
  }, 120_000);
  it('tags selected channels, groups them by tag, disables the tag, fixes and deletes the disabled', async () => {
    const page = await signedIn(mode, admin);
    const headers = {
      'Content-Type': 'application/json',
      Cookie: `sy_session=${admin.token}`,
      'New-Api-User': String(admin.id),
    };
    const make = async (name: string) => {
      const res = await fetch(`${h.baseURL}/api/channel/`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          name,
          key: 'sk-x',
          base_url: fake.url,
          models: 'gpt-4o',
          groups: ['default'],
        }),
      });
      return ((await res.json()) as { data: number[] }).data[0]!;
    };
    const tag = `tg_${p}`;
    const ids = [await make(`${tag}_a`), await make(`${tag}_b`)];
    await page.goto(`/channel?${new URLSearchParams({ keyword: tag })}`);
    await ready(page, mode);
    for (const id of ids) await rowById(page, id).getByRole('checkbox').check();
    await page.getByLabel('标签名').fill(tag);
    if (mode === 'js') {
      await page.getByRole('button', { name: '批量设置标签' }).click();
      await submit(page, mode, () =>
        page.getByRole('alertdialog').getByRole('button', { name: '确定' }).click(),
      );
    } else {
      await page.getByRole('button', { name: '批量设置标签' }).click();
      await page.waitForURL(/\/channel\/confirm\?/);
      await submit(page, mode, () => page.getByRole('button', { name: '确定' }).click());
    }
    await expect.poll(() => toasts(page)).toContain('已为 2 个通道设置标签');
    await expect
      .poll(async () => (await orm.em.fork().find(Channel, { id: { $in: ids } })).map((c) => c.tag))
      .toEqual([tag, tag]);

    // tag mode (remembered in a cookie): one tag row with both channels; disable all of them
    const tagMode = page.getByLabel('标签聚合模式');
    if (mode === 'js') {
      await Promise.all([page.waitForURL(/prefs=1/), tagMode.check()]);
    } else {
      await tagMode.check();
      await Promise.all([page.waitForURL(/prefs=1/), page.getByRole('button', { name: '应用' }).click()]);
    }
    const tagRow = page.locator(`tr[data-tag="${tag}"]`);
    await tagRow.waitFor();
    expect(await tagRow.textContent()).toContain('2 个渠道');
    await page.goto(`/channel?${new URLSearchParams({ keyword: tag })}`);
    await ready(page, mode);
    await tagRow.waitFor();
    await submit(page, mode, () => tagRow.getByRole('button', { name: '禁用全部' }).click());
    await expect.poll(() => toasts(page)).toContain('已禁用标签下的 2 个通道');
    await expect
      .poll(async () =>
        (await orm.em.fork().find(Ability, { channelId: { $in: ids } })).map((a) => a.enabled),
      )
      .toEqual([false, false]);

    // fix (confirmed), then delete every disabled channel (confirmed)
    for (const [label, toast] of [
      ['修复数据库一致性', '已修复'],
      ['删除禁用通道', '个禁用通道'],
    ] as const) {
      if (mode === 'js') {
        await page.getByRole('button', { name: label }).click();
        await submit(page, mode, () =>
          page
            .getByRole('alertdialog')
            .getByRole('button', { name: /确定|确认删除/ })
            .click(),
        );
      } else {
        await page.getByRole('link', { name: label }).click();
        await page.waitForURL(/\/channel\/confirm\?op=/);
        await submit(page, mode, () => page.getByRole('button', { name: /确定|确认删除/ }).click());
      }
      await expect.poll(() => toasts(page)).toContain(toast);
    }
    await expect.poll(() => orm.em.fork().count(Channel, { id: { $in: ids } })).toBe(0);
    // back to the flat list for the other tests
    await page.goto('/channel?prefs=1');
  }, 120_000);
});
