import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import { Session } from '@switchyard/db/entities/session.ts';
import { UserStatus } from '@switchyard/db/entities/user.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '#app/domain/auth/session.server.ts';
import { type AuthEnv, createAuthEnv, freshIp, req } from '#app/domain/auth/testing.server.ts';
import { loader as resetPasswordLoader } from './api.reset_password.ts';
import { action as loginAction } from './api.user.login.ts';
import { loader as logoutLoader } from './api.user.logout.ts';
import { action as registerAction } from './api.user.register.ts';
import { action as resetAction } from './api.user.reset.ts';
import { loader as verificationLoader } from './api.verification.ts';
import { action as logoutPageAction } from './logout.ts';

const EN = { 'Accept-Language': 'en' };
const BASE = 'http://localhost';

type Envelope = { success: boolean; message: string; data: unknown };

/** The user object of every user answer (login, /api/user/self, /api/user/{id}, the user lists). */
const USER_WIRE_KEYS = [
  'id',
  'username',
  'display_name',
  'role',
  'status',
  'email',
  'github_id',
  'wechat_id',
  'telegram_id',
  'linux_do_id',
  'group',
  'quota',
  'used_quota',
  'request_count',
  'aff_code',
  'aff_count',
  'aff_quota',
  'aff_history_quota',
  'inviter_id',
  'setting',
  'created_at',
  'DeletedAt',
];

describe('auth JSON routes', () => {
  let env: AuthEnv;
  beforeAll(async () => {
    env = await createAuthEnv('auth_routes');
  });
  afterAll(async () => {
    await env?.close();
  });

  async function call(
    fn: (args: ActionFunctionArgs & LoaderFunctionArgs) => unknown,
    request: Request,
  ): Promise<{ status: number; body: Envelope; headers: Headers }> {
    const res = (await fn({ request, context: { services: env.services }, params: {} } as never)) as Response;
    return { status: res.status, body: (await res.json()) as Envelope, headers: res.headers };
  }
  const login = (json: unknown, opts: { ip?: string; query?: string } = {}) =>
    call(
      loginAction as never,
      req(`${BASE}/api/user/login${opts.query ?? ''}`, {
        json,
        headers: EN,
        ...(opts.ip ? { ip: opts.ip } : {}),
      }),
    );
  const sessionOf = (headers: Headers) => headers.get('Set-Cookie')?.split(';')[0] ?? '';

  describe('POST /api/user/login', () => {
    beforeAll(async () => {
      await env.createUser({
        username: 'alice',
        password: 'alice-password',
        email: 'alice@example.com',
        group: 'vip',
      });
      await env.createUser({ username: 'mallory', password: 'mallory-password', status: UserStatus.Banned });
      await env.createUser({ username: 'ghost', password: 'ghost-password', deletedAt: new Date() });
    });

    it('answers the user and sets the session cookie', async () => {
      const res = await login({ username: 'alice', password: 'alice-password' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        message: '',
        data: {
          id: expect.any(Number),
          username: 'alice',
          display_name: 'alice',
          role: 1,
          status: 1,
          group: 'vip',
        },
      });
      // data is the whole wire user (new-api's setupLogin answers a model.User), `setting` a JSON string (ADR 025)
      const data = res.body.data as Record<string, unknown>;
      expect(Object.keys(data).sort()).toEqual([...USER_WIRE_KEYS].sort());
      expect(typeof data.setting).toBe('string');
      expect(JSON.parse(String(data.setting))).toMatchObject({
        notify_type: 'email',
        webhook_secret_set: false,
      });
      expect(data).not.toHaveProperty('password_hash');
      expect(data).not.toHaveProperty('access_token');
      expect(res.headers.get('Set-Cookie')).toMatch(/^sy_session=[\w-]+; Path=\/; HttpOnly; SameSite=Lax/);
      const byEmail = await login({ username: 'alice@example.com', password: 'alice-password' });
      expect(byEmail.body.success).toBe(true);
    });

    it('refuses empty, wrong, banned and deregistered with success false and HTTP 200', async () => {
      const cases: [unknown, string][] = [
        [{}, 'Please enter username and password'],
        [{ username: 'alice', password: '' }, 'Please enter username and password'],
        [
          { username: 'alice', password: 'wrong-password' },
          'Username or password is wrong, or user has been banned',
        ],
        [{ username: 'mallory', password: 'mallory-password' }, 'User has been banned'],
        [
          { username: 'ghost', password: 'ghost-password' },
          'This account has been deregistered and cannot log in',
        ],
      ];
      for (const [body, message] of cases) {
        const res = await login(body);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ success: false, message });
        expect(res.headers.get('Set-Cookie')).toBeNull();
      }
    });

    it('refuses when password login is off', async () => {
      await env.setOption('PasswordLoginEnabled', 'false');
      try {
        const res = await login({ username: 'alice', password: 'alice-password' });
        expect(res.body).toMatchObject({
          success: false,
          message: 'The administrator has turned off password login',
        });
      } finally {
        await env.setOption('PasswordLoginEnabled', 'true');
      }
    });

    it('checks ?turnstile= when Turnstile is on', async () => {
      await env.setOption('TurnstileCheckEnabled', 'true');
      try {
        const body = { username: 'alice', password: 'alice-password' };
        expect((await login(body)).body).toMatchObject({
          success: false,
          message: 'Turnstile token is empty',
        });
        expect((await login(body, { query: '?turnstile=forged' })).body).toMatchObject({
          success: false,
          message: 'Turnstile verification failed, please refresh and retry!',
        });
        expect((await login(body, { query: '?turnstile=pass-1' })).body.success).toBe(true);
      } finally {
        await env.setOption('TurnstileCheckEnabled', 'false');
      }
    });

    it('answers the 21st attempt from one address with 429', async () => {
      const ip = freshIp();
      // a different account each time, so that only the per-IP limit applies (not the back-off per account)
      for (let i = 0; i < 20; i++) {
        expect((await login({ username: `nobody${i}`, password: 'wrong-password' }, { ip })).status).toBe(
          200,
        );
      }
      const res = await login({ username: 'alice', password: 'alice-password' }, { ip });
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ success: false, message: 'Too many requests, try again later', data: null });
      expect(Number(res.headers.get('Retry-After'))).toBeGreaterThan(0);
    });
  });

  describe('logout', () => {
    it('GET /api/user/logout and POST /logout revoke the session row', async () => {
      await env.createUser({ username: 'bob', password: 'bob-password' });
      for (const how of ['api', 'page'] as const) {
        const cookie = sessionOf((await login({ username: 'bob', password: 'bob-password' })).headers);
        const id = await sha256Hex(cookie.split('=')[1] ?? '');
        const em = env.db.orm.em.fork();
        expect(await em.count(Session, { id })).toBe(1);
        if (how === 'api') {
          const res = await call(
            logoutLoader as never,
            req(`${BASE}/api/user/logout`, { headers: { Cookie: cookie, ...EN } }),
          );
          expect(res.body).toMatchObject({ success: true, message: 'Logged out successfully' });
          expect(res.headers.get('Set-Cookie')).toContain('Max-Age=0');
        } else {
          const res = (await logoutPageAction({
            request: req(`${BASE}/logout`, { method: 'POST', headers: { Cookie: cookie } }),
            context: { services: env.services },
            params: {},
          } as never)) as Response;
          expect(res.status).toBe(302);
        }
        expect(await em.count(Session, { id })).toBe(0);
      }
    });
  });

  describe('register, e-mail code and password reset', () => {
    const register = (json: unknown, query = '') =>
      call(registerAction as never, req(`${BASE}/api/user/register${query}`, { json, headers: EN }));
    const verification = (query: string, ip?: string) =>
      call(
        verificationLoader as never,
        req(`${BASE}/api/verification${query}`, { headers: EN, ...(ip ? { ip } : {}) }),
      );

    it('registers with the seed body; refuses a mismatch and a taken name', async () => {
      const ok = await register({
        username: 'carol',
        password: 'carol-password',
        password2: 'carol-password',
        aff_code: '',
      });
      expect(ok.body).toMatchObject({ success: true, message: 'Registered successfully' });
      expect((await login({ username: 'carol', password: 'carol-password' })).body.success).toBe(true);
      expect(
        (await register({ username: 'dave', password: 'dave-password', password2: 'other-pass' })).body,
      ).toMatchObject({
        success: false,
        message: 'The two passwords do not match',
      });
      expect((await register({ username: 'carol', password: 'carol-password' })).body).toMatchObject({
        success: false,
        message: 'Username already exists',
      });
      expect((await register({ username: 'dave', password: 'short' })).body.message).toBe(
        'Password length must not be less than 8',
      );
    });

    it("registers with aff_code null, as the seeds' client sends without an invite link (issue 23 item 9)", async () => {
      const ok = await register({
        username: 'nullaff',
        password: 'nullaff-password',
        password2: 'nullaff-password',
        email: null,
        verification_code: null,
        aff_code: null,
      });
      expect(ok.body).toMatchObject({ success: true, message: 'Registered successfully' });
      expect((await login({ username: 'nullaff', password: 'nullaff-password' })).body.success).toBe(true);
      // null for a required value is still a refusal in the envelope, never a 500
      const none = await register({ username: null, password: null, aff_code: null });
      expect(none.status).toBe(200);
      expect(none.body.success).toBe(false);
    });

    it('with e-mail verification: GET /api/verification mails a code that registers once', async () => {
      await env.setOption('EmailVerificationEnabled', 'true');
      try {
        expect((await verification('?email=')).body).toMatchObject({
          success: false,
          message: 'E-mail cannot be empty',
        });
        const sent = await verification('?email=erin%40example.com');
        expect(sent.body).toMatchObject({
          success: true,
          message: 'Verification code sent, check your mailbox',
        });
        const mail = await env.smtp.waitFor((m) => m.to.includes('erin@example.com'));
        const code = /(\d{6})/.exec(mail.text)?.[1] ?? '';
        const body = {
          username: 'erin',
          password: 'erin-password',
          password2: 'erin-password',
          email: 'erin@example.com',
        };
        expect((await register(body)).body.success).toBe(false);
        expect((await register({ ...body, verification_code: code })).body.success).toBe(true);
        const again = await register({ ...body, username: 'erin2', verification_code: code });
        expect(again.body.success).toBe(false);
        expect((await verification('?email=erin%40example.com')).body).toMatchObject({
          success: false,
          message: 'This e-mail address is already taken',
        });
      } finally {
        await env.setOption('EmailVerificationEnabled', 'false');
      }
    });

    it('checks Turnstile and the rate limit on /api/verification', async () => {
      await env.setOption('TurnstileCheckEnabled', 'true');
      try {
        expect((await verification('?email=t%40example.com')).body.message).toBe('Turnstile token is empty');
        expect((await verification('?email=t%40example.com&turnstile=pass-x')).body.success).toBe(true);
      } finally {
        await env.setOption('TurnstileCheckEnabled', 'false');
      }
      const ip = freshIp();
      for (let i = 0; i < 20; i++) await verification('?email=', ip);
      expect((await verification('?email=', ip)).status).toBe(429);
    });

    it('GET /api/reset_password + POST /api/user/reset give a new password once', async () => {
      await env.createUser({ username: 'frank', password: 'frank-password', email: 'frank@example.com' });
      const cookie = sessionOf((await login({ username: 'frank', password: 'frank-password' })).headers);
      const unknown = await call(
        resetPasswordLoader as never,
        req(`${BASE}/api/reset_password?email=nobody%40example.com`, { headers: EN }),
      );
      const known = await call(
        resetPasswordLoader as never,
        req(`${BASE}/api/reset_password?email=frank%40example.com`, { headers: EN }),
      );
      expect(unknown.body).toEqual(known.body);
      expect(known.body.success).toBe(true);
      const mail = await env.smtp.waitFor((m) => m.to.includes('frank@example.com'));
      const link = new URL(
        /https:\/\/console\.example\.com\/user\/reset\?\S+?token=[\w-]+/.exec(mail.text)?.[0] ?? '',
      );
      const token = link.searchParams.get('token');
      const confirm = (json: unknown) =>
        call(resetAction as never, req(`${BASE}/api/user/reset`, { json, headers: EN }));
      const res = await confirm({ email: 'frank@example.com', token });
      expect(res.body.success).toBe(true);
      expect(res.body.data).toMatch(/^[A-Za-z0-9]{12}$/);
      const id = await sha256Hex(cookie.split('=')[1] ?? '');
      expect(await env.db.orm.em.fork().count(Session, { id })).toBe(0);
      expect((await login({ username: 'frank', password: String(res.body.data) })).body.success).toBe(true);
      expect((await confirm({ email: 'frank@example.com', token })).body).toMatchObject({
        success: false,
        message: 'The reset link is invalid or has expired',
      });
    });
  });
});
