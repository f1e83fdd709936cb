import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User, UserStatus } from '@switchyard/db/entities/user.ts';
import { VerificationCode } from '@switchyard/db/entities/verification-code.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateApi, requireRole } from '#app/domain/auth/api-auth.server.ts';
import { authTFor } from '#app/domain/auth/i18n.server.ts';
import { completeLogin, loginWithPassword } from '#app/domain/auth/login.server.ts';
import { requestPasswordReset, resetPassword } from '#app/domain/auth/password-reset.server.ts';
import { createUserWithInvitation, registerUser } from '#app/domain/auth/register.server.ts';
import {
  accessTokenHash,
  createSession,
  getSessionUser,
  logout,
  revokeUserSessions,
  sha256Hex,
} from '#app/domain/auth/session.server.ts';
import { type AuthEnv, createAuthEnv, freshIp, req } from '#app/domain/auth/testing.server.ts';
import { ForbiddenError, InputError, TooManyRequestsError, UnauthorizedError } from '#app/domain/errors.ts';
import { checkEmailAllowed, consumeEmailCode, issueEmailCode } from '#app/domain/mail/verification.server.ts';
import {
  CLIENT_IP_HEADER,
  clientIp,
  createMemoryRateLimiter,
  enforceCriticalLimit,
} from '#app/domain/security/rate-limit.server.ts';
import { verifyTurnstile } from '#app/domain/security/turnstile.server.ts';

const EN = { 'Accept-Language': 'en' };
const en = authTFor('en');
const url = 'http://localhost/api/user/self';

function cookieOf(setCookie: string): string {
  return setCookie.split(';')[0] ?? '';
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  if (!(e instanceof Error)) throw new Error('expected a rejection');
  return e;
}

function codeIn(text: string): string {
  const m = /(\d{6})/.exec(text);
  if (!m?.[1]) throw new Error(`no code in ${text}`);
  return m[1];
}

describe('auth domain', () => {
  let env: AuthEnv;
  beforeAll(async () => {
    env = await createAuthEnv('auth_domain');
  });
  afterAll(async () => {
    await env?.close();
  });

  describe('sessions', () => {
    it('createSession writes a row keyed by the sha-256 of the cookie token and getSessionUser reads it', async () => {
      const user = await env.createUser({ username: 'sess1', password: 'password-1' });
      const ip = freshIp();
      const setCookie = await createSession(
        env.services,
        user,
        req(url, { ip, headers: { 'User-Agent': 'vitest' } }),
      );
      expect(setCookie).toMatch(
        /^sy_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/,
      );
      const token = cookieOf(setCookie).split('=')[1] ?? '';
      const row = await env.db.orm.em.fork().findOneOrFail(Session, { id: await sha256Hex(token) });
      expect(row).toMatchObject({ ip, userAgent: 'vitest' });
      expect(row.expiresAt.getTime()).toBeGreaterThan(Date.now() + 29 * 86_400_000);
      const me = await getSessionUser(req(url, { headers: { Cookie: cookieOf(setCookie) } }), env.services);
      expect(me).toEqual({ id: user.id, username: 'sess1', displayName: 'sess1', role: 1, group: 'default' });
    });

    it('refreshes lastSeenAt at most once a minute', async () => {
      const user = await env.createUser({ username: 'sess2', password: 'password-1' });
      const cookie = cookieOf(await createSession(env.services, user, req(url)));
      const id = await sha256Hex(cookie.split('=')[1] ?? '');
      const em = env.db.orm.em.fork();
      const old = new Date(Date.now() - 5 * 60_000);
      await em.nativeUpdate(Session, { id }, { lastSeenAt: old });
      await getSessionUser(req(url, { headers: { Cookie: cookie } }), env.services);
      const first = (await em.fork().findOneOrFail(Session, { id })).lastSeenAt;
      expect(first.getTime()).toBeGreaterThan(Date.now() - 10_000);
      const recent = new Date(Date.now() - 30_000);
      await em.nativeUpdate(Session, { id }, { lastSeenAt: recent });
      await getSessionUser(req(url, { headers: { Cookie: cookie } }), env.services);
      const second = (await em.fork().findOneOrFail(Session, { id })).lastSeenAt;
      expect(second.getTime()).toBe(recent.getTime());
    });

    it('revokeUserSessions ends every session but the excepted one; logout ends its own', async () => {
      const user = await env.createUser({ username: 'sess3', password: 'password-1' });
      const cookies = await Promise.all(
        [1, 2, 3].map(async () => cookieOf(await createSession(env.services, user, req(url)))),
      );
      const keep = await sha256Hex(cookies[0]?.split('=')[1] ?? '');
      const em = env.db.orm.em.fork();
      expect(await revokeUserSessions(em, user.id, keep)).toBe(2);
      expect(await em.count(Session, { user: user.id })).toBe(1);
      const clear = await logout(req(url, { headers: { Cookie: cookies[0] ?? '' } }), env.services);
      expect(clear).toContain('Max-Age=0');
      expect(await em.count(Session, { user: user.id })).toBe(0);
    });
  });

  describe('completeLogin and password login', () => {
    it('refuses banned and deregistered users, logs in the others', async () => {
      const banned = await env.createUser({
        username: 'banned1',
        password: 'password-1',
        status: UserStatus.Banned,
      });
      const gone = await env.createUser({ username: 'gone1', password: 'password-1', deletedAt: new Date() });
      const fine = await env.createUser({ username: 'fine1', password: 'password-1' });
      const r = () => req(url, { headers: EN });
      expect((await rejection(completeLogin(env.services, banned, r()))).message).toBe(
        'User has been banned',
      );
      expect((await rejection(completeLogin(env.services, gone, r()))).message).toBe(
        'This account has been deregistered and cannot log in',
      );
      expect((await rejection(completeLogin(env.services, banned, req(url)))).message).toBe('用户已被封禁');
      const done = await completeLogin(env.services, fine, r());
      expect(done.user.username).toBe('fine1');
      expect(done.setCookie).toMatch(/^sy_session=/);
    });

    it('accepts username or e-mail; refuses empty, wrong and banned with the seed messages', async () => {
      await env.createUser({ username: 'pw1', password: 'right-password', email: 'pw1@example.com' });
      await env.createUser({ username: 'pwban', password: 'right-password', status: UserStatus.Banned });
      const login = (username: string, password: string) =>
        loginWithPassword(env.services, { username, password }, req(url, { headers: EN }));
      expect((await login('pw1', 'right-password')).user.username).toBe('pw1');
      expect((await login('PW1@example.com', 'right-password')).user.username).toBe('pw1');
      const wrong = await rejection(login('pw1', 'wrong-password'));
      expect(wrong).toBeInstanceOf(InputError);
      expect(wrong.message).toBe('Username or password is wrong, or user has been banned');
      expect((await rejection(login('nobody', 'whatever'))).message).toBe(
        'Username or password is wrong, or user has been banned',
      );
      expect((await rejection(login('', ''))).message).toBe('Please enter username and password');
      expect((await rejection(login('pwban', 'right-password'))).message).toBe('User has been banned');
      expect((await rejection(login('pwban', 'wrong-password'))).message).toBe(
        'Username or password is wrong, or user has been banned',
      );
      await env.setOption('PasswordLoginEnabled', 'false');
      try {
        expect((await rejection(login('pw1', 'right-password'))).message).toBe(
          'The administrator has turned off password login',
        );
      } finally {
        await env.setOption('PasswordLoginEnabled', 'true');
      }
    });

    it('reads a form POST through remix-auth-form when given the request itself', async () => {
      await env.createUser({ username: 'form1', password: 'form-password' });
      const request = new Request('http://localhost/login', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          [CLIENT_IP_HEADER]: freshIp(),
          ...EN,
        },
        body: new URLSearchParams({ username: 'form1', password: 'form-password' }),
      });
      const result = await loginWithPassword(env.services, request);
      expect(result.user.username).toBe('form1');
      const bad = new Request('http://localhost/login', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...EN },
        body: new URLSearchParams({ username: 'form1', password: 'nope-nope' }),
      });
      expect((await rejection(loginWithPassword(env.services, bad))).message).toBe(
        'Username or password is wrong, or user has been banned',
      );
    });
  });

  describe('authenticateApi and requireRole', () => {
    it('accepts the session only with a matching New-Api-User header', async () => {
      const user = await env.createUser({ username: 'api1', password: 'password-1' });
      const cookie = cookieOf(await createSession(env.services, user, req(url)));
      const ok = await authenticateApi(
        req(url, { headers: { Cookie: cookie, 'New-Api-User': String(user.id) } }),
        env.services,
      );
      expect(ok).toEqual({ user: expect.objectContaining({ id: user.id }), via: 'session' });
      const missing = await rejection(
        authenticateApi(req(url, { headers: { Cookie: cookie, ...EN } }), env.services),
      );
      expect(missing).toBeInstanceOf(UnauthorizedError);
      expect(missing.message).toBe('Not allowed: the New-Api-User header is missing');
      const other = await rejection(
        authenticateApi(
          req(url, { headers: { Cookie: cookie, 'New-Api-User': '999999', ...EN } }),
          env.services,
        ),
      );
      expect(other.message).toBe('Not allowed: New-Api-User does not match the logged-in user');
      const nobody = await rejection(
        authenticateApi(req(url, { headers: { 'New-Api-User': '1' } }), env.services),
      );
      expect(nobody).toBeInstanceOf(UnauthorizedError);
    });

    it('accepts the system access token with or without Bearer; refuses unknown tokens and banned users', async () => {
      const user = await env.createUser({
        username: 'api2',
        password: 'password-1',
        accessToken: await accessTokenHash('tok-api2-abcdef'),
      });
      await env.createUser({
        username: 'api3',
        password: 'password-1',
        accessToken: await accessTokenHash('tok-api3-abcdef'),
        status: UserStatus.Banned,
      });
      for (const value of ['tok-api2-abcdef', 'Bearer tok-api2-abcdef']) {
        const p = await authenticateApi(req(url, { headers: { Authorization: value } }), env.services);
        expect(p).toMatchObject({ via: 'access_token', user: { id: user.id, username: 'api2' } });
      }
      const bad = await rejection(
        authenticateApi(req(url, { headers: { Authorization: 'nope', ...EN } }), env.services),
      );
      expect(bad).toBeInstanceOf(UnauthorizedError);
      expect(bad.message).toBe('Not allowed: the access token is invalid');
      const ban = await rejection(
        authenticateApi(req(url, { headers: { Authorization: 'tok-api3-abcdef' } }), env.services),
      );
      expect(ban).toBeInstanceOf(UnauthorizedError);
      const mismatch = await rejection(
        authenticateApi(
          req(url, { headers: { Authorization: 'tok-api2-abcdef', 'New-Api-User': String(user.id + 1000) } }),
          env.services,
        ),
      );
      expect(mismatch).toBeInstanceOf(UnauthorizedError);
    });

    it('requireRole throws ForbiddenError below the role, in the request language', async () => {
      const user = await env.createUser({
        username: 'api4',
        password: 'password-1',
        accessToken: await accessTokenHash('tok-api4-abcdef'),
      });
      const p = await authenticateApi(
        req(url, { headers: { Authorization: 'tok-api4-abcdef', ...EN } }),
        env.services,
      );
      expect(() => requireRole(p, Role.User)).not.toThrow();
      expect(() => requireRole(p, Role.Admin)).toThrow(ForbiddenError);
      expect(() => requireRole(p, Role.Admin)).toThrow('Not allowed: insufficient privileges');
      expect(user.role).toBe(Role.User);
    });
  });

  describe('registration and invitations', () => {
    it('createUserWithInvitation pays QuotaForNewUser, QuotaForInvitee and the inviter’s pending reward in one go', async () => {
      await env.setOption('QuotaForNewUser', '1000');
      await env.setOption('QuotaForInviter', '300');
      await env.setOption('QuotaForInvitee', '200');
      try {
        const inviter = await env.createUser({
          username: 'inviter1',
          password: 'password-1',
          affCode: 'INVITE1',
        });
        const em = env.db.orm.em.fork();
        const user = await createUserWithInvitation(em, env.services, {
          username: 'invitee1',
          password: 'password-1',
          affCode: 'INVITE1',
        });
        const fresh = env.db.orm.em.fork();
        const invitee = await fresh.findOneOrFail(User, { id: user.id });
        expect(invitee).toMatchObject({ quota: 1200, inviterId: inviter.id, displayName: 'invitee1' });
        expect(invitee.affCode).toMatch(/^[A-Za-z0-9]{8}$/);
        const after = await fresh.findOneOrFail(User, { id: inviter.id });
        expect(after).toMatchObject({ affCount: 1, affQuota: 300, affHistoryQuota: 300, quota: 0 });
        const logs = await fresh.find(
          Log,
          { userId: { $in: [inviter.id, user.id] } },
          { orderBy: { id: 'asc' } },
        );
        expect(logs.map((l) => [l.userId, l.type, l.quota])).toEqual([
          [user.id, LogType.Manage, 1000],
          [user.id, LogType.Manage, 200],
          [inviter.id, LogType.Manage, 300],
        ]);
        const audits = await fresh.find(AuditEntry, {
          targetId: { $in: [String(inviter.id), String(user.id)] },
        });
        expect(audits.map((a) => a.action).sort()).toEqual(['user.create', 'user.invite_reward']);
        // An unknown code is ignored; no inviter, no invitee bonus.
        const plain = await createUserWithInvitation(env.db.orm.em.fork(), env.services, {
          username: 'invitee2',
          password: null,
          githubId: 'gh-123',
          affCode: 'NOPE',
        });
        expect(plain).toMatchObject({ quota: 1000, inviterId: 0, githubId: 'gh-123', passwordHash: '' });
        const taken = await rejection(
          createUserWithInvitation(
            env.db.orm.em.fork(),
            env.services,
            { username: 'invitee1', password: null },
            en,
          ),
        );
        expect(taken.message).toBe('Username already exists');
      } finally {
        await env.setOption('QuotaForNewUser', '0');
        await env.setOption('QuotaForInviter', '0');
        await env.setOption('QuotaForInvitee', '0');
      }
    });

    it('registerUser enforces the switches and the username and password rules', async () => {
      const ctx = { em: env.db.orm.em.fork(), options: env.services.options, t: en };
      const reg = (input: Record<string, string>) =>
        rejection(registerUser(ctx, input)).then((e) => e.message);
      expect(await reg({ username: '', password: '' })).toBe('Username and password cannot be empty');
      expect(await reg({ username: 'r1', password: 'short' })).toBe(
        'Password length must not be less than 8',
      );
      expect(await reg({ username: 'r1', password: 'x'.repeat(21) })).toBe(
        'Password length must not be more than 20',
      );
      expect(await reg({ username: 'r1', password: 'password-1', password2: 'password-2' })).toBe(
        'The two passwords do not match',
      );
      expect(await reg({ username: 'x'.repeat(21), password: 'password-1' })).toBe(
        'Username must be 1 to 20 characters long',
      );
      await env.createUser({ username: 'taken1', password: 'password-1' });
      expect(await reg({ username: 'taken1', password: 'password-1' })).toBe('Username already exists');
      await env.setOption('RegisterEnabled', 'false');
      expect(await reg({ username: 'r2', password: 'password-1' })).toBe(
        'The administrator has turned off new user registration',
      );
      await env.setOption('RegisterEnabled', 'true');
      await env.setOption('PasswordRegisterEnabled', 'false');
      expect(await reg({ username: 'r2', password: 'password-1' })).toMatch(
        /turned off registration by password/,
      );
      await env.setOption('PasswordRegisterEnabled', 'true');
      const user = await registerUser(ctx, {
        username: 'r2',
        password: 'password-1',
        password2: 'password-1',
      });
      expect(user.id).toBeGreaterThan(0);
      // The new account can log in.
      const login = await loginWithPassword(
        env.services,
        { username: 'r2', password: 'password-1' },
        req(url),
      );
      expect(login.user.id).toBe(user.id);
    });

    it('with e-mail verification: needs e-mail and code, consumes the code once, refuses wrong and expired ones', async () => {
      await env.setOption('EmailVerificationEnabled', 'true');
      try {
        const em = env.db.orm.em.fork();
        const ctx = { em, options: env.services.options, t: en };
        expect(
          (await rejection(registerUser(ctx, { username: 'ev1', password: 'password-1' }))).message,
        ).toMatch(/enter your e-mail address and verification code/);
        await issueEmailCode({ ...ctx, ip: '1.2.3.4' }, 'EV1@Example.com', 'register');
        const mail = await env.smtp.waitFor((m) => m.to.includes('ev1@example.com'));
        expect(mail.subject).toBe('Switchyard e-mail verification');
        const code = codeIn(mail.text);
        const row = await em.fork().findOneOrFail(VerificationCode, { email: 'ev1@example.com' });
        expect(row.codeHash).not.toContain(code);
        expect(row.expiresAt.getTime() - Date.now()).toBeGreaterThan(9 * 60_000);
        const wrong = code === '000000' ? '111111' : '000000';
        expect(
          (
            await rejection(
              registerUser(ctx, {
                username: 'ev1',
                password: 'password-1',
                email: 'ev1@example.com',
                verification_code: wrong,
              }),
            )
          ).message,
        ).toBe('The verification code is wrong or has expired');
        const user = await registerUser(ctx, {
          username: 'ev1',
          password: 'password-1',
          email: 'ev1@example.com',
          verification_code: code,
        });
        expect(user.email).toBe('ev1@example.com');
        // Reused code: refused (and the address is taken by now, so checking the code directly).
        expect((await rejection(consumeEmailCode(em, 'ev1@example.com', 'register', code, en))).message).toBe(
          'The verification code is wrong or has expired',
        );
        // Expired code.
        await issueEmailCode(ctx, 'ev2@example.com', 'register');
        const code2 = codeIn((await env.smtp.waitFor((m) => m.to.includes('ev2@example.com'))).text);
        await em.nativeUpdate(
          VerificationCode,
          { email: 'ev2@example.com' },
          { expiresAt: new Date(Date.now() - 1000) },
        );
        expect(
          (
            await rejection(
              registerUser(ctx, {
                username: 'ev2',
                password: 'password-1',
                email: 'ev2@example.com',
                verification_code: code2,
              }),
            )
          ).message,
        ).toBe('The verification code is wrong or has expired');
        // Too many wrong guesses void the code even for the right one.
        await issueEmailCode(ctx, 'ev3@example.com', 'bind');
        const code3 = codeIn((await env.smtp.waitFor((m) => m.to.includes('ev3@example.com'))).text);
        const bad3 = code3 === '000000' ? '111111' : '000000';
        for (let i = 0; i < 4; i++)
          await rejection(consumeEmailCode(em, 'ev3@example.com', 'bind', bad3, en));
        expect((await rejection(consumeEmailCode(em, 'ev3@example.com', 'bind', bad3, en))).message).toBe(
          'Too many wrong verification codes, request a new code',
        );
        expect((await rejection(consumeEmailCode(em, 'ev3@example.com', 'bind', code3, en))).message).toBe(
          'Too many wrong verification codes, request a new code',
        );
        // A bind accepts a code fetched for registration (new-api shares one), not the other way round.
        await issueEmailCode(ctx, 'ev4@example.com', 'register');
        const code4 = codeIn((await env.smtp.waitFor((m) => m.to.includes('ev4@example.com'))).text);
        await consumeEmailCode(em, 'ev4@example.com', 'bind', code4, en);
        await issueEmailCode(ctx, 'ev5@example.com', 'bind');
        const code5 = codeIn((await env.smtp.waitFor((m) => m.to.includes('ev5@example.com'))).text);
        expect(
          (await rejection(consumeEmailCode(em, 'ev5@example.com', 'register', code5, en))).message,
        ).toBe('The verification code is wrong or has expired');
        // At most 5 mails per address in 10 minutes.
        for (let i = 0; i < 5; i++) await issueEmailCode(ctx, 'ev6@example.com', 'register');
        const bomb = await rejection(issueEmailCode(ctx, 'ev6@example.com', 'register'));
        expect(bomb).toBeInstanceOf(TooManyRequestsError);
        // A taken address gets no code.
        expect((await rejection(issueEmailCode(ctx, 'ev1@example.com', 'register'))).message).toBe(
          'This e-mail address is already taken',
        );
      } finally {
        await env.setOption('EmailVerificationEnabled', 'false');
      }
    });

    it('checkEmailAllowed applies the domain whitelist and the alias restriction', async () => {
      const o = env.services.options;
      expect(() => checkEmailAllowed(o, '', en)).toThrow('E-mail cannot be empty');
      expect(() => checkEmailAllowed(o, 'not-an-address', en)).toThrow('The e-mail address is not valid');
      expect(() => checkEmailAllowed(o, 'a+b@x.org', en)).not.toThrow();
      await env.setOption('EmailDomainRestrictionEnabled', 'true');
      await env.setOption('EmailAliasRestrictionEnabled', 'true');
      try {
        expect(() => checkEmailAllowed(o, 'a@x.org', en)).toThrow(/domain whitelist/);
        expect(() => checkEmailAllowed(o, 'a.b@QQ.com', en)).not.toThrow();
        expect(() => checkEmailAllowed(o, 'a+b@qq.com', en)).toThrow(/alias restriction/);
        expect(() => checkEmailAllowed(o, 'a.b@gmail.com', en)).toThrow(/alias restriction/);
        expect(() => checkEmailAllowed(o, 'ab@gmail.com', en)).not.toThrow();
      } finally {
        await env.setOption('EmailDomainRestrictionEnabled', 'false');
        await env.setOption('EmailAliasRestrictionEnabled', 'false');
      }
    });
  });

  describe('password reset', () => {
    it('mails a single-use link, sets a 12-character password and ends every session', async () => {
      const user = await env.createUser({
        username: 'reset1',
        password: 'old-password',
        email: 'reset1@example.com',
      });
      const cookie = cookieOf(await createSession(env.services, user, req(url)));
      const ctx = { em: env.db.orm.em.fork(), options: env.services.options, t: en };
      await requestPasswordReset(ctx, 'nobody@example.com');
      await requestPasswordReset(ctx, 'Reset1@example.com');
      const mail = await env.smtp.waitFor((m) => m.to.includes('reset1@example.com'));
      expect(env.smtp.messages.some((m) => m.to.includes('nobody@example.com'))).toBe(false);
      expect(mail.subject).toBe('Switchyard password reset');
      const link = /https:\/\/console\.example\.com\/user\/reset\?email=[^\s"<]+&token=[A-Za-z0-9_-]+/.exec(
        mail.text,
      )?.[0];
      expect(link).toBeTruthy();
      const params = new URL(link ?? '').searchParams;
      expect(params.get('email')).toBe('reset1@example.com');
      const token = params.get('token') ?? '';
      const bad = await rejection(resetPassword(ctx, { email: 'reset1@example.com', token: 'nope' }));
      expect(bad.message).toBe('The reset link is invalid or has expired');
      const password = await resetPassword(ctx, { email: 'reset1@example.com', token });
      expect(password).toMatch(/^[A-Za-z0-9]{12}$/);
      expect(await getSessionUser(req(url, { headers: { Cookie: cookie } }), env.services)).toBeNull();
      expect(
        (await loginWithPassword(env.services, { username: 'reset1', password }, req(url))).user.id,
      ).toBe(user.id);
      expect((await rejection(resetPassword(ctx, { email: 'reset1@example.com', token }))).message).toBe(
        'The reset link is invalid or has expired',
      );
      // Expired link.
      await requestPasswordReset(ctx, 'reset1@example.com');
      const second = await env.smtp.waitFor(
        (m) => m.to.includes('reset1@example.com') && !m.text.includes(token),
      );
      const token2 =
        new URL(/https:\/\/\S+token=[A-Za-z0-9_-]+/.exec(second.text)?.[0] ?? '').searchParams.get('token') ??
        '';
      await ctx.em.nativeUpdate(
        VerificationCode,
        { email: 'reset1@example.com', purpose: 'reset', consumedAt: null },
        { expiresAt: new Date(Date.now() - 1) },
      );
      expect(
        (await rejection(resetPassword(ctx, { email: 'reset1@example.com', token: token2 }))).message,
      ).toBe('The reset link is invalid or has expired');
    });
  });

  describe('rate limit and Turnstile', () => {
    it('allows 20 requests per IP and bucket, refuses the 21st with 429', async () => {
      const ip = freshIp();
      for (let i = 0; i < 20; i++) await enforceCriticalLimit(req(url, { ip }), env.services, 'login');
      const e = await rejection(enforceCriticalLimit(req(url, { ip, headers: EN }), env.services, 'login'));
      expect(e).toBeInstanceOf(TooManyRequestsError);
      expect((e as TooManyRequestsError).status).toBe(429);
      expect(e.message).toBe('Too many requests, try again later');
      expect((e as TooManyRequestsError).retryAfter).toBeGreaterThan(1000);
      await enforceCriticalLimit(req(url, { ip }), env.services, 'register');
      await enforceCriticalLimit(req(url), env.services, 'login');
    });

    it('the in-memory limiter behaves the same; clientIp honours TRUST_PROXY only when set, from the right', async () => {
      const limiter = createMemoryRateLimiter();
      for (let i = 0; i < 3; i++) expect((await limiter.hit('k', 3, 60_000)).allowed).toBe(true);
      expect((await limiter.hit('k', 3, 60_000)).allowed).toBe(false);
      await new Promise((r) => setTimeout(r, 5));
      expect((await limiter.hit('k', 3, 2)).allowed).toBe(true);
      const r = req(url, { ip: '9.9.9.9', headers: { 'X-Forwarded-For': '1.1.1.1, 2.2.2.2' } });
      expect(clientIp(r)).toBe('9.9.9.9');
      // One trusted hop: the right-most X-Forwarded-For entry; the left-most is what the client wrote (ADR 015).
      expect(clientIp(r, { auth: { ...env.services.auth!, trustProxy: true } })).toBe('2.2.2.2');
      expect(clientIp(r, { auth: { ...env.services.auth!, trustProxy: ['9.9.9.9'] } })).toBe('2.2.2.2');
      expect(clientIp(r, { auth: { ...env.services.auth!, trustProxy: ['10.0.0.0/8'] } })).toBe('9.9.9.9');
    });

    it('verifies Turnstile tokens against the siteverify endpoint when enabled', async () => {
      await verifyTurnstile(env.services, null, '1.2.3.4', en);
      await env.setOption('TurnstileCheckEnabled', 'true');
      try {
        expect((await rejection(verifyTurnstile(env.services, null, '1.2.3.4', en))).message).toBe(
          'Turnstile token is empty',
        );
        expect((await rejection(verifyTurnstile(env.services, 'fail-token', '1.2.3.4', en))).message).toBe(
          'Turnstile verification failed, please refresh and retry!',
        );
        await verifyTurnstile(env.services, 'pass-token', '1.2.3.4', en);
        expect(env.turnstile.requests.at(-1)).toEqual({
          secret: 'turnstile-secret',
          response: 'pass-token',
          remoteip: '1.2.3.4',
        });
      } finally {
        await env.setOption('TurnstileCheckEnabled', 'false');
      }
    });
  });
});
