import { User } from '@switchyard/db/entities/user.ts';
import { hashPassword } from '@switchyard/db/security/password.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FormReply } from '#app/components/auth/action.server.ts';
import {
  type AuthTestEnv,
  callAction,
  callLoader,
  cookiesOf,
  createAuthTestEnv,
  formRequest,
} from '#app/components/auth/testing.server.ts';
import { getSessionUser } from '#app/domain/auth/session.server.ts';
import { HOSTILE_REDIRECTS } from '#app/utils/hostile-redirects.testing.ts';
import { getToast } from '#app/utils/toast.server.ts';
import { action, loader } from './login.tsx';

const EN = { 'Accept-Language': 'en' };

describe('/login route', () => {
  let env: AuthTestEnv;
  beforeAll(async () => {
    env = await createAuthTestEnv('login_page');
    const em = env.db.orm.em.fork();
    em.create(User, {
      username: 'alice',
      displayName: 'Alice',
      passwordHash: await hashPassword('alice-password'),
      email: 'alice@example.com',
      affCode: 'ALCE',
    } as never);
    await em.flush();
  });
  afterAll(async () => {
    await env?.close();
  });

  it('loader flags ?expired=true, keeps redirectTo and stores ?aff in a cookie', async () => {
    const res = await callLoader<{ expired: boolean; redirectTo: string }>(
      loader,
      new Request('http://localhost/login?expired=true&redirectTo=/log&aff=AbC1'),
      env.services,
    );
    expect(res.data).toMatchObject({ expired: true, redirectTo: '/log' });
    expect(res.headers.get('Set-Cookie')).toMatch(/^sy_aff=/);
    const plain = await callLoader<{ expired: boolean }>(
      loader,
      new Request('http://localhost/login'),
      env.services,
    );
    expect(plain.data?.expired).toBe(false);
  });

  it('logs in with username and password, sets the session and redirects to /token', async () => {
    const res = await callAction<FormReply>(
      action,
      formRequest('http://localhost/login', {
        intent: 'login',
        username: 'alice',
        password: 'alice-password',
      }),
      env.services,
    );
    expect(res.status).toBe(302);
    expect(res.location).toBe('/token');
    const cookie = cookiesOf(res.headers);
    expect(cookie).toMatch(/sy_session=/);
    expect(cookie).toMatch(/sy_toast=/);
    const user = await getSessionUser(
      new Request('http://localhost/', { headers: { Cookie: cookie } }),
      env.services,
    );
    expect(user?.username).toBe('alice');
  });

  it('accepts the e-mail as login name and honours a safe redirectTo only', async () => {
    const ok = await callAction<FormReply>(
      action,
      formRequest('http://localhost/login', {
        username: 'alice@example.com',
        password: 'alice-password',
        redirectTo: '/log?p=2',
      }),
      env.services,
    );
    expect(ok.location).toBe('/log?p=2');
    const evil = await callAction<FormReply>(
      action,
      formRequest('http://localhost/login', {
        username: 'alice',
        password: 'alice-password',
        redirectTo: '//evil.example/x',
      }),
      env.services,
    );
    expect(evil.location).toBe('/token');
  });

  it('sends every hostile redirectTo to a path on our own origin (issue 23 item 6)', async () => {
    const origin = 'http://localhost';
    for (const target of HOSTILE_REDIRECTS) {
      const page = await callLoader<{ redirectTo: string }>(
        loader,
        new Request(`${origin}/login?${new URLSearchParams({ redirectTo: target })}`),
        env.services,
      );
      const res = await callAction<FormReply>(
        action,
        formRequest(`${origin}/login`, {
          username: 'alice',
          password: 'alice-password',
          redirectTo: target,
        }),
        env.services,
      );
      expect(res.status, JSON.stringify(target)).toBe(302);
      for (const where of [res.location ?? '', page.data?.redirectTo || '/token']) {
        expect(where, JSON.stringify(target)).toMatch(/^\/(?![/\\])/);
        expect(new URL(where, origin).origin, JSON.stringify(target)).toBe(origin);
      }
    }
  });

  it('answers a wrong password with the message, keeping the username but never the password', async () => {
    const res = await callAction<FormReply>(
      action,
      formRequest('http://localhost/login', { username: 'alice', password: 'wrong-password' }, EN),
      env.services,
    );
    expect(res.status).toBe(400);
    expect(res.location).toBeNull();
    expect(res.data?.message).toBeTruthy();
    expect(res.data?.values).toEqual({ username: 'alice', redirectTo: '' });
    expect(JSON.stringify(res.data)).not.toContain('wrong-password');
  });

  it('answers a login field over 255 characters with the form error, never a 500 (issue 13, item 7)', async () => {
    for (const fields of [
      { username: 'x'.repeat(300), password: 'alice-password' },
      { username: 'alice', password: 'p'.repeat(300) },
    ]) {
      const res = await callAction<FormReply>(
        action,
        formRequest('http://localhost/login', fields, EN),
        env.services,
      );
      expect(res.status).toBe(400);
      expect(res.data?.message).toBe('Username and password are at most 255 characters');
    }
  });

  it('requires username and password (seed 000 §5 message)', async () => {
    const res = await callAction<FormReply>(
      action,
      formRequest('http://localhost/login', { username: '', password: '' }, EN),
      env.services,
    );
    expect(res.data?.message).toBe('Please enter username and password!');
  });

  it('refuses a failing Turnstile token and accepts a passing one when the check is on', async () => {
    await env.setOption('TurnstileCheckEnabled', 'true');
    try {
      const refused = await callAction<FormReply>(
        action,
        formRequest('http://localhost/login', {
          username: 'alice',
          password: 'alice-password',
          'cf-turnstile-response': 'fail-token',
        }),
        env.services,
      );
      expect(refused.location).toBeNull();
      expect(refused.data?.message).toBeTruthy();
      const missing = await callAction<FormReply>(
        action,
        formRequest('http://localhost/login', { username: 'alice', password: 'alice-password' }),
        env.services,
      );
      expect(missing.location).toBeNull();
      const passed = await callAction<FormReply>(
        action,
        formRequest('http://localhost/login', {
          username: 'alice',
          password: 'alice-password',
          'cf-turnstile-response': 'pass-token',
        }),
        env.services,
      );
      expect(passed.location).toBe('/token');
      expect(env.turnstile.requests.map((r) => r.response)).toEqual(['fail-token', 'pass-token']);
    } finally {
      await env.setOption('TurnstileCheckEnabled', 'false');
    }
  });

  it('warns the root user who still has the default password', async () => {
    const res = await callAction<FormReply>(
      action,
      formRequest('http://localhost/login', { username: 'root', password: '123456' }, EN),
      env.services,
    );
    expect(res.location).toBe('/token');
    const { toast } = await getToast(
      new Request('http://localhost/', { headers: { Cookie: cookiesOf(res.headers) } }),
    );
    expect(toast).toMatchObject({ type: 'error' });
    expect(toast?.message).toContain('default password');
  });

  it('intent=oauth redirects to the provider with a state cookie when enabled, back to /login otherwise', async () => {
    const off = await callAction<FormReply>(
      action,
      formRequest('http://localhost/login', { intent: 'oauth', provider: 'github' }),
      env.services,
    );
    expect(off.location).toBe('/login');
    await env.setOption('GitHubOAuthEnabled', 'true');
    await env.setOption('GitHubClientId', 'client-1');
    try {
      const on = await callAction<FormReply>(
        action,
        formRequest('http://localhost/login', { intent: 'oauth', provider: 'github' }),
        env.services,
      );
      const url = new URL(on.location ?? '');
      expect(url.searchParams.get('client_id')).toBe('client-1');
      expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
      expect(on.headers.get('Set-Cookie')).toMatch(/^sy_oauth\./);
    } finally {
      await env.setOption('GitHubOAuthEnabled', 'false');
    }
  });
});
