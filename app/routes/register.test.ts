import { User } from '@switchyard/db/entities/user.ts';
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
import { getToast } from '#app/utils/toast.server.ts';
import { action, loader } from './register.tsx';

const EN = { 'Accept-Language': 'en' };
const URL_ = 'http://localhost/register';

describe('/register route', () => {
  let env: AuthTestEnv;
  beforeAll(async () => {
    env = await createAuthTestEnv('register_page');
  });
  afterAll(async () => {
    await env?.close();
  });

  it('registers, then redirects to /login with the registration-success flash', async () => {
    const res = await callAction<FormReply>(
      action,
      formRequest(URL_, { username: 'bob', password: 'bob-password', password2: 'bob-password' }, EN),
      env.services,
    );
    expect(res.location).toBe('/login');
    const { toast } = await getToast(new Request(URL_, { headers: { Cookie: cookiesOf(res.headers) } }));
    expect(toast).toMatchObject({ type: 'success', message: 'Registration success!' });
    const bob = await env.db.orm.em.fork().findOneOrFail(User, { username: 'bob' });
    expect(bob.passwordHash).not.toBe('bob-password');
  });

  it('checks the password length and the confirmation with the seed messages, keeping the fields', async () => {
    const short = await callAction<FormReply>(
      action,
      formRequest(URL_, { username: 'carol', password: 'short', password2: 'short' }, EN),
      env.services,
    );
    expect(short.status).toBe(400);
    expect(short.data?.fieldErrors.password).toEqual(['Password length must not be less than 8!']);
    expect(short.data?.values.username).toBe('carol');
    const mismatch = await callAction<FormReply>(
      action,
      formRequest(URL_, { username: 'carol', password: 'carol-password', password2: 'other-password' }, EN),
      env.services,
    );
    expect(mismatch.data?.fieldErrors.password2).toEqual(['The two passwords do not match']);
    const empty = await callAction<FormReply>(action, formRequest(URL_, {}, EN), env.services);
    expect(empty.data?.message).toBe('Please enter username and password!');
  });

  it('answers a taken username with the domain message', async () => {
    const res = await callAction<FormReply>(
      action,
      formRequest(URL_, { username: 'bob', password: 'bob-password', password2: 'bob-password' }),
      env.services,
    );
    expect(res.location).toBeNull();
    expect(res.data?.status).toBe('error');
    expect(res.data?.message).toBeTruthy();
  });

  it('stores ?aff in a cookie and credits the inviter on registration', async () => {
    const inviter = await env.db.orm.em.fork().findOneOrFail(User, { username: 'bob' });
    const load = await callLoader<{ aff: string | null }>(
      loader,
      new Request(`${URL_}?aff=${inviter.affCode}`),
      env.services,
    );
    expect(load.data?.aff).toBe(inviter.affCode);
    const cookie = cookiesOf(load.headers);
    const res = await callAction<FormReply>(
      action,
      formRequest(
        URL_,
        { username: 'dave', password: 'dave-password', password2: 'dave-password' },
        { Cookie: cookie },
      ),
      env.services,
    );
    expect(res.location).toBe('/login');
    const em = env.db.orm.em.fork();
    const dave = await em.findOneOrFail(User, { username: 'dave' });
    expect(dave.inviterId).toBe(inviter.id);
    expect((await em.findOneOrFail(User, { username: 'bob' })).affCount).toBe(1);
  });

  it('with e-mail verification on: send-code mails a code that the registration consumes', async () => {
    await env.setOption('EmailVerificationEnabled', 'true');
    try {
      const missing = await callAction<FormReply>(
        action,
        formRequest(URL_, { intent: 'send-code', username: 'erin', email: '' }, EN),
        env.services,
      );
      expect(missing.data?.fieldErrors.email).toEqual(['Please enter your email address']);

      const sent = await callAction<FormReply>(
        action,
        formRequest(URL_, { intent: 'send-code', username: 'erin', email: 'erin@example.com' }, EN),
        env.services,
      );
      expect(sent.data).toMatchObject({
        status: 'success',
        message: 'Verification code sent, check your mailbox!',
        values: { username: 'erin', email: 'erin@example.com' },
      });
      const mail = await env.smtp.waitFor((m) => m.to.includes('erin@example.com'));
      const code = /\b(\d{6})\b/.exec(mail.text)?.[1];
      expect(code).toBeTruthy();

      const noCode = await callAction<FormReply>(
        action,
        formRequest(URL_, {
          username: 'erin',
          password: 'erin-password',
          password2: 'erin-password',
          email: 'erin@example.com',
        }),
        env.services,
      );
      expect(noCode.location).toBeNull();

      const ok = await callAction<FormReply>(
        action,
        formRequest(URL_, {
          username: 'erin',
          password: 'erin-password',
          password2: 'erin-password',
          email: 'erin@example.com',
          verification_code: code ?? '',
        }),
        env.services,
      );
      expect(ok.location).toBe('/login');
      const erin = await env.db.orm.em.fork().findOneOrFail(User, { username: 'erin' });
      expect(erin.email).toBe('erin@example.com');
    } finally {
      await env.setOption('EmailVerificationEnabled', 'false');
    }
  });

  it('is closed when RegisterEnabled is off', async () => {
    await env.setOption('RegisterEnabled', 'false');
    try {
      const load = await callLoader<{ registerEnabled: boolean }>(loader, new Request(URL_), env.services);
      expect(load.data?.registerEnabled).toBe(false);
      const res = await callAction<FormReply>(
        action,
        formRequest(URL_, { username: 'frank', password: 'frank-password', password2: 'frank-password' }, EN),
        env.services,
      );
      expect(res.status).toBe(403);
      expect(res.data?.message).toBe('New user registration is closed by the administrator');
    } finally {
      await env.setOption('RegisterEnabled', 'true');
    }
  });
});
