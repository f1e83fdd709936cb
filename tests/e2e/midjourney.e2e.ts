/**
 * Drawing tasks (seed 001 §2.11, §4 drawing states) with JavaScript on and off: a user sees their own tasks with
 * the progress bar, the image (a link and thumbnail without JavaScript, a viewer dialog with it) and the prompt
 * (a disclosure without JavaScript, a dialog with it), never another user's; an admin sees the channel column,
 * filters by channel and gets the notice while the Midjourney callback is off.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { MidjourneyTask } from '@switchyard/db/entities/midjourney-task.ts';
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

async function seedTask(who: E2eUser, over: Record<string, unknown> = {}): Promise<MidjourneyTask> {
  const em = orm.em.fork();
  const task = em.create(MidjourneyTask, {
    userId: who.id,
    code: 1,
    action: 'IMAGINE',
    mjId: `mj-${who.username}`,
    prompt: 'a red fox sitting in the snow under the northern lights, cinematic',
    promptEn: 'a red fox in the snow',
    submitTime: Date.now() - 120_000,
    startTime: Date.now() - 110_000,
    finishTime: Date.now() - 30_000,
    status: 'SUCCESS',
    progress: '100%',
    imageUrl: 'https://cdn.example.test/fox.png',
    channelId: 7,
    quota: 50_000,
    ...over,
  } as never);
  await em.flush();
  return task;
}

describe.each(MODES)('drawing tasks with JavaScript %s', (mode: Mode) => {
  const p = `${mode}${run}`;

  it('a user sees their own tasks with progress, image and prompt', async () => {
    const user = await createE2eUser(orm, `mu_${p}`, { role: Role.User });
    const other = await createE2eUser(orm, `mo_${p}`, { role: Role.User });
    await seedTask(user, { mjId: `done-${p}` });
    await seedTask(user, {
      mjId: `run-${p}`,
      status: 'IN_PROGRESS',
      progress: '45%',
      imageUrl: '',
      submitTime: Date.now() - 20_000,
      startTime: Date.now() - 15_000,
      finishTime: 0,
    });
    await seedTask(other, { mjId: `theirs-${p}` });
    const page = await signedIn(mode, user);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const res = await page.goto('/midjourney');
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('绘图日志');
    await ready(page, mode);
    expect(await page.getByTestId('mj-row').count()).toBe(2);
    expect(await page.locator(`[data-mj-id="theirs-${p}"]`).count()).toBe(0);
    expect(await page.getByRole('columnheader', { name: '渠道' }).count()).toBe(0);
    expect(await page.getByTestId('mj-notify-off').count()).toBe(0);

    const running = page.locator(`[data-mj-id="run-${p}"]`);
    expect(await running.getByTestId('mj-progress').getAttribute('value')).toBe('45');
    expect(await running.getByTestId('mj-status').textContent()).toBe('执行中');

    const done = page.locator(`[data-mj-id="done-${p}"]`);
    expect(await done.getByTestId('mj-progress').getAttribute('value')).toBe('100');
    expect(await done.getByTestId('mj-status').textContent()).toBe('成功');
    expect(await done.getByTestId('mj-code').textContent()).toBe('已提交');
    // 90 s from submit to finish: over a minute, so red
    expect(await done.getByTestId('mj-duration').textContent()).toBe('90 秒');
    expect(await done.getByTestId('mj-duration').getAttribute('class')).toContain('mj-slow');
    // MjForwardUrlEnabled is on by default (as in new-api): the image goes through the gateway's proxy
    const image = `/mj/image/done-${p}`;
    expect(await done.getByTestId('mj-image').locator('img').getAttribute('src')).toMatch(
      new RegExp(`${image}$`),
    );
    expect(await done.getByTestId('mj-image').locator('img').getAttribute('alt')).toBe(
      `任务 done-${p} 的结果图片`,
    );

    const prompt = done.getByTestId('mj-prompt');
    if (mode === 'nojs') {
      expect(await done.getByTestId('mj-image').getAttribute('href')).toMatch(new RegExp(`${image}$`));
      expect(await prompt.locator('p').isVisible()).toBe(false);
      await prompt.locator('summary').click();
      await expect.poll(() => prompt.locator('p').isVisible()).toBe(true);
      expect(await prompt.locator('p').textContent()).toContain('northern lights, cinematic');
    } else {
      await done.getByTestId('mj-image').click();
      const viewer = page.getByTestId('mj-image-dialog');
      await expect.poll(() => viewer.isVisible()).toBe(true);
      expect(await viewer.locator('img').getAttribute('src')).toMatch(new RegExp(`${image}$`));
      await viewer.getByRole('button', { name: '关闭' }).click();
      await expect.poll(() => viewer.count()).toBe(0);
      await prompt.click();
      const dialog = page.getByTestId('mj-prompt-dialog');
      await expect.poll(() => dialog.isVisible()).toBe(true);
      expect(await dialog.textContent()).toContain('northern lights, cinematic');
      await page.keyboard.press('Escape');
      await expect.poll(() => dialog.count()).toBe(0);
    }
    expect(errors).toEqual([]);
  });

  it('an admin sees every task with its channel, filters by channel and task id, and sees the callback notice', async () => {
    const admin = await createE2eUser(orm, `ma_${p}`, { role: Role.Admin });
    const user = await createE2eUser(orm, `mv_${p}`, { role: Role.User });
    await seedTask(user, { mjId: `c91-${p}`, channelId: 91 });
    await seedTask(user, { mjId: `c92-${p}`, channelId: 92 });
    const page = await signedIn(mode, admin);
    await page.goto('/midjourney');
    await ready(page, mode);
    expect(await page.getByTestId('mj-notify-off').isVisible()).toBe(true);
    await page.getByLabel('渠道 ID').fill('92');
    await Promise.all([page.waitForURL(/channel_id=92/), page.getByRole('button', { name: '查询' }).click()]);
    await ready(page, mode);
    await expect.poll(() => page.locator(`[data-mj-id="c92-${p}"]`).count()).toBe(1);
    expect(await page.locator(`[data-mj-id="c91-${p}"]`).count()).toBe(0);
    expect(await page.locator(`[data-mj-id="c92-${p}"]`).getByTestId('mj-channel').textContent()).toBe('92');
    await page.getByLabel('任务 ID').fill(`c91-${p}`);
    await page.getByLabel('渠道 ID').fill('');
    await Promise.all([page.waitForURL(/mj_id=c91/), page.getByRole('button', { name: '查询' }).click()]);
    await ready(page, mode);
    await expect.poll(() => page.getByTestId('mj-row').count()).toBe(1);
    expect(await page.getByTestId('mj-id').textContent()).toBe(`c91-${p}`);
  });

  it('the channel form offers the mj_* preset models for Midjourney Proxy types', async () => {
    const admin = await createE2eUser(orm, `mc_${p}`, { role: Role.Admin });
    const page = await signedIn(mode, admin);
    // with JavaScript the create drawer of /channel, without it the /channel/new page
    await page.goto(mode === 'js' ? '/channel' : '/channel/new');
    await ready(page, mode);
    const form = mode === 'js' ? page.getByRole('dialog') : page.locator('body');
    if (mode === 'js') {
      await page.getByRole('button', { name: '添加渠道' }).click();
      await form.getByLabel('名称', { exact: true }).waitFor();
    }
    await form.locator('#channel-type').selectOption('2');
    if (mode === 'js') {
      await page.getByRole('button', { name: '填入相关模型' }).click();
      await expect.poll(() => page.locator('#channel-models').inputValue()).toMatch(/(^|,)mj_imagine(,|$)/);
      expect((await form.locator('#channel-models').inputValue()).split(',')).toContain('swap_face');
    } else {
      // without JavaScript the form comes back (refused: no key or model) with the type's presets offered
      await page.getByRole('button', { name: '提交' }).click();
      await page.waitForLoadState('load');
      expect(await page.locator('#channel-type').inputValue()).toBe('2');
      expect(await page.locator('input[name="models_pick"][value="mj_imagine"]').count()).toBe(1);
    }
  });
});
