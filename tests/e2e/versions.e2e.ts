/**
 * Version management (seed 001 §2.7, §3, §5, §7, §8, §9) and the public /download page (issue 5), with JavaScript
 * on and off: an admin adds a version for two OSes (one refused first for its MD5), edits one, sees /download list
 * the latest per OS with link and MD5 (remark sanitised), deletes both after confirmation and sees the empty state;
 * an ordinary user gets the 403 page.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Role } from '@switchyard/db/entities/user.ts';
import { Version } from '@switchyard/db/entities/version.ts';
import type { Locator, Page } from 'playwright-core';
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

async function signedIn(mode: Mode, who: Who | null): Promise<Page> {
  const page = await h.page(mode);
  if (who) await signIn(h, mode, who);
  return page;
}

const row = (page: Page, version: string, os: number) =>
  page.locator(`tr[data-version="${version}"][data-os-type="${os}"]`);
const toasts = async (page: Page) => (await page.getByTestId('toast').allTextContents()).join(' | ');
const card = (page: Page, os: number) => page.locator(`section.download-card[data-os-type="${os}"]`);

/** Submits a form that the server refuses: without JavaScript the POST answers the page itself (no redirect). */
async function submitRefused(page: Page, mode: Mode, act: () => Promise<void>): Promise<void> {
  if (mode === 'js') return submit(page, mode, act);
  await Promise.all([
    page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'POST'),
    act(),
  ]);
  await page.waitForLoadState('load');
}

const MD5_UPPER = '0123456789ABCDEF0123456789ABCDEF';

async function fillVersion(
  scope: Page | Locator,
  v: {
    os: string;
    version: string;
    url: string;
    md5: string;
    forceIds?: string;
    force?: boolean;
    remark?: string;
  },
) {
  await scope.getByLabel('操作系统', { exact: true }).selectOption(v.os);
  await scope.getByLabel('版本号', { exact: true }).fill(v.version);
  await scope.getByLabel('下载地址', { exact: true }).fill(v.url);
  await scope.getByLabel('文件 MD5', { exact: true }).fill(v.md5);
  if (v.forceIds !== undefined) await scope.getByLabel('需强制更新的版本', { exact: true }).fill(v.forceIds);
  if (v.force !== undefined) await scope.getByLabel(v.force ? '是' : '否', { exact: true }).check();
  if (v.remark !== undefined) await scope.getByLabel('备注', { exact: true }).fill(v.remark);
}

describe.each(MODES)('version management and /download with JavaScript %s', (mode: Mode) => {
  const p = `${mode}${run}`;
  const winVersion = `1.0.${p}`;
  const macVersion = `2.0.${p}`;
  let admin: Who;

  beforeAll(async () => {
    admin = await makeUser(`vadm_${p}`, Role.Admin);
  });

  it('answers 403 to an ordinary user', async () => {
    const plain = await makeUser(`vplain_${p}`, Role.User);
    const page = await signedIn(mode, plain);
    const res = await page.goto('/version');
    expect(res?.status()).toBe(403);
    expect(await page.locator('h1').textContent()).toBe('无权访问');
  });

  it('adds versions for Windows and Mac Apple, edits one, lists them on /download, deletes them', async () => {
    const page = await signedIn(mode, admin);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const res = await page.goto('/version');
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('版本管理');
    await ready(page, mode);

    const openAdd = async (): Promise<Page | Locator> => {
      if (mode === 'js') {
        await page.getByRole('button', { name: '添加版本' }).click();
        const dialog = page.getByRole('dialog');
        await dialog.getByLabel('版本号', { exact: true }).waitFor();
        // seed 001 §9: the version modal is 650 wide
        expect((await page.getByTestId('version-modal').boundingBox())?.width).toBe(650);
        return dialog;
      }
      await page.getByRole('link', { name: '添加版本' }).click();
      await page.waitForURL(/\/version\/new$/);
      return page;
    };

    // Windows: first empty, then a bad MD5 (refused with the seed's messages), then valid
    let form = await openAdd();
    await submitRefused(page, mode, () => form.getByRole('button', { name: '提交' }).click());
    await expect.poll(() => form.getByRole('alert').textContent()).toBe('请填写下载地址和版本号');
    expect(await form.getByText('版本号不能为空').count()).toBe(1);
    await fillVersion(form, {
      os: '1',
      version: winVersion,
      url: `https://dl.example.com/win/${winVersion}.exe`,
      md5: 'not-an-md5',
      remark: '<b>Faster</b> start<script>window.__pwned = 1</script><a href="javascript:alert(1)">x</a>',
    });
    await submitRefused(page, mode, () => form.getByRole('button', { name: '提交' }).click());
    await expect.poll(() => form.getByRole('alert').textContent()).toBe('请输入有效的 MD5');
    await form.getByLabel('文件 MD5', { exact: true }).fill(MD5_UPPER);
    await submit(page, mode, () => form.getByRole('button', { name: '提交' }).click());
    await expect.poll(() => toasts(page)).toContain('版本创建成功');
    if (mode === 'js') await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    else await page.waitForURL(/\/version$/);
    await expect.poll(() => row(page, winVersion, 1).count()).toBe(1);

    // Mac Apple
    form = await openAdd();
    await fillVersion(form, {
      os: '3',
      version: macVersion,
      url: `http://dl.example.com/mac/${macVersion}.dmg`,
      md5: '',
    });
    await submit(page, mode, () => form.getByRole('button', { name: '提交' }).click());
    await expect.poll(() => toasts(page)).toContain('版本创建成功');
    await expect.poll(() => row(page, macVersion, 3).count()).toBe(1);
    expect(await row(page, winVersion, 1).getByTestId('md5').textContent()).toBe(MD5_UPPER.toLowerCase());

    // edit the Windows row: forced update from two older versions
    const editor = mode === 'js' ? page.getByRole('dialog') : page;
    if (mode === 'js') {
      await row(page, winVersion, 1).getByRole('button', { name: '编辑' }).click();
      await editor.getByLabel('版本号', { exact: true }).waitFor();
    } else {
      await row(page, winVersion, 1).getByRole('link', { name: '编辑' }).click();
      await page.waitForURL(/\/version\/\d+\/edit\?redirectTo=/);
    }
    expect(await editor.getByLabel('版本号', { exact: true }).inputValue()).toBe(winVersion);
    expect(await editor.getByLabel('文件 MD5', { exact: true }).inputValue()).toBe(MD5_UPPER.toLowerCase());
    await editor.getByLabel('需强制更新的版本', { exact: true }).fill('0.9.0, 0.9.1');
    await editor.getByLabel('是', { exact: true }).check();
    await submit(page, mode, () => editor.getByRole('button', { name: '提交' }).click());
    await expect.poll(() => toasts(page)).toContain('版本更新成功');
    await expect.poll(() => row(page, winVersion, 1).locator('[data-force]').textContent()).toBe('是');
    const stored = await orm.em.fork().findOneOrFail(Version, { version: winVersion, osType: 1 });
    expect(stored).toMatchObject({ force: 1, forceIds: '0.9.0,0.9.1', filemd5: MD5_UPPER.toLowerCase() });

    // /download (public, signed out): the latest per OS with link, MD5 and the forced-update note
    const visitor = await signedIn(mode, null);
    const dl = await visitor.goto('/download');
    expect(dl?.status()).toBe(200);
    await ready(visitor, mode);
    expect(await visitor.locator('h1').textContent()).toBe('客户端下载');
    const win = card(visitor, 1);
    expect(await win.getByTestId('latest-version').textContent()).toBe(`最新版本 ${winVersion}`);
    expect(await win.getByTestId('download-link').getAttribute('href')).toBe(
      `https://dl.example.com/win/${winVersion}.exe`,
    );
    expect(await win.getByTestId('md5').textContent()).toBe(MD5_UPPER.toLowerCase());
    expect(await win.getByTestId('md5').evaluate((el) => getComputedStyle(el).fontFamily)).toMatch(
      /mono|Menlo|Consolas/i,
    );
    expect(await win.getByTestId('forced').count()).toBe(1);
    expect(await win.textContent()).toContain('0.9.0,0.9.1');
    // the remark is sanitised: bold kept, script and javascript: link dropped
    expect(await win.locator('.version-remark b').textContent()).toBe('Faster');
    expect(await win.locator('.version-remark script').count()).toBe(0);
    expect(await win.locator('.version-remark a').count()).toBe(0);
    expect(await visitor.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    const mac = card(visitor, 3);
    expect(await mac.getByTestId('latest-version').textContent()).toBe(`最新版本 ${macVersion}`);
    expect(await mac.getByTestId('download-link').getAttribute('href')).toBe(
      `http://dl.example.com/mac/${macVersion}.dmg`,
    );
    expect(await mac.getByTestId('md5').count()).toBe(0);
    expect(await card(visitor, 2).textContent()).toContain('暂无该系统的版本');
    if (mode === 'js') {
      await win.getByRole('button', { name: '复制 MD5' }).click();
      await expect.poll(() => toasts(visitor)).toContain(MD5_UPPER.toLowerCase());
    } else {
      expect(await win.getByRole('button', { name: '复制 MD5' }).count()).toBe(0);
    }

    // delete both after confirmation
    const admPage = await signedIn(mode, admin);
    await admPage.goto('/version');
    await ready(admPage, mode);
    for (const [version, os] of [
      [winVersion, 1],
      [macVersion, 3],
    ] as const) {
      if (mode === 'js') {
        await row(admPage, version, os).getByRole('button', { name: '删除' }).click();
        const dialog = admPage.getByRole('alertdialog');
        expect(await dialog.textContent()).toContain(version);
        await submit(admPage, mode, () => dialog.getByRole('button', { name: '确认删除' }).click());
      } else {
        await row(admPage, version, os).getByRole('link', { name: '删除' }).click();
        await admPage.waitForURL(/\/version\/\d+\/delete/);
        expect(await admPage.locator('h1').textContent()).toBe('删除版本');
        expect(await admPage.locator('main, body').first().textContent()).toContain(version);
        await submit(admPage, mode, () => admPage.getByRole('button', { name: '确认删除' }).click());
      }
      await expect.poll(() => toasts(admPage)).toContain('删除成功');
      await expect.poll(() => row(admPage, version, os).count()).toBe(0);
    }
    expect(await orm.em.fork().count(Version, { version: { $in: [winVersion, macVersion] } })).toBe(0);

    const empty = await signedIn(mode, null);
    await empty.goto('/download');
    expect(await empty.getByTestId('download-empty').textContent()).toBe('暂无可下载的版本');
    expect(errors).toEqual([]);
  }, 90_000);
});
