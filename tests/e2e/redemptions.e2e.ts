/**
 * Redemption codes (seed 001 §2.6, §4, §5, §7) with JavaScript on and off: an admin creates codes and downloads
 * them as a text file, a user redeems one through POST /api/user/topup, the admin sees it used, then edits,
 * disables, enables and deletes another; an ordinary user gets the 403 page.
 */
import { readFile } from 'node:fs/promises';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Redemption } from '@switchyard/db/entities/redemption.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready, submit } from './harness.ts';

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

type Who = E2eUser;

const makeUser = (username: string, role: number) => createE2eUser(orm, username, { role });

async function signedIn(mode: Mode, who: Who): Promise<Page> {
  const page = await h.page(mode);
  await signIn(h, mode, who);
  return page;
}

const toasts = async (page: Page) => (await page.getByTestId('toast').allTextContents()).join(' | ');
const rowById = (page: Page, id: number) => page.locator(`tr[data-redemption-id="${id}"]`);
const codeRow = (key: string) => orm.em.fork().findOneOrFail(Redemption, { key });

async function redeem(who: Who, key: string) {
  const res = await fetch(`${h.baseURL}/api/user/topup`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Cookie: `sy_session=${who.token}`,
      'New-Api-User': String(who.id),
      Origin: h.baseURL,
    },
    body: JSON.stringify({ key }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { success: boolean; message: string; data: unknown },
  };
}

describe.each(MODES)('redemption codes with JavaScript %s', (mode: Mode) => {
  const p = `${mode}${run}`;
  let admin: Who;

  beforeAll(async () => {
    admin = await makeUser(`radm_${p}`, Role.Admin);
  });

  it('answers 403 to an ordinary user', async () => {
    const plain = await makeUser(`rplain_${p}`, Role.User);
    const page = await signedIn(mode, plain);
    const res = await page.goto('/redemption');
    expect(res?.status()).toBe(403);
    expect(await page.locator('h1').textContent()).toBe('无权访问');
  });

  it('creates codes, downloads them, a user redeems one and the admin sees it used', async () => {
    const page = await signedIn(mode, admin);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    const res = await page.goto('/redemption');
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('兑换码管理');
    await ready(page, mode);
    const name = `g_${p}`;
    const form = mode === 'js' ? page.getByRole('dialog') : page;
    if (mode === 'js') {
      await page.getByRole('button', { name: '添加兑换码' }).click();
    } else {
      await page.getByRole('link', { name: '添加兑换码' }).click();
      await page.waitForURL(/\/redemption\/new$/);
    }
    await form.getByLabel('名称').fill(name);
    if (mode === 'js') {
      // the token editor's quick amounts fill the quota
      await form.getByRole('button', { name: '10$', exact: true }).click();
      expect(await form.getByLabel('额度').inputValue()).toBe('5000000');
    }
    await form.getByLabel('额度').fill('1000000');
    await form.getByLabel('生成数量').fill('2');
    if (mode === 'js') {
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        form.getByRole('button', { name: '提交' }).click(),
      ]);
    } else {
      await Promise.all([page.waitForLoadState('load'), form.getByRole('button', { name: '提交' }).click()]);
    }
    const fresh = form.getByTestId('fresh-codes');
    await fresh.waitFor();
    const keys = (await fresh.getByRole('textbox').inputValue()).split('\n');
    expect(keys).toHaveLength(2);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f]{32}$/);
    expect(page.url()).not.toContain(keys[0]!);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      fresh.getByRole('button', { name: '下载兑换码' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('redemption-codes.txt');
    expect(await readFile(await download.path(), 'utf8')).toBe(`${keys.join('\n')}\n`);
    const cookies = await h.contexts[mode].cookies();
    for (const c of cookies) for (const k of keys) expect(c.value).not.toContain(k);

    // a user redeems the first code through the JSON call; a second attempt is refused
    const buyer = await makeUser(`rbuy_${p}`, Role.User);
    expect(await redeem(buyer, keys[0]!)).toEqual({
      status: 200,
      body: { success: true, message: '兑换成功！', data: 1000000 },
    });
    expect((await redeem(buyer, keys[0]!)).body).toMatchObject({
      success: false,
      message: '该兑换码已被使用',
    });
    expect(Number((await orm.em.fork().findOneOrFail(User, { id: buyer.id })).quota)).toBe(1000000);

    const used = await codeRow(keys[0]!);
    await page.goto(`/redemption?keyword=${name}`);
    await ready(page, mode);
    await expect.poll(() => page.locator('tbody tr[data-redemption-id]').count()).toBe(2);
    const usedRow = rowById(page, used.id);
    expect(await usedRow.locator('[data-status]').textContent()).toBe('已使用');
    expect(await usedRow.getByTestId('used-user-id').textContent()).toBe(String(buyer.id));
    expect(await usedRow.getByTestId('masked-key').textContent()).not.toBe(keys[0]);
    // a used code offers neither edit nor enable/disable
    expect(await usedRow.getByText('编辑').count()).toBe(0);
    expect(await usedRow.getByRole('button', { name: '禁用' }).count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('edits, disables, enables and deletes an unused code', async () => {
    const page = await signedIn(mode, admin);
    await page.goto('/redemption');
    await ready(page, mode);
    const name = `e_${p}`;
    // created through the JSON call of the same admin
    const created = await fetch(`${h.baseURL}/api/redemption/`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Cookie: `sy_session=${admin.token}`,
        'New-Api-User': String(admin.id),
        Origin: h.baseURL,
      },
      body: JSON.stringify({ name, quota: 500000, count: 1 }),
    });
    const [key] = ((await created.json()) as { data: string[] }).data;
    const id = (await codeRow(key!)).id;
    await page.goto(`/redemption?keyword=${name}`);
    await ready(page, mode);
    const row = rowById(page, id);
    expect(await row.locator('[data-status]').textContent()).toBe('未使用');

    // edit: with JS a drawer, without the edit page
    const editor = mode === 'js' ? page.getByRole('dialog') : page;
    if (mode === 'js') {
      await row.getByRole('button', { name: '编辑' }).click();
      await editor.getByLabel('名称').waitFor();
    } else {
      await row.getByRole('link', { name: '编辑' }).click();
      await page.waitForURL(/\/redemption\/\d+\/edit\?redirectTo=/);
    }
    expect(await editor.getByLabel('名称').inputValue()).toBe(name);
    expect(await editor.getByLabel('生成数量').count()).toBe(0);
    await editor.getByLabel('名称').fill('');
    // a refused save answers the form again (no redirect), with the message
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      editor.getByRole('button', { name: '提交' }).click(),
    ]);
    if (mode === 'nojs') await page.waitForLoadState('load');
    await expect
      .poll(() => editor.getByRole('alert').textContent())
      .toContain('兑换码名称长度必须在 1-20 之间');
    await editor.getByLabel('名称').fill(`${name}x`);
    await editor.getByLabel('额度').fill('750000');
    await submit(page, mode, () => editor.getByRole('button', { name: '提交' }).click());
    if (mode === 'js') await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    else await page.waitForURL(/\/redemption\?keyword=/);
    await expect.poll(() => toasts(page)).toContain('兑换码更新成功！');
    await expect.poll(async () => (await codeRow(key!)).name).toBe(`${name}x`);
    expect(Number((await codeRow(key!)).quota)).toBe(750000);

    await submit(page, mode, () => row.getByRole('button', { name: '禁用' }).click());
    await expect.poll(() => toasts(page)).toContain('兑换码已禁用');
    await expect.poll(async () => (await codeRow(key!)).status).toBe(2);
    await expect.poll(() => row.locator('[data-status]').textContent()).toBe('已禁用');
    await submit(page, mode, () => row.getByRole('button', { name: '启用' }).click());
    await expect.poll(async () => (await codeRow(key!)).status).toBe(1);

    if (mode === 'js') {
      await row.getByRole('button', { name: '删除' }).click();
      const dialog = page.getByRole('alertdialog');
      expect(await dialog.textContent()).toContain(`${name}x`);
      await submit(page, mode, () => dialog.getByRole('button', { name: '确认删除' }).click());
    } else {
      await row.getByRole('link', { name: '删除' }).click();
      await page.waitForURL(/\/redemption\/\d+\/delete/);
      expect(await page.locator('h1').textContent()).toBe('确定删除兑换码？');
      await submit(page, mode, () => page.getByRole('button', { name: '确认删除' }).click());
    }
    await expect.poll(() => toasts(page)).toContain('兑换码已删除');
    await expect.poll(async () => (await codeRow(key!)).deletedAt).not.toBeNull();
    await expect.poll(() => rowById(page, id).count()).toBe(0);
  });
});
