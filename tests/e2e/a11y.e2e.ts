/**
 * Accessibility (issue 15): axe-core over every console page as root and as a user (and the public pages as a
 * visitor), with JavaScript on (hydrated: the react-aria widgets) and off: no serious or critical violation.
 */
import { createRequire } from 'node:module';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Role } from '@switchyard/db/entities/user.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { seedConsoleRows } from './console-rows.ts';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready } from './harness.ts';

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

const PUBLIC_PAGES = ['/', '/pricing', '/about', '/login', '/register', '/reset', '/download'];
const USER_PAGES = ['/token', '/token/new', '/topup', '/log', '/midjourney', '/task', '/setting'];
const ADMIN_PAGES: string[] = [
  '/channel',
  '/channel/new',
  '/redemption',
  '/redemption/new',
  '/user',
  '/user/new',
  '/version',
  '/version/new',
  '/setting?tab=operation',
  '/setting?tab=system',
  '/setting?tab=other',
  '/setting?tab=models',
  '/log/clear',
];

type Violation = { page: string; rule: string; impact: string; targets: string[] };

async function audit(page: Page, mode: Mode, path: string): Promise<Violation[]> {
  const res = await page.goto(path);
  expect(res?.status(), path).toBeLessThan(400);
  if (mode === 'js') await ready(page, mode);
  await page.addScriptTag({ path: axePath });
  const results = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<unknown> } }).axe;
    return (await axe.run(document, { resultTypes: ['violations'] })) as {
      violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[];
    };
  });
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      page: path,
      rule: v.id,
      impact: v.impact ?? '',
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
    }));
}

let h: Harness;
let orm: MikroORM;
let user: E2eUser;
let root: E2eUser;
let admin: E2eUser;

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
  const run = Date.now().toString(36).slice(-5);
  user = await createE2eUser(orm, `a11y_u_${run}`, { role: Role.User });
  root = await createE2eUser(orm, `a11y_r_${run}`, { role: Role.Root });
  admin = await createE2eUser(orm, `a11y_a_${run}`, { role: Role.Admin });
  const rows = await seedConsoleRows(orm, user, root, inject('openaiURL'));
  // the record pages behind the lists (the no-JavaScript editors, the key page, a user's logs)
  ADMIN_PAGES.push(
    `/token/${rows.rootTokenId}/key`,
    `/token/${rows.rootTokenId}/edit`,
    `/channel/${rows.channelId}/edit`,
    `/redemption/${rows.redemptionId}/edit`,
    `/user/edit/${user.id}`,
    `/log/user/${user.id}`,
  );
});
afterAll(async () => {
  await h?.close();
  await orm?.close();
});

describe.each(MODES)('axe-core with JavaScript %s', (mode: Mode) => {
  it.each([
    ['a visitor', null, () => PUBLIC_PAGES],
    ['a user', 'user', () => [...PUBLIC_PAGES.slice(0, 3), ...USER_PAGES]],
    // (read when the test runs: beforeAll adds the record pages of the seeded rows)
    ['root', 'root', () => [...USER_PAGES, ...ADMIN_PAGES]],
    // the tabs with root-only fields, shown read-only to an administrator (ADR 033)
    [
      'an administrator',
      'admin',
      () => ['/setting?tab=operation', '/setting?tab=system', '/setting?tab=other', '/setting?tab=pay'],
    ],
  ] as const)(
    'as %s: no serious or critical violation on any page',
    async (_name, who, pages) => {
      // Without JavaScript: the server's HTML with the app's scripts blocked (axe itself needs script, so the
      // JavaScript context is used with every /assets/*.js request refused: nothing hydrates).
      const page = await h.page('js');
      if (mode === 'nojs') await page.route(/\/assets\/.*\.js$/, (route) => route.abort());
      if (who) await signIn(h, 'js', who === 'user' ? user : who === 'admin' ? admin : root);
      const found: Violation[] = [];
      for (const path of pages()) found.push(...(await audit(page, mode, path)));
      expect(found).toEqual([]);
    },
    90_000,
  );
});

describe('axe-core in the dark theme', () => {
  it('as root with JavaScript: no serious or critical violation on the lists and forms (tags, badges, links)', async () => {
    const page = await h.page('js');
    await signIn(h, 'js', root);
    // the theme cookie the theme switch stores (serialized as Remix's createCookie does: base64 of JSON)
    await page
      .context()
      .addCookies([
        { name: 'theme', value: encodeURIComponent(btoa(JSON.stringify('dark'))), url: h.baseURL },
      ]);
    const found: Violation[] = [];
    for (const path of [
      '/',
      '/pricing',
      '/token',
      '/token/new',
      '/log',
      '/channel',
      '/redemption',
      '/user',
      '/setting',
    ]) {
      found.push(...(await audit(page, 'js', path)));
      expect(await page.locator('html').getAttribute('data-theme'), path).toBe('dark');
    }
    expect(found).toEqual([]);
  }, 90_000);
});
