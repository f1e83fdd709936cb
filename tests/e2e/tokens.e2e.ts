/**
 * Token management (seed 001 §2.5, §4, §5 Token form) with JavaScript on and off: create (drawer / page),
 * search by name and key, edit, disable and enable, reveal the key without JS, delete with confirmation.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Token } from '@switchyard/db/entities/token.ts';
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

const makeUser = (username: string) =>
  createE2eUser(orm, username, { affCode: `tk${username}`.slice(0, 32) });

async function signedIn(mode: Mode, who: Who): Promise<Page> {
  const page = await h.page(mode);
  await signIn(h, mode, who);
  return page;
}

const row = (page: Page, name: string) => page.locator(`tr[data-token-name="${name}"]`);
const toasts = async (page: Page) => (await page.getByTestId('toast').allTextContents()).join(' | ');
/** A submission the server refuses: without JS the POST itself answers the page again (no redirect). */
async function submitRefused(page: Page, mode: Mode, act: () => Promise<void>): Promise<void> {
  if (mode === 'js') return submit(page, mode, act);
  await Promise.all([page.waitForResponse((r) => r.request().isNavigationRequest()), act()]);
  await page.waitForLoadState('load');
}
const dbToken = (userId: number, name: string) => orm.em.fork().findOne(Token, { userId, name });

describe.each(MODES)('token page with JavaScript %s', (mode: Mode) => {
  const p = `${mode}${run}`;
  let owner: Who;

  beforeAll(async () => {
    owner = await makeUser(`tok_${p}`);
  });

  it('creates, searches, edits, disables, enables and deletes a token', async () => {
    const page = await signedIn(mode, owner);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const res = await page.goto('/token');
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('令牌管理');
    await ready(page, mode);
    const name = `key_${p}`;

    // create (a refusal first: no name)
    const editor = mode === 'js' ? page.getByRole('dialog') : page;
    if (mode === 'js') {
      await page.getByRole('button', { name: '添加令牌' }).click();
      await editor.getByLabel('名称', { exact: true }).waitFor();
    } else {
      await page.getByRole('link', { name: '添加令牌' }).click();
      await page.waitForURL(/\/token\/new$/);
    }
    await submitRefused(page, mode, () => editor.getByRole('button', { name: '提交' }).click());
    await expect.poll(() => editor.getByRole('alert').textContent()).toContain('请输入令牌名称');
    await editor.getByLabel('名称', { exact: true }).fill(name);
    if (mode === 'js') await editor.getByRole('button', { name: '$10', exact: true }).click();
    else await editor.getByLabel('快捷额度').selectOption('5000000');
    await submit(page, mode, () => editor.getByRole('button', { name: '提交' }).click());
    await expect.poll(() => toasts(page)).toContain('令牌创建成功');
    const created = await dbToken(owner.id, name);
    expect(created?.remainQuota).toBe(5000000);
    expect(created?.key).toMatch(/^[0-9a-zA-Z]{48}$/);
    // the new key is shown once right away: in the drawer with a copy button, or on the key page without JS
    if (mode === 'js') {
      expect(await editor.getByRole('heading', { name: '令牌已创建' }).count()).toBe(1);
      expect(await editor.getByTestId('created-key').inputValue()).toBe(`sk-${created!.key}`);
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.baseURL });
      await editor.getByRole('button', { name: `复制令牌「${name}」的密钥` }).click();
      await expect.poll(() => editor.getByTestId('copy-key-status').textContent()).toBe('已复制到剪贴板');
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`sk-${created!.key}`);
      await editor.getByRole('button', { name: '完成' }).click();
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    } else {
      expect(new URL(page.url()).pathname).toBe(`/token/${created!.id}/key`);
      expect(await page.getByRole('heading', { name: '令牌已创建' }).count()).toBe(1);
      expect(await page.getByTestId('full-key').inputValue()).toBe(`sk-${created!.key}`);
    }

    // search by name, then by key prefix with sk-
    await page.goto(`/token?keyword=${name}`);
    await ready(page, mode);
    await expect.poll(() => row(page, name).count()).toBe(1);
    expect(await row(page, name).locator('[data-status]').textContent()).toBe('已启用');
    expect(await row(page, name).getByTestId('remain').textContent()).toBe('$10.00');
    await page.goto('/token');
    await ready(page, mode);
    await page.getByPlaceholder('搜索令牌的 key').fill(`sk-${created!.key.slice(0, 10)}`);
    await page.getByRole('button', { name: '查询' }).click();
    await page.waitForURL(/token=sk-/);
    await expect.poll(() => page.locator('tbody tr[data-token-name]').count()).toBe(1);
    expect(await row(page, name).getByTestId('masked-key').textContent()).not.toContain(created!.key);

    // the full key: a reveal page without JS
    if (mode === 'nojs') {
      await row(page, name).getByRole('link', { name: '查看' }).click();
      await page.waitForURL(/\/token\/\d+\/key/);
      expect(await page.getByTestId('full-key').inputValue()).toBe(`sk-${created!.key}`);
    }

    // edit: rename and set unlimited quota
    await page.goto(`/token?keyword=${name}`);
    await ready(page, mode);
    if (mode === 'js') {
      await row(page, name).getByRole('button', { name: '编辑' }).click();
      await editor.getByLabel('名称', { exact: true }).waitFor();
    } else {
      await row(page, name).getByRole('link', { name: '编辑' }).click();
      await page.waitForURL(/\/token\/\d+\/edit/);
    }
    expect(await editor.getByLabel('名称', { exact: true }).inputValue()).toBe(name);
    await editor.getByLabel('IP 白名单').fill('not-an-ip');
    await submitRefused(page, mode, () => editor.getByRole('button', { name: '提交' }).click());
    await expect.poll(() => editor.getByRole('alert').textContent()).toContain('IP 白名单格式错误');
    await editor.getByLabel('IP 白名单').fill('10.0.0.0/8');
    await editor.getByLabel('设为无限额度').check();
    await submit(page, mode, () => editor.getByRole('button', { name: '提交' }).click());
    await expect.poll(() => toasts(page)).toContain('令牌更新成功');
    await expect.poll(async () => (await dbToken(owner.id, name))?.unlimitedQuota).toBe(true);
    expect((await dbToken(owner.id, name))?.allowIps).toBe('10.0.0.0/8');

    // disable, then enable
    await page.goto(`/token?keyword=${name}`);
    await ready(page, mode);
    await submit(page, mode, () => row(page, name).getByRole('button', { name: '禁用' }).click());
    await expect.poll(() => row(page, name).locator('[data-status]').textContent()).toBe('已禁用');
    expect((await dbToken(owner.id, name))?.status).toBe(2);
    await submit(page, mode, () => row(page, name).getByRole('button', { name: '启用' }).click());
    await expect.poll(() => row(page, name).locator('[data-status]').textContent()).toBe('已启用');

    // delete with confirmation
    if (mode === 'js') {
      await row(page, name).getByRole('button', { name: '删除' }).click();
      const dialog = page.getByRole('alertdialog');
      expect(await dialog.textContent()).toContain(name);
      await submit(page, mode, () => dialog.getByRole('button', { name: '确定删除' }).click());
    } else {
      await row(page, name).getByRole('link', { name: '删除' }).click();
      await page.waitForURL(/\/token\/\d+\/delete/);
      expect(await page.locator('h1').textContent()).toBe('确定是否要删除此令牌？');
      await submit(page, mode, () => page.getByRole('button', { name: '确定删除' }).click());
    }
    await expect.poll(() => toasts(page)).toContain('删除成功');
    await expect.poll(() => row(page, name).count()).toBe(0);
    expect((await dbToken(owner.id, name))?.deletedAt).not.toBeNull();
    expect(errors).toEqual([]);
  });

  it('copies selected keys (JS) and shows the API addresses (a <details> without JS)', async () => {
    const em = orm.em.fork();
    const key = `c${p}`.padEnd(48, 'q');
    em.create(Token, { userId: owner.id, key, name: `copy_${p}` } as never);
    await em.flush();
    const page = await signedIn(mode, owner);
    await page.goto(`/token?keyword=copy_${p}`);
    await ready(page, mode);
    // the API address list (empty here: the administrator's notice)
    if (mode === 'js') await page.getByRole('button', { name: 'API 地址' }).click();
    else await page.locator('details.api-addresses summary').click();
    await expect.poll(() => page.getByText('管理员未配置 API 地址').isVisible()).toBe(true);
    if (mode === 'nojs') {
      expect(await page.getByRole('button', { name: '复制所选令牌' }).count()).toBe(0);
      return;
    }
    await page.keyboard.press('Escape');
    await h.contexts.js.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.baseURL });
    await page.getByRole('button', { name: '复制所选令牌' }).click();
    await expect.poll(() => toasts(page)).toContain('请至少选择一个令牌！');
    await row(page, `copy_${p}`).getByRole('checkbox').check();
    await page.getByRole('button', { name: '复制所选令牌' }).click();
    await expect.poll(() => toasts(page)).toContain(`sk-${key}`);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`copy_${p}    sk-${key}`);
    // a failed copy opens a dialog with the text to copy by hand
    await page.evaluate(() => {
      navigator.clipboard.writeText = () => Promise.reject(new Error('denied'));
    });
    await row(page, `copy_${p}`).getByRole('button', { name: '复制', exact: true }).click();
    const dialog = page.getByRole('alertdialog');
    await expect.poll(() => dialog.getByRole('heading').textContent()).toBe('无法复制到剪贴板，请手动复制');
    expect(await dialog.getByRole('textbox').inputValue()).toBe(`sk-${key}`);
  });

  it("answers 404 for another user's token pages", async () => {
    const other = await makeUser(`oth_${p}`);
    const em = orm.em.fork();
    const foreign = em.create(Token, {
      userId: other.id,
      key: `x${p}`.padEnd(48, 'z'),
      name: 'foreign',
    } as never);
    await em.flush();
    const page = await signedIn(mode, owner);
    for (const path of [
      `/token/${foreign.id}/edit`,
      `/token/${foreign.id}/key`,
      `/token/${foreign.id}/delete`,
    ]) {
      const res = await page.goto(path);
      expect(res?.status(), path).toBe(404);
    }
  });
});
