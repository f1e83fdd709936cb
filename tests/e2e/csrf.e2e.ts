/**
 * Cross-origin protection against the running product (issue 13, item 2; ADR 016). The hostile test's attack
 * is replayed twice: by raw HTTP requests carrying the headers a browser sends from another origin (every way a
 * change reaches the console: `?_data=`, single fetch, a document post, the JSON API with a cookie session),
 * and by a real Chromium on a sibling origin of the same site (`evil.switchyard.test` posting to
 * `console.switchyard.test`, both mapped to 127.0.0.1), where the SameSite=Lax session cookie is sent.
 * Every refusal is a 403 that changes nothing; same-origin, trusted-origin (TRUSTED_ORIGINS, set by
 * global-setup) and access-token calls keep working, and the relay paths are not judged.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Token } from '@switchyard/db/entities/token.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { hashPassword, verifyPassword } from '@switchyard/db/security/password.ts';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessTokenHash, SESSION_COOKIE } from '#app/domain/auth/session.server.ts';
import { createE2eUser, type E2eUser, openProductOrm } from './fixtures.ts';
import { baseURL, CHROMIUM_ARGS } from './harness.ts';

let orm: MikroORM;
const run = Date.now().toString(36).slice(-6);
const base = () => baseURL();

beforeAll(async () => {
  orm = await openProductOrm();
});
afterAll(async () => {
  await orm?.close(true);
});

const dbUser = (id: number) => orm.em.fork().findOneOrFail(User, { id });
const tokenCount = (userId: number) => orm.em.fork().count(Token, { userId });

const EVIL = { Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' };
const SIBLING = { Origin: 'http://evil.switchyard.test', 'Sec-Fetch-Site': 'same-site' };
const TRUSTED = { Origin: 'http://trusted.switchyard.test', 'Sec-Fetch-Site': 'same-site' };
const sameOrigin = () => ({ Origin: base(), 'Sec-Fetch-Site': 'same-origin' });

type Init = {
  method?: string;
  headers?: Record<string, string>;
  form?: Record<string, string>;
  json?: unknown;
};

/** A request as a browser of `who` would send it (session cookie; New-Api-User under /api). */
function send(who: E2eUser | null, path: string, init: Init = {}): Promise<Response> {
  const headers = new Headers({ 'Accept-Language': 'en', ...init.headers });
  if (who) headers.set('Cookie', `${SESSION_COOKIE}=${who.token}`);
  if (who && path.startsWith('/api/')) headers.set('New-Api-User', String(who.id));
  let body: string | undefined;
  if (init.form) {
    headers.set('Content-Type', 'application/x-www-form-urlencoded');
    body = new URLSearchParams(init.form).toString();
  } else if (init.json !== undefined) {
    headers.set('Content-Type', 'application/json');
    body = JSON.stringify(init.json);
  }
  return fetch(`${base()}${path}`, { method: init.method ?? 'POST', headers, body, redirect: 'manual' });
}

const REFUSED = /request from another site refused/;
const notifyForm = {
  intent: 'notify',
  notify_type: 'webhook',
  quota_warning_threshold: '1',
  webhook_url: 'https://evil.example/hook',
};
const newToken = { name: 'pwn', remain_quota: 1000, unlimited_quota: true, expired_time: -1 };

describe('cross-origin changes are refused with 403 and change nothing', () => {
  let victim: E2eUser;
  let root: E2eUser;
  let target: E2eUser;

  beforeAll(async () => {
    victim = await createE2eUser(orm, `cx_v_${run}`, { passwordHash: await hashPassword('old-password-1') });
    root = await createE2eUser(orm, `cx_r_${run}`, { role: Role.Root });
    target = await createE2eUser(orm, `cx_t_${run}`, { quota: 100, withSession: false });
  });

  it.each([
    ['cross-site', EVIL],
    ['a same-site sibling', SIBLING],
  ])('%s: ?_data=, single fetch and a document post to /setting', async (_name, headers) => {
    const before = (await dbUser(victim.id)).setting;
    const data = await send(victim, '/setting?_data=routes%2Fsetting', { headers, form: notifyForm });
    expect(data.status).toBe(403);
    expect(data.headers.get('x-remix-catch')).toBe('yes');
    expect((await data.json()).message).toMatch(REFUSED);
    const single = await send(victim, '/setting.data', { headers, form: notifyForm });
    expect(single.status).toBe(403);
    expect(single.headers.get('content-type')).toBe('text/x-script');
    expect(await single.text()).toContain('request from another site refused');
    const doc = await send(victim, '/setting?tab=personal', {
      headers: { ...headers, Accept: 'text/html' },
      form: notifyForm,
    });
    expect(doc.status).toBe(403);
    expect(doc.headers.get('content-type')).toMatch(/text\/html/);
    expect(await doc.text()).toMatch(REFUSED);
    // Even knowing the password, the change does not get through.
    const pwd = await send(victim, '/setting?_data=routes%2Fsetting', {
      headers,
      form: {
        intent: 'password',
        original_password: 'old-password-1',
        password: 'pwned-password',
        password2: 'pwned-password',
      },
    });
    expect(pwd.status).toBe(403);
    const after = await dbUser(victim.id);
    expect(after.setting).toBe(before);
    expect(await verifyPassword('old-password-1', after.passwordHash)).toBe(true);
  });

  it.each([
    ['cross-site', EVIL],
    ['a same-site sibling', SIBLING],
  ])("%s: root's user edit", async (_name, headers) => {
    for (const path of [
      `/user/edit/${target.id}?_data=routes%2Fuser.edit_.%24id`,
      `/user/edit/${target.id}`,
    ]) {
      const res = await send(root, path, { headers, form: { intent: 'addQuota', add_quota: '999999' } });
      expect(res.status).toBe(403);
    }
    expect((await dbUser(target.id)).quota).toBe(100);
  });

  it.each([
    ['cross-site', EVIL],
    ['a same-site sibling', SIBLING],
  ])('%s: the JSON API with a cookie session', async (_name, headers) => {
    const tokens = await tokenCount(victim.id);
    const calls: [string, string, unknown][] = [
      ['PUT', '/api/user/self', { display_name: 'pwned' }],
      ['POST', '/api/token/', newToken],
      [
        'PUT',
        '/api/user/setting',
        { notify_type: 'webhook', quota_warning_threshold: 1, webhook_url: 'https://e/h' },
      ],
      ['DELETE', '/api/user/self', { confirm: victim.username, password: 'old-password-1' }],
    ];
    for (const [method, path, json] of calls) {
      const res = await send(victim, path, { method, headers, json });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(await res.json()).toEqual({
        success: false,
        message: expect.stringMatching(REFUSED),
        data: null,
      });
    }
    const admin = await send(root, '/api/user/', {
      method: 'PUT',
      headers,
      json: { id: target.id, username: target.username, quota: 999999 },
    });
    expect(admin.status).toBe(403);
    const after = await dbUser(victim.id);
    expect(after.displayName).not.toBe('pwned');
    expect(after.deletedAt).toBeNull();
    expect(await tokenCount(victim.id)).toBe(tokens);
    expect((await dbUser(target.id)).quota).toBe(100);
  });
});

describe('what keeps working', () => {
  it('same-origin and trusted-origin changes, by page and JSON', async () => {
    const who = await createE2eUser(orm, `cx_ok_${run}`, {
      passwordHash: await hashPassword('old-password-1'),
    });
    for (const headers of [sameOrigin(), TRUSTED]) {
      const tokens = await tokenCount(who.id);
      const created = await send(who, '/api/token/', { headers, json: newToken });
      expect(created.status).toBe(200);
      expect((await created.json()).success).toBe(true);
      expect(await tokenCount(who.id)).toBe(tokens + 1);
      const page = await send(who, '/setting.data', { headers, form: notifyForm });
      expect(page.status).toBe(202); // single fetch's redirect after the POST
      expect((await dbUser(who.id)).setting).toContain('evil.example/hook');
      await orm.em.fork().nativeUpdate(User, { id: who.id }, { setting: '' });
      const doc = await send(who, '/setting?tab=personal', {
        headers: { ...headers, Accept: 'text/html' },
        form: notifyForm,
      });
      expect(doc.status).toBe(302);
      expect((await dbUser(who.id)).setting).toContain('evil.example/hook');
    }
    const pwd = await send(who, '/api/user/self', {
      method: 'PUT',
      headers: sameOrigin(),
      json: { password: 'new-password-1', original_password: 'old-password-1' },
    });
    expect((await pwd.json()).success).toBe(true);
    expect(await verifyPassword('new-password-1', (await dbUser(who.id)).passwordHash)).toBe(true);
  });

  it('an access token works from any origin; a program without Origin or Sec-Fetch-Site logs in', async () => {
    const accessToken = `cx${crypto.randomUUID().replaceAll('-', '')}`;
    // Stored as its SHA-256, as the product stores access tokens (ADR 019); the caller sends the token itself.
    const who = await createE2eUser(orm, `cx_at_${run}`, {
      accessToken: await accessTokenHash(accessToken),
      passwordHash: await hashPassword('old-password-1'),
      withSession: false,
    });
    const res = await send(null, '/api/user/self', {
      method: 'PUT',
      headers: { ...EVIL, Authorization: `Bearer ${accessToken}`, 'New-Api-User': String(who.id) },
      json: { display_name: 'via token' },
    });
    expect((await res.json()).success).toBe(true);
    expect((await dbUser(who.id)).displayName).toBe('via token');
    const login = await send(null, '/api/user/login', {
      json: { username: who.username, password: 'old-password-1' },
    });
    expect(login.status).toBe(200);
    expect((await login.json()).success).toBe(true);
  });

  it('relay paths are forwarded whatever the origin', async () => {
    for (const path of ['/v1/chat/completions', '/v1beta/models/x:generateContent', '/mj/submit/imagine']) {
      const res = await send(null, path, { headers: EVIL, json: { model: 'x' } });
      // The relay's own answer (no key: 401; Gemini 400; an unknown Midjourney route 404), never the 403.
      expect(res.status, path).not.toBe(403);
      expect(res.status, path).toBeLessThan(500);
      expect(await res.text()).not.toMatch(REFUSED);
    }
  });
});

describe('a real browser on a sibling origin (the hostile test)', () => {
  let browser: Browser;
  let evil: Server;
  let consoleURL: string;
  let evilURL: string;

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [...CHROMIUM_ARGS, '--host-resolver-rules=MAP *.switchyard.test 127.0.0.1'],
    });
    const port = new URL(base()).port;
    consoleURL = `http://console.switchyard.test:${port}`;
    evil = createServer((req, res) => {
      const fields = new URL(req.url ?? '/', 'http://x').searchParams;
      const action = `${consoleURL}${fields.get('to')}`;
      const inputs = Object.entries(notifyForm)
        .map(([k, v]) => `<input type="hidden" name="${k}" value="${v}">`)
        .join('');
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<form method="post" action="${action}">${inputs}</form><script>document.forms[0].submit()</script>`,
      );
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    evilURL = `http://evil.switchyard.test:${(evil.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => (evil ? evil.close(() => r()) : r()));
  });

  it.each(['/setting?_data=routes%2Fsetting', '/setting?tab=personal', '/setting.data'])(
    'a form auto-posted to %s is refused and changes nothing',
    async (to) => {
      const victim = await createE2eUser(orm, `cx_b${run}_${to.length}`);
      const context = await browser.newContext({ locale: 'zh-CN' });
      await context.addCookies([{ name: SESSION_COOKIE, value: victim.token, url: consoleURL }]);
      const page = await context.newPage();
      const [posted] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.goto(`${evilURL}/?to=${encodeURIComponent(to)}`),
      ]);
      expect((await posted.request().allHeaders()).cookie ?? '').toContain(SESSION_COOKIE);
      expect(posted.status()).toBe(403);
      expect((await dbUser(victim.id)).setting).not.toContain('evil.example');
      await context.close();
    },
  );
});
