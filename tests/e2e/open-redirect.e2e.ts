/**
 * Issue 23 item 6, replayed in Chromium: `/login?redirectTo=/%09/<host>` sent the browser to the attacker's
 * origin after a successful login (browsers drop the tab, so `/\t/host` is `//host`). Here the "attacker" is a
 * local HTTP server on another port; after logging in (with JavaScript and without) the browser must be on the
 * console's origin and the attacker's server must have seen no request. A few more payloads of the same kind
 * (backslash, encoded slashes, scheme-relative) go the same way.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { hashPassword } from '@switchyard/db/security/password.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createE2eUser, openProductOrm } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready } from './harness.ts';

const run = Date.now().toString(36).slice(-6);
let orm: MikroORM;
let h: Harness;
let evil: Server;
let evilHost = '';
const evilHits: string[] = [];

beforeAll(async () => {
  orm = await openProductOrm();
  h = await launch();
  evil = createServer((req, res) => {
    evilHits.push(req.url ?? '');
    res.end('pwned');
  });
  await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
  evilHost = `127.0.0.1:${(evil.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await h?.close();
  await new Promise((resolve) => evil?.close(resolve));
  await orm?.close(true);
});

async function loginWith(page: Page, mode: Mode, query: string, username: string, password: string) {
  await page.goto(`/login?${query}`);
  await ready(page, mode);
  await page.getByLabel('用户名或邮箱', { exact: true }).fill(username);
  await page.getByLabel('密码', { exact: true }).fill(password);
  await Promise.all([
    page.waitForURL((u) => u.pathname !== '/login' || u.origin !== h.baseURL, { waitUntil: 'commit' }),
    page.getByRole('button', { name: '登录', exact: true }).click(),
  ]);
  // let a client-side redirect (if any) run
  await page.waitForLoadState('load');
  await page.waitForTimeout(300);
}

describe.each(MODES)('login redirectTo stays on our origin, JavaScript %s', (mode: Mode) => {
  const payloads = () => [
    // the reported payload, exactly as sent: a %09 between the slashes
    `redirectTo=/%09/${evilHost}/pwned`,
    `redirectTo=/%0A/${evilHost}/pwned`,
    `redirectTo=/%5C${evilHost}/pwned`,
    `redirectTo=%2F%2F${evilHost}%2Fpwned`,
    `redirectTo=/.//${evilHost}/pwned`,
    `redirectTo=http:${evilHost}/pwned`,
    `redirectTo=${encodeURIComponent(`http://${evilHost}/pwned`)}`,
  ];

  it('after a successful login the browser is on the console, never at the attacker', async () => {
    const password = 'redirect-password-1';
    const user = await createE2eUser(orm, `or_${mode}_${run}`.slice(0, 20), {
      passwordHash: await hashPassword(password),
      withSession: false,
    });
    for (const query of payloads()) {
      const page = await h.page(mode);
      await loginWith(page, mode, query, user.username, password);
      const at = new URL(page.url());
      expect(at.origin, query).toBe(h.baseURL);
      expect(at.pathname, query).toBe('/token');
      expect(evilHits, query).toEqual([]);
    }
  });

  it('a same-origin redirectTo is still honoured', async () => {
    const password = 'redirect-password-2';
    const user = await createE2eUser(orm, `ok_${mode}_${run}`.slice(0, 20), {
      passwordHash: await hashPassword(password),
      withSession: false,
    });
    const page = await h.page(mode);
    await loginWith(page, mode, `redirectTo=${encodeURIComponent('/log?p=1')}`, user.username, password);
    expect(new URL(page.url()).pathname).toBe('/log');
  });
});
