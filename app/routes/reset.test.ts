import { User } from '@switchyard/db/entities/user.ts';
import { hashPassword, verifyPassword } from '@switchyard/db/security/password.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FormReply } from '#app/components/auth/action.server.ts';
import {
  type AuthTestEnv,
  callAction,
  callLoader,
  createAuthTestEnv,
  formRequest,
} from '#app/components/auth/testing.server.ts';
import { findLink } from '#tests/fakes/smtp.ts';
import { action as resetAction } from './reset.tsx';
import { action as confirmAction, loader as confirmLoader } from './user_.reset.tsx';

const EN = { 'Accept-Language': 'en' };

describe('/reset and /user/reset routes', () => {
  let env: AuthTestEnv;
  beforeAll(async () => {
    env = await createAuthTestEnv('reset_pages');
    const em = env.db.orm.em.fork();
    em.create(User, {
      username: 'grace',
      displayName: 'Grace',
      passwordHash: await hashPassword('grace-old-password'),
      email: 'grace@example.com',
      affCode: 'GRCE',
    } as never);
    await em.flush();
  });
  afterAll(async () => {
    await env?.close();
  });

  it('requires an e-mail address', async () => {
    const res = await callAction<FormReply>(
      resetAction,
      formRequest('http://localhost/reset', {}, EN),
      env.services,
    );
    expect(res.data?.fieldErrors.email).toEqual(['Please enter your email address']);
  });

  it('mails a reset link; the confirm page shows a new password that works, once', async () => {
    const sent = await callAction<FormReply>(
      resetAction,
      formRequest('http://localhost/reset', { email: 'grace@example.com' }, EN),
      env.services,
    );
    expect(sent.data).toMatchObject({ status: 'success', message: 'Reset email sent, check your mailbox!' });
    const mail = await env.smtp.waitFor((m) => m.to.includes('grace@example.com'));
    const url = findLink(mail, '/user/reset?');
    if (!url) throw new Error('no reset link in the mail');

    const page = await callLoader<{ email: string; token: string; valid: boolean }>(
      confirmLoader,
      new Request(`http://localhost/user/reset${url.search}`),
      env.services,
    );
    expect(page.data).toMatchObject({ email: 'grace@example.com', valid: true });

    const done = await callAction<FormReply>(
      confirmAction,
      formRequest(
        'http://localhost/user/reset',
        { email: page.data?.email ?? '', token: page.data?.token ?? '' },
        EN,
      ),
      env.services,
    );
    expect(done.data).toMatchObject({ status: 'success' });
    const password = done.data?.payload?.password ?? '';
    expect(password).toHaveLength(12);
    const grace = await env.db.orm.em.fork().findOneOrFail(User, { username: 'grace' });
    expect(await verifyPassword(password, grace.passwordHash)).toBe(true);

    const again = await callAction<FormReply>(
      confirmAction,
      formRequest(
        'http://localhost/user/reset',
        { email: page.data?.email ?? '', token: page.data?.token ?? '' },
        EN,
      ),
      env.services,
    );
    expect(again.data?.status).toBe('error');
    expect(again.data?.payload).toBeUndefined();
  });

  it('answers an unknown address like a known one (no enumeration) and sends nothing', async () => {
    const before = env.smtp.messages.length;
    const res = await callAction<FormReply>(
      resetAction,
      formRequest('http://localhost/reset', { email: 'nobody@example.com' }, EN),
      env.services,
    );
    expect(res.data?.status).toBe('success');
    expect(env.smtp.messages.length).toBe(before);
  });

  it('flags a link without token as invalid', async () => {
    const page = await callLoader<{ valid: boolean }>(
      confirmLoader,
      new Request('http://localhost/user/reset?email=a@b.c'),
      env.services,
    );
    expect(page.data?.valid).toBe(false);
    const res = await callAction<FormReply>(
      confirmAction,
      formRequest('http://localhost/user/reset', { email: 'a@b.c' }, EN),
      env.services,
    );
    expect(res.data?.message).toBe('Invalid reset link, please request a password reset again');
  });
});
