/**
 * Issue 14 with JavaScript on and off: the self-service profile page /user/edit (seed 000 §6: an ordinary user
 * edits their own username, display name and password; the current password guards the change), and a page
 * reached with a session that has ended redirects to /login?expired=true, whose notice shows once.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { hashPassword, verifyPassword } from '@switchyard/db/security/password.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createE2eUser, openProductOrm, signIn } from './fixtures.ts';
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

const dbUser = (id: number) => orm.em.fork().findOneOrFail(User, { id });

describe.each(MODES)('issue 14 pages with JavaScript %s', (mode: Mode) => {
  const p = `${mode}${run}`;

  it('an ordinary user edits their own profile and password on /user/edit', async () => {
    const me = await createE2eUser(orm, `self_${p}`, {
      role: Role.User,
      passwordHash: await hashPassword('old-password-1'),
    });
    const page = await h.page(mode);
    await signIn(h, mode, me);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));

    const res = await page.goto('/user/edit');
    expect(res?.status()).toBe(200);
    await ready(page, mode);
    expect(await page.locator('h1').textContent()).toBe('编辑个人信息');
    expect(await page.getByLabel('用户名').inputValue()).toBe(`self_${p}`);

    // name and display name
    await page.getByLabel('用户名').fill(`self2_${p}`);
    await page.getByLabel('显示名称').fill('Me Myself');
    await submit(page, mode, () => page.getByRole('button', { name: '提交' }).click());
    await expect
      .poll(async () => (await page.getByTestId('toast').allTextContents()).join())
      .toContain('用户信息更新成功');
    let row = await dbUser(me.id);
    expect([row.username, row.displayName, row.role]).toEqual([`self2_${p}`, 'Me Myself', Role.User]);
    expect(await page.getByLabel('用户名').inputValue()).toBe(`self2_${p}`);

    // a new password without the current one is refused with the message, nothing changes
    await page.getByLabel('密码', { exact: true }).fill('new-password-2');
    // refused: the POST itself answers (400), with JavaScript in place and without as the next document
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: '提交' }).click(),
    ]);
    await page.waitForLoadState('load');
    await expect.poll(() => page.locator('.form-error').textContent()).toBe('请输入原密码');
    row = await dbUser(me.id);
    expect(await verifyPassword('old-password-1', row.passwordHash!)).toBe(true);

    // with it, the password changes and this session stays
    await page.getByLabel('密码', { exact: true }).fill('new-password-2');
    await page.getByLabel('确认新密码').fill('new-password-2');
    await page.getByLabel('当前密码').fill('old-password-1');
    await submit(page, mode, () => page.getByRole('button', { name: '提交' }).click());
    await expect
      .poll(async () => verifyPassword('new-password-2', (await dbUser(me.id)).passwordHash!))
      .toBe(true);
    expect((await page.goto('/user/edit'))?.status()).toBe(200);
    expect(errors).toEqual([]);
  });

  it('a page reached with an ended session goes to /login?expired=true, the notice shows once', async () => {
    const me = await createE2eUser(orm, `exp_${p}`, { role: Role.User });
    const page = await h.page(mode);
    await signIn(h, mode, me);
    expect((await page.goto('/token'))?.status()).toBe(200);

    await orm.em.fork().nativeUpdate(Session, { user: me.id }, { expiresAt: new Date(Date.now() - 60_000) });
    await page.goto('/token');
    await ready(page, mode);
    const url = new URL(page.url());
    expect([url.pathname, url.searchParams.get('expired'), url.searchParams.get('redirectTo')]).toEqual([
      '/login',
      'true',
      '/token',
    ]);
    expect(await page.getByTestId('login-expired').textContent()).toBe('未登录或登录已过期，请重新登录');

    // the stale cookie is gone: the next visit is a plain sign-in
    await page.goto('/token');
    await ready(page, mode);
    expect(new URL(page.url()).searchParams.get('expired')).toBeNull();
    expect(await page.getByTestId('login-expired').count()).toBe(0);
  });
});
