/**
 * Issue 23 item 7: anyone could lock any account, root included, because the per-account back-off refused even
 * the right password. A browser that has logged in to the account before (device cookie, ADR 037) is never
 * refused by it, through POST /api/user/login, the /login form (a document post, no JavaScript) and the
 * remix-auth form strategy; untrusted clients are still throttled; a device cookie has its own failure count.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FormReply } from '#app/components/auth/action.server.ts';
import { loginWithPassword } from '#app/domain/auth/login.server.ts';
import { type AuthEnv, createAuthEnv, freshIp, req } from '#app/domain/auth/testing.server.ts';
import { DEVICE_COOKIE_PREFIX, deviceCookieName } from '#app/domain/security/device-cookie.server.ts';
import { CLIENT_IP_HEADER } from '#app/domain/security/rate-limit.server.ts';
import { action as loginApiAction } from '#app/routes/api.user.login.ts';
import { action as loginPageAction } from '#app/routes/login.tsx';
import type { ConsoleServices } from '#app/services.server.ts';

type Answer = { status: number; success: boolean; message: string; cookies: string[] };

describe('device cookies exempt known browsers from the login back-off', () => {
  let env: AuthEnv;
  let services: ConsoleServices;
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    env = await createAuthEnv('device_cookie');
    services = {
      ...env.services,
      auth: {
        ...env.services.auth!,
        loginBackoff: { failures: 5, maxSeconds: 60, baseMs: 30_000 },
        sessionSecret: 'device-cookie-test-secret-0123456789',
      },
    };
    for (const [name, role] of [
      ['root', 100],
      ['bob', 1],
      ['carol', 1],
      ['dave', 1],
      ['erin', 1],
    ] as const) {
      ids[name] = (await env.createUser({ username: name, password: `${name}-password`, role })).id;
    }
  });
  afterAll(async () => {
    await env?.close();
  });

  /** POST /api/user/login from a fresh client IP, with the given Cookie header. */
  async function viaApi(
    username: string,
    password: string,
    cookie = '',
    url = 'http://localhost',
  ): Promise<Answer> {
    const request = req(`${url}/api/user/login`, {
      json: { username, password },
      headers: { 'Accept-Language': 'en', ...(cookie ? { Cookie: cookie } : {}) },
    });
    const res = (await loginApiAction({ request, context: { services }, params: {} } as never)) as Response;
    const body = (await res.json()) as { success: boolean; message: string };
    return { status: res.status, ...body, cookies: res.headers.getSetCookie() };
  }

  function formRequest(username: string, password: string, cookie: string): Request {
    return new Request('http://localhost/login', {
      method: 'POST',
      body: new URLSearchParams({ intent: 'login', username, password }),
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'Accept-Language': 'en',
        [CLIENT_IP_HEADER]: freshIp(),
        ...(cookie ? { Cookie: cookie } : {}),
      },
    });
  }

  /** The /login form as a browser without JavaScript posts it. */
  async function viaPage(username: string, password: string, cookie = ''): Promise<Answer> {
    const out = (await loginPageAction({
      request: formRequest(username, password, cookie),
      context: { services },
      params: {},
    } as never)) as Response | { data: FormReply; init: { status?: number } | null };
    if (out instanceof Response)
      return {
        status: out.status,
        success: out.status === 302,
        message: '',
        cookies: out.headers.getSetCookie(),
      };
    return { status: out.init?.status ?? 200, success: false, message: out.data.message ?? '', cookies: [] };
  }

  /** remix-auth's form strategy reading the form post itself. */
  async function viaStrategy(username: string, password: string, cookie = ''): Promise<Answer> {
    try {
      const result = await loginWithPassword(services, formRequest(username, password, cookie));
      return { status: 200, success: true, message: '', cookies: result.cookies };
    } catch (error) {
      const e = error as { status?: number; message: string };
      return { status: e.status ?? 400, success: false, message: e.message, cookies: [] };
    }
  }

  const deviceOf = (a: Answer, name: string) => {
    const set = a.cookies.find((c) => c.startsWith(`${deviceCookieName(ids[name] ?? 0)}=`));
    if (!set) throw new Error(`no device cookie for ${name} in ${JSON.stringify(a.cookies)}`);
    return set.split(';')[0] ?? '';
  };

  async function lock(name: string) {
    for (let i = 0; i < 6; i++) await viaApi(name, 'wrong-password');
    expect((await viaApi(name, `${name}-password`)).status).toBe(429);
  }

  it('root, under attack, logs in at once with its device cookie by every transport; untrusted clients still wait', async () => {
    const first = await viaApi('root', 'root-password');
    expect(first.success).toBe(true);
    const device = deviceOf(first, 'root');
    await lock('root');
    for (const [transport, login] of [
      ['POST /api/user/login', viaApi],
      ['the /login form', viaPage],
      ['the remix-auth form strategy', viaStrategy],
    ] as const) {
      const a = await login('root', 'root-password', device);
      expect(a, transport).toMatchObject({ success: true });
      expect(
        a.cookies.some((c) => c.startsWith('sy_session=')),
        transport,
      ).toBe(true);
      expect(
        a.cookies.some((c) => c.startsWith(deviceCookieName(ids.root ?? 0))),
        transport,
      ).toBe(true);
      // the attacker's count stays: without the cookie, even the right password waits
      expect((await login('root', 'root-password')).status, transport).toBe(429);
      // and the attacker's guesses keep being refused
      expect((await viaApi('root', 'guess')).status, transport).toBe(429);
    }
    // a device cookie does not help at another account
    await lock('erin');
    const borrowed = device.replace(
      `${DEVICE_COOKIE_PREFIX}${ids.root}=`,
      `${DEVICE_COOKIE_PREFIX}${ids.erin}=`,
    );
    expect((await viaApi('erin', 'erin-password', borrowed)).status).toBe(429);
    expect((await viaApi('erin', 'erin-password', device)).status).toBe(429);
  });

  it('a device cookie that fails 5 times is no longer trusted; its failures do not feed the account count', async () => {
    const device = deviceOf(await viaApi('bob', 'bob-password'), 'bob');
    for (let i = 0; i < 5; i++) {
      const a = await viaApi('bob', 'wrong-password', device);
      expect(a, `attempt ${i + 1}`).toMatchObject({
        success: false,
        message: 'Username or password is wrong, or user has been banned',
      });
    }
    // the account itself was not counted: a client without the cookie logs in
    expect((await viaApi('bob', 'bob-password')).success).toBe(true);
    // once the account is locked, the spent device cookie waits like anyone else
    await lock('bob');
    expect((await viaApi('bob', 'bob-password', device)).status).toBe(429);
    expect((await viaPage('bob', 'bob-password', device)).status).toBe(429);
  });

  it('a success from the device restarts its own count', async () => {
    const device = deviceOf(await viaApi('carol', 'carol-password'), 'carol');
    for (let i = 0; i < 4; i++) await viaApi('carol', 'wrong-password', device);
    const again = await viaApi('carol', 'carol-password', device);
    expect(again.success).toBe(true);
    await lock('carol');
    for (let i = 0; i < 4; i++) expect((await viaApi('carol', 'wrong-password', device)).status).toBe(200);
    expect((await viaApi('carol', 'carol-password', device)).success).toBe(true);
  });

  it('a forged, altered or foreign-key cookie is not trusted', async () => {
    const device = deviceOf(await viaApi('dave', 'dave-password'), 'dave');
    await lock('dave');
    const [name, value] = device.split('=') as [string, string];
    const [body, signature] = value.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
    const forgedBody = Buffer.from(JSON.stringify({ ...payload, n: 'attacker-nonce' })).toString('base64url');
    for (const cookie of [
      `${name}=${forgedBody}.${signature}`,
      `${name}=${body}.${signature.slice(0, -2)}AA`,
      `${name}=${body}`,
      `${name}=garbage`,
    ]) {
      expect((await viaApi('dave', 'dave-password', cookie)).status, cookie).toBe(429);
    }
    // signed with another SESSION_SECRET
    const saved = services;
    services = { ...services, auth: { ...services.auth!, sessionSecret: 'another-secret-of-enough-length' } };
    try {
      expect((await viaApi('dave', 'dave-password', device)).status).toBe(429);
    } finally {
      services = saved;
    }
    expect((await viaApi('dave', 'dave-password', device)).success).toBe(true);
  });

  it('the cookie is HttpOnly, SameSite=Lax, long-lived, and Secure over https', async () => {
    const plain = (await viaApi('erin', 'erin-password', '', 'http://localhost')).cookies;
    // erin is locked from the first test: log in through a fresh account instead
    const fresh = await env.createUser({ username: 'frank', password: 'frank-password' });
    ids.frank = fresh.id;
    const http = deviceOf(await viaApi('frank', 'frank-password'), 'frank');
    const https = (await viaApi('frank', 'frank-password', '', 'https://console.example.com')).cookies.find(
      (c) => c.startsWith(`${deviceCookieName(fresh.id)}=`),
    );
    const httpSet = (await viaApi('frank', 'frank-password')).cookies.find((c) =>
      c.startsWith(http.split('=')[0] ?? ''),
    );
    expect(plain).toEqual([]);
    expect(httpSet).toMatch(/; Path=\/; HttpOnly; SameSite=Lax; Max-Age=31536000$/);
    expect(https).toMatch(/; HttpOnly; SameSite=Lax; Max-Age=31536000; Secure$/);
    // a fresh nonce on every login
    expect(httpSet?.split(';')[0]).not.toBe(http);
  });
});
