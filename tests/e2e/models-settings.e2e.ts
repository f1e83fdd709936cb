/**
 * Settings "models" tab (seed 000 §2, §5) with JavaScript on and off, on the shared option forms (ADR 023): an
 * admin edits claude.default_max_tokens and the thinking budget percentage in the Claude form; invalid JSON is
 * refused with 'not a valid JSON string' (on blur with JavaScript, by the server always) and a percentage outside
 * 0.1–1 is refused; saving unchanged says 'you seem to have changed nothing'; an ordinary user gets 403.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Option } from '@switchyard/db/entities/option.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready } from './harness.ts';

let h: Harness;
let orm: MikroORM;
const run = Date.now().toString(36).slice(-6);
const MAX = 'claude.default_max_tokens';
const BUDGET = 'claude.thinking_adapter_budget_tokens_percentage';
const TOUCHED = [MAX, BUDGET, 'claude.thinking_adapter_enabled'];

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
});
afterAll(async () => {
  // Back to the defaults for other suites sharing the product database.
  if (orm) await orm.em.fork().nativeDelete(Option, { key: { $in: TOUCHED } });
  await h?.close();
  await orm?.close(true);
});

const stored = async (key: string) => (await orm.em.fork().findOne(Option, { key }))?.value;

async function signedIn(mode: Mode, who: E2eUser): Promise<Page> {
  const page = await h.page(mode);
  await signIn(h, mode, who);
  return page;
}

async function openTab(page: Page, mode: Mode) {
  const res = await page.goto('/setting?tab=models');
  await ready(page, mode);
  return res;
}

/** The Claude form's field error, by option key. */
const fieldError = (page: Page, key: string) =>
  page.getByTestId(`opt-models-claude-${key.replace(/\./g, '-')}-error`);

/** Clicks the Claude form's save and waits for the POST's answer (a redirect on success, the tab on a refusal). */
async function save(page: Page) {
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.locator('button[name="intent"][value="option:models-claude"]').click(),
  ]);
  await page.waitForLoadState('networkidle');
}

describe.each(MODES)('models settings with JavaScript %s', (mode: Mode) => {
  const p = `${mode}${run}`;
  let admin: E2eUser;

  beforeAll(async () => {
    admin = await createE2eUser(orm, `madm_${p}`, { role: Role.Admin });
  });

  it('answers 403 to an ordinary user', async () => {
    const plain = await createE2eUser(orm, `mplain_${p}`, { role: Role.User });
    const page = await signedIn(mode, plain);
    const res = await openTab(page, mode);
    expect(res?.status()).toBe(403);
    expect(await page.locator('[name="claude.default_max_tokens"]').count()).toBe(0);
  });

  it('saves default max tokens and the budget percentage', async () => {
    const page = await signedIn(mode, admin);
    await openTab(page, mode);
    const max = mode === 'js' ? 4096 : 2048;
    await page
      .locator(`[name="${MAX}"]`)
      .fill(JSON.stringify({ default: max, 'claude-3-5-haiku-20241022': 1000 }));
    await page.locator(`[name="${BUDGET}"]`).fill(mode === 'js' ? '0.5' : '0.6');
    await save(page);
    expect(JSON.parse((await stored(MAX)) ?? '{}')).toEqual({
      default: max,
      'claude-3-5-haiku-20241022': 1000,
    });
    expect(await stored(BUDGET)).toBe(mode === 'js' ? '0.5' : '0.6');
    // The tab shows the saved values after the redirect.
    await openTab(page, mode);
    expect(JSON.parse(await page.locator(`[name="${MAX}"]`).inputValue()).default).toBe(max);
    // Saving again without edits writes nothing and says so.
    await save(page);
    await expect
      .poll(() => page.getByTestId('models-claude-error').textContent())
      .toBe('你似乎并没有修改什么');
  });

  it('refuses invalid JSON with the seed message, on blur with JavaScript and always on the server', async () => {
    const page = await signedIn(mode, admin);
    await openTab(page, mode);
    const before = await stored(MAX);
    const area = page.locator(`[name="${MAX}"]`);
    await area.fill('{"default": 8192');
    if (mode === 'js') {
      await area.blur();
      // The blur check names the field by its label, which ends with the key.
      await expect
        .poll(() => fieldError(page, MAX).textContent())
        .toBe('Claude 默认最大输出 Token（claude.default_max_tokens）：不是合法的 JSON 字符串');
      expect(await area.getAttribute('aria-invalid')).toBe('true');
    }
    await save(page);
    await expect.poll(() => fieldError(page, MAX).textContent()).toContain('不是合法的 JSON 字符串');
    if (mode === 'nojs')
      expect(await fieldError(page, MAX).textContent()).toBe(
        'claude.default_max_tokens：不是合法的 JSON 字符串',
      );
    // What was typed stays in the box, and nothing was stored.
    expect(await page.locator(`[name="${MAX}"]`).inputValue()).toBe('{"default": 8192');
    expect(await stored(MAX)).toBe(before);
    // Valid JSON of the wrong shape is refused by the server's registry check.
    await page.locator(`[name="${MAX}"]`).fill('{"default": 0}');
    await save(page);
    await expect.poll(() => fieldError(page, MAX).textContent()).toContain('positive integer');
    expect(await stored(MAX)).toBe(before);
  });

  it('refuses a budget percentage outside 0.1–1 and writes none of the form', async () => {
    const page = await signedIn(mode, admin);
    await openTab(page, mode);
    const before = await stored(BUDGET);
    const maxBefore = await stored(MAX);
    const budget = page.locator(`[name="${BUDGET}"]`);
    await budget.fill('1.5');
    if (mode === 'js') {
      await budget.blur();
      await expect
        .poll(() => fieldError(page, BUDGET).textContent())
        .toBe('Claude 思考预算百分比必须在 0.1 到 1 之间');
    }
    // A valid change next to the refused one is not saved either.
    await page.locator(`[name="${MAX}"]`).fill('{"default": 3333}');
    await save(page);
    await expect
      .poll(() => fieldError(page, BUDGET).textContent())
      .toBe('Claude 思考预算百分比必须在 0.1 到 1 之间');
    expect(await stored(BUDGET)).toBe(before);
    expect(await stored(MAX)).toBe(maxBefore);
    await budget.fill('0.05');
    await save(page);
    expect(await stored(BUDGET)).toBe(before);
  });

  it('turns the thinking adapter off and on with the checkbox', async () => {
    const page = await signedIn(mode, admin);
    await openTab(page, mode);
    const box = page.locator('input[type="checkbox"][name="claude.thinking_adapter_enabled"]');
    expect(await box.isChecked()).toBe(true);
    await box.uncheck();
    await save(page);
    expect(await stored('claude.thinking_adapter_enabled')).toBe('false');
    await openTab(page, mode);
    await page.locator('input[type="checkbox"][name="claude.thinking_adapter_enabled"]').check();
    await save(page);
    expect(await stored('claude.thinking_adapter_enabled')).toBe('true');
  });
});
