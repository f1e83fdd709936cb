/**
 * Admin users page (seed 000 §2 "Admin users page", §4, §5, §6) with JavaScript on and off: sign in as an admin
 * (a Session row inserted for a fresh admin), search, add, edit (+ add quota), disable, enable, promote as root,
 * delete with confirmation, and the 403 page for an ordinary user.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Session } from '@switchyard/db/entities/session.ts';
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

const makeUser = (username: string, role: number, withSession = true) =>
  createE2eUser(orm, username, { role, withSession });

const dbUser = (username: string) => orm.em.fork().findOneOrFail(User, { username });

async function signedIn(mode: Mode, who: Who): Promise<Page> {
  const page = await h.page(mode);
  await signIn(h, mode, who);
  return page;
}

const row = (page: Page, username: string) => page.locator(`tr[data-username="${username}"]`);
/** The visible toasts' text (with JavaScript each carries a × close button). */
const toasts = async (page: Page) => (await page.getByTestId('toast').allTextContents()).join(' | ');

describe.each(MODES)('admin users page with JavaScript %s', (mode: Mode) => {
  const p = `${mode}${run}`;
  let admin: Who;
  let root: Who;

  beforeAll(async () => {
    admin = await makeUser(`adm_${p}`, Role.Admin);
    root = await makeUser(`root_${p}`, Role.Root);
    await makeUser(`srch_a_${p}`, Role.User, false);
    await makeUser(`srch_b_${p}`, Role.User, false);
  });

  it('answers 403 to an ordinary user', async () => {
    const plain = await makeUser(`plain_${p}`, Role.User);
    const page = await signedIn(mode, plain);
    const res = await page.goto('/user');
    expect(res?.status()).toBe(403);
    expect(await page.locator('h1').textContent()).toBe('无权访问');
  });

  it('searches by keyword and shows status and role tags', async () => {
    const page = await signedIn(mode, admin);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    const res = await page.goto('/user');
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('用户管理');
    await ready(page, mode);
    await page.getByPlaceholder('搜索用户的 ID').fill(`srch_a_${p}`);
    await page.getByRole('button', { name: '查询' }).click();
    await page.waitForURL(/keyword=srch_a_/);
    await expect.poll(() => page.locator('tbody tr[data-username]').count()).toBe(1);
    expect(await row(page, `srch_a_${p}`).locator('[data-status]').textContent()).toBe('已激活');
    expect(await row(page, `srch_a_${p}`).locator('[data-role]').textContent()).toBe('普通用户');
    expect(errors).toEqual([]);
  });

  it('adds a user, edits it, adds quota, disables and enables it', async () => {
    const page = await signedIn(mode, admin);
    await page.goto('/user');
    await ready(page, mode);
    const name = `new_${p}`;
    if (mode === 'js') {
      await page.getByRole('button', { name: '添加用户' }).click();
      const drawer = page.getByRole('dialog');
      await drawer.getByLabel('用户名').fill(name);
      await drawer.getByLabel('密码').fill('short');
      await submit(page, mode, () => drawer.getByRole('button', { name: '提交' }).click());
      await expect.poll(() => drawer.getByRole('alert').textContent()).toContain('密码长度不得小于 8 位');
      await drawer.getByLabel('密码').fill('longenough1');
      await submit(page, mode, () => drawer.getByRole('button', { name: '提交' }).click());
    } else {
      await page.getByRole('link', { name: '添加用户' }).click();
      await page.waitForURL(/\/user\/new$/);
      await page.getByLabel('用户名').fill(name);
      await page.getByLabel('密码').fill('longenough1');
      await submit(page, mode, () => page.getByRole('button', { name: '提交' }).click());
    }
    await expect.poll(() => toasts(page)).toContain('用户账户创建成功！');
    if (mode === 'js') await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    await page.goto(`/user?keyword=${name}`);
    await ready(page, mode);
    expect(await row(page, name).count()).toBe(1);

    // edit: display name and group; the password stays blank (with JS a drawer, without the edit page)
    const editor = mode === 'js' ? page.getByRole('dialog') : page;
    if (mode === 'js') {
      await row(page, name).getByRole('button', { name: '编辑' }).click();
      await editor.getByLabel('显示名称').waitFor();
    } else {
      await row(page, name).getByRole('link', { name: '编辑' }).click();
      await page.waitForURL(/\/user\/edit\/\d+\?redirectTo=/);
    }
    expect(await editor.getByLabel('密码').inputValue()).toBe('');
    expect(await editor.getByLabel('已绑定的邮箱账户').getAttribute('readonly')).not.toBeNull();
    await editor.getByLabel('显示名称').fill(`Renamed ${mode}`);
    await editor.getByLabel('分组').selectOption('vip');
    await submit(page, mode, () => editor.getByRole('button', { name: '提交' }).click());
    await expect.poll(() => toasts(page)).toContain('用户信息更新成功！');
    await expect.poll(async () => (await dbUser(name)).displayName).toBe(`Renamed ${mode}`);
    expect((await dbUser(name)).group).toBe('vip');
    if (mode === 'js') await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    // back on the same filtered list, which shows the new display name
    await expect.poll(() => row(page, name).textContent()).toContain(`Renamed ${mode}`);
    expect(page.url()).toContain(`keyword=${name}`);

    // add quota (negative allowed) inside the editor, without losing what was typed: with JavaScript a dialog
    // over the drawer puts old + added into the quota field (shown in the display rules: $ per QuotaPerUnit);
    // without it a disclosure in the edit form whose button saves every field with the delta
    const created = await dbUser(name);
    if (mode === 'js') {
      await page.goto(`/user?keyword=${name}`);
      await ready(page, mode);
      await row(page, name).getByRole('button', { name: '编辑' }).click();
      const drawer = page.getByRole('dialog');
      await drawer.getByLabel('显示名称').fill('Kept js');
      await drawer.getByRole('button', { name: '添加额度' }).click();
      const dialog = page.getByRole('dialog').last();
      await dialog.getByLabel('添加的额度').fill('-25');
      expect(await dialog.getByTestId('quota-formula').textContent()).toBe('$0.00 + $-0.000050 = $-0.000050');
      await dialog.getByRole('button', { name: '添加额度' }).click();
      await expect.poll(() => page.getByRole('dialog').count()).toBe(1);
      expect(await drawer.getByLabel('显示名称').inputValue()).toBe('Kept js');
      expect(await drawer.getByLabel('剩余额度', { exact: true }).inputValue()).toBe('-25');
      await submit(page, mode, () => drawer.getByRole('button', { name: '提交' }).click());
    } else {
      await page.goto(`/user/edit/${created.id}`);
      await page.getByLabel('显示名称').fill('Kept nojs');
      await page.locator('details.add-quota summary').click();
      await page.getByLabel('添加的额度').fill('-25');
      await submit(page, mode, () => page.locator('details.add-quota button[type="submit"]').click());
    }
    await expect.poll(async () => Number((await dbUser(name)).quota)).toBe(-25);
    expect((await dbUser(name)).displayName).toBe(`Kept ${mode}`);
    // the table shows quotas in the display rules too
    await page.goto(`/user?keyword=${name}`);
    expect(await row(page, name).getByTestId('user-quota').getAttribute('data-quota')).toBe('-25');
    expect(await row(page, name).getByTestId('user-quota').textContent()).toBe('$-0.000050');

    // disable, then enable
    await page.goto(`/user?keyword=${name}`);
    await ready(page, mode);
    await submit(page, mode, () => row(page, name).getByRole('button', { name: '禁用' }).click());
    await expect.poll(() => row(page, name).locator('[data-status]').textContent()).toBe('已封禁');
    expect(await toasts(page)).toContain('操作成功完成！');
    expect((await dbUser(name)).status).toBe(2);
    await submit(page, mode, () => row(page, name).getByRole('button', { name: '启用' }).click());
    await expect.poll(() => row(page, name).locator('[data-status]').textContent()).toBe('已激活');
    expect((await dbUser(name)).status).toBe(1);
    // an admin cannot promote (only root does): no promote button for admins
    expect(await row(page, name).getByRole('button', { name: '提升' }).count()).toBe(0);
  });

  it('shows an admin the refusal, not the profile, of root and of another admin', async () => {
    const rootMail = `root_${p}@example.com`;
    const other = await createE2eUser(orm, `adm2_${p}`, {
      role: Role.Admin,
      email: rootMail,
      withSession: false,
    });
    const page = await signedIn(mode, admin);
    for (const target of [root, other]) {
      const res = await page.goto(`/user/edit/${target.id}`);
      expect(res?.status()).toBe(403);
      expect(await page.locator('h1').textContent()).toBe('无权访问');
      expect(await page.getByRole('alert').textContent()).toBe('无权获取同级或更高等级用户的信息');
      expect(await page.content()).not.toContain(rootMail);
      expect(await page.locator('input[name="username"]').count()).toBe(0);
    }
    // root reads the admin's profile
    const asRoot = await signedIn(mode, root);
    expect((await asRoot.goto(`/user/edit/${other.id}`))?.status()).toBe(200);
    expect(await asRoot.locator('#field-email').inputValue()).toBe(rootMail);
  });

  it('root promotes a user to admin', async () => {
    const target = await makeUser(`promo_${p}`, Role.User, false);
    const page = await signedIn(mode, root);
    await page.goto(`/user?keyword=${target.username}`);
    await ready(page, mode);
    await submit(page, mode, () => row(page, target.username).getByRole('button', { name: '提升' }).click());
    await expect.poll(() => row(page, target.username).locator('[data-role]').textContent()).toBe('管理员');
    expect((await dbUser(target.username)).role).toBe(Role.Admin);
  });

  it('deletes (deregisters) a user after confirmation; the row hides its actions', async () => {
    const target = await makeUser(`del_${p}`, Role.User);
    const page = await signedIn(mode, admin);
    await page.goto(`/user?keyword=${target.username}`);
    await ready(page, mode);
    if (mode === 'js') {
      await row(page, target.username).getByRole('button', { name: '注销' }).click();
      const dialog = page.getByRole('alertdialog');
      expect(await dialog.textContent()).toContain(target.username);
      await submit(page, mode, () => dialog.getByRole('button', { name: '确认注销' }).click());
    } else {
      await row(page, target.username).getByRole('link', { name: '注销' }).click();
      await page.waitForURL(/\/user\/\d+\/delete/);
      expect(await page.locator('h1').textContent()).toBe('确定要注销此用户吗？');
      await submit(page, mode, () => page.getByRole('button', { name: '确认注销' }).click());
    }
    await expect.poll(() => row(page, target.username).locator('[data-status]').textContent()).toBe('已注销');
    expect(await row(page, target.username).getByRole('button').count()).toBe(0);
    expect(await row(page, target.username).getByRole('link').count()).toBe(0);
    expect((await dbUser(target.username)).deletedAt).not.toBeNull();
    expect(await orm.em.fork().count(Session, { user: target.id })).toBe(0);
  });
});
