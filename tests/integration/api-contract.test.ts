/**
 * The console's JSON contract and session edges (issue 14, ADR 021), against the real console HTTP server
 * (server/console.ts, Remix through Vite's dev server: no build needed):
 * - every `/api/*` path and method the console does not serve answers the envelope `{success:false, message}`,
 *   never Remix's HTML page or its own JSON error, and logs no server error; OPTIONS is a quiet 204;
 * - a page reached with a session cookie that is no longer valid redirects to `/login?expired=true` (seed 000
 *   §4), a visitor who never signed in to the plain `/login`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningConsole } from '../../server/console.ts';
import { signedInUser, startForwardingConsole, type Who } from './console-harness.ts';
import { type Stack, startStack } from './relay-stack.ts';

let stack: Stack;
let console_: RunningConsole;
let base: string;
let user: Who;

beforeAll(async () => {
  stack = await startStack({ suffix: 'api_contract' });
  console_ = await startForwardingConsole(stack);
  base = console_.url;
  user = await signedInUser(stack, { quota: 0 });
}, 120_000);

afterAll(async () => {
  await console_?.stop();
  await stack?.close();
});

afterEach(() => {
  vi.restoreAllMocks();
});

function send(method: string, path: string, who: Who | null = user, headers: Record<string, string> = {}) {
  const auth: Record<string, string> = who
    ? { cookie: `sy_session=${who.session}`, 'New-Api-User': String(who.id) }
    : {};
  return fetch(`${base}${path}`, {
    method,
    headers: { 'Accept-Language': 'en', ...auth, ...headers },
    redirect: 'manual',
  });
}

describe('every /api answer is the envelope', () => {
  it('an unknown path is a 404 envelope for any method and any caller', async () => {
    for (const who of [user, null])
      for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'])
        for (const path of ['/api/no-such-thing', '/api/user/no/such/deeper?x=1', '/api', '/api/']) {
          const res = await send(method, path, who);
          expect([method, path, res.status, res.headers.get('content-type')]).toEqual([
            method,
            path,
            404,
            'application/json; charset=utf-8',
          ]);
          expect(await res.json()).toEqual({
            success: false,
            message: 'No such API: check the path',
            data: null,
          });
        }
  });

  it('a known path with a method it does not serve is a 405 envelope, and no server error is logged', async () => {
    const errors = vi.spyOn(console, 'error');
    for (const [method, path] of [
      ['DELETE', '/api/status'], // loader only: Remix finds no action
      ['POST', '/api/status'],
      ['GET', '/api/user/login'], // action only: Remix finds no loader
      ['GET', '/api/user/register'],
    ] as const) {
      const res = await send(method, path);
      expect([method, path, res.status, res.headers.get('x-remix-error')]).toEqual([method, path, 405, null]);
      expect(await res.json()).toEqual({ success: false, message: 'Method not allowed', data: null });
    }
    const zh = await send('DELETE', '/api/status', user, { 'Accept-Language': 'zh' });
    expect(await zh.json()).toMatchObject({ success: false, message: '不支持该请求方法' });
    expect(errors).not.toHaveBeenCalled();
  });

  it('OPTIONS is a 204 without CORS headers, runs no handler and logs nothing', async () => {
    const errors = vi.spyOn(console, 'error');
    for (const path of ['/api/user/login', '/api/status', '/api/no-such-thing']) {
      const res = await send('OPTIONS', path, null, {
        Origin: 'https://elsewhere.example',
        'Access-Control-Request-Method': 'POST',
      });
      expect([path, res.status, await res.text()]).toEqual([path, 204, '']);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
    expect(errors).not.toHaveBeenCalled();
  });

  it('the known routes still answer as before', async () => {
    const status = await send('GET', '/api/status', null);
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ success: true });
    const self = await send('GET', '/api/user/self');
    expect(await self.json()).toMatchObject({ success: true, data: { id: user.id } });
  });
});

describe('a page reached with an ended session', () => {
  it('redirects to /login?expired=true with the way back and clears the stale cookie', async () => {
    const who = await signedInUser(stack, { quota: 0 });
    expect((await send('GET', '/token', who)).status).toBe(200);
    await stack.sql(`update sessions set expires_at = now() - interval '1 hour' where user_id = ?`, [who.id]);
    for (const path of ['/token', '/setting?tab=personal', '/user']) {
      const res = await send('GET', path, who);
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get('location') ?? '', base);
      expect([location.pathname, location.searchParams.get('expired')]).toEqual(['/login', 'true']);
      expect(location.searchParams.get('redirectTo')).toBe(path);
      expect(res.headers.get('set-cookie')).toMatch(/^sy_session=;.*Max-Age=0/);
    }
  });

  it('a session revoked elsewhere (logout, password change) counts as ended too', async () => {
    const who = await signedInUser(stack, { quota: 0 });
    await stack.sql(`delete from sessions where user_id = ?`, [who.id]);
    const res = await send('GET', '/log', who);
    expect(res.headers.get('location')).toBe('/login?expired=true&redirectTo=%2Flog');
  });

  it('a visitor who never signed in goes to the plain /login', async () => {
    const res = await send('GET', '/token', null);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/login?redirectTo=%2Ftoken');
    expect(res.headers.get('set-cookie')).toBeNull();
  });
});
