import { Session } from '@switchyard/db/entities/session.ts';
import { User } from '@switchyard/db/entities/user.ts';
import { hashPassword, verifyPassword } from '@switchyard/db/security/password.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeOptions, makeSession, makeUser } from '#app/domain/account/test-helpers.server.ts';
import { loader as affLoader } from './api.user.aff.ts';
import { action as transferAction } from './api.user.aff_transfer.ts';
import { loader as modelsLoader } from './api.user.models.ts';
import { action as selfAction, loader as selfLoader } from './api.user.self.ts';
import { action as settingAction } from './api.user.setting.ts';
import { loader as tokenLoader } from './api.user.token.ts';

let db: TestDatabase;
let services: Record<string, unknown>;
beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'selfapi' });
  services = { orm: db.orm, options: fakeOptions(), relay: null, version: 't', startedAt: 0 };
});
afterAll(async () => {
  await db?.drop();
});

type Args = { request: Request; params: Record<string, string>; context: never };
type Handler = (args: Args) => Promise<Response> | Response;

async function call(
  handler: Handler,
  path: string,
  init: { method?: string; body?: unknown; token?: string; userId?: number | string; auth?: string } = {},
) {
  const headers = new Headers({ 'Accept-Language': 'en' });
  if (init.token) headers.set('Cookie', `sy_session=${init.token}`);
  if (init.userId !== undefined) headers.set('New-Api-User', String(init.userId));
  if (init.auth) headers.set('Authorization', init.auth);
  if (init.body !== undefined) headers.set('Content-Type', 'application/json');
  const request = new Request(`http://localhost${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const res = await handler({ request, params: {}, context: { services } as never });
  return {
    res,
    body: (await res.json()) as {
      success: boolean;
      message: string; // biome-ignore lint/suspicious/noExplicitAny: envelope data differs per route
      data: any;
    },
  };
}

async function signedIn(over: Partial<User> = {}) {
  const user = await makeUser(db.orm, over);
  const { token, id } = await makeSession(db.orm, user);
  return { user, token, sessionId: id, as: { token, userId: user.id } };
}

describe('auth on /api/user/*', () => {
  it('answers 401 without New-Api-User, with a mismatched one, or with nothing', async () => {
    const { user, token } = await signedIn();
    for (const h of [selfLoader, tokenLoader, affLoader, modelsLoader] as Handler[]) {
      expect((await call(h, '/api/user/x', { token })).res.status).toBe(401);
      expect((await call(h, '/api/user/x', { token, userId: user.id + 1000 })).res.status).toBe(401);
      const none = await call(h, '/api/user/x');
      expect(none.res.status).toBe(401);
      expect(none.body.success).toBe(false);
    }
  });
});

describe('GET /api/user/self', () => {
  it('returns the envelope with the wire fields', async () => {
    const { user, as } = await signedIn({ quota: 42, passwordHash: 'never-shown' });
    const { res, body } = await call(selfLoader, '/api/user/self', as);
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toContain('application/json');
    expect(body).toMatchObject({
      success: true,
      message: '',
      data: { id: user.id, quota: 42, aff_code: user.affCode },
    });
    expect(JSON.stringify(body)).not.toContain('never-shown');
  });

  it('accepts the system access token', async () => {
    const { user, as } = await signedIn();
    const issued = await call(tokenLoader, '/api/user/token', as);
    expect(issued.body.success).toBe(true);
    const token = issued.body.data as string;
    const viaToken = await call(selfLoader, '/api/user/self', { auth: `Bearer ${token}` });
    expect(viaToken.body.data.id).toBe(user.id);
    const again = await call(tokenLoader, '/api/user/token', as);
    expect(again.body.data).not.toBe(token);
    expect((await call(selfLoader, '/api/user/self', { auth: token })).res.status).toBe(401);
  });
});

describe('PUT /api/user/self', () => {
  it('validation failures are 200 + success false; the caller only is edited', async () => {
    const { user, as, sessionId } = await signedIn();
    const other = await makeSession(db.orm, user);
    const bad = await call(selfAction, '/api/user/self', {
      ...as,
      method: 'PUT',
      body: { password: 'abcdefgh1', password2: 'different1' },
    });
    expect(bad.res.status).toBe(200);
    expect(bad.body).toMatchObject({ success: false, message: 'passwords do not match' });
    const good = await call(selfAction, '/api/user/self', {
      ...as,
      method: 'PUT',
      body: { display_name: 'New Name', password: 'abcdefgh1', password2: 'abcdefgh1' },
    });
    expect(good.body).toMatchObject({ success: true, data: { display_name: 'New Name' } });
    const em = db.orm.em.fork();
    expect(await em.count(Session, { id: sessionId })).toBe(1);
    expect(await em.count(Session, { id: other.id })).toBe(0);
  });
});

describe('the current password on PUT / DELETE /api/user/self (new-api: original_password)', () => {
  const reload = (id: number) => db.orm.em.fork().findOneOrFail(User, { id });

  it('a new password needs the right original_password', async () => {
    const { user, as } = await signedIn({ passwordHash: await hashPassword('old-password-1') });
    const change = { password: 'new-password-1', password2: 'new-password-1' };
    const missing = await call(selfAction, '/api/user/self', { ...as, method: 'PUT', body: change });
    expect(missing.res.status).toBe(200);
    expect(missing.body).toMatchObject({ success: false, message: 'enter your current password' });
    const wrong = await call(selfAction, '/api/user/self', {
      ...as,
      method: 'PUT',
      body: { ...change, original_password: 'guess-1234' },
    });
    expect(wrong.body).toMatchObject({ success: false, message: 'the current password is wrong' });
    expect(await verifyPassword('old-password-1', (await reload(user.id)).passwordHash)).toBe(true);
    const right = await call(selfAction, '/api/user/self', {
      ...as,
      method: 'PUT',
      body: { ...change, original_password: 'old-password-1' },
    });
    expect(right.body.success).toBe(true);
    expect(await verifyPassword('new-password-1', (await reload(user.id)).passwordHash)).toBe(true);
  });

  it('deleting needs the current password', async () => {
    const { user, as } = await signedIn({ passwordHash: await hashPassword('old-password-1') });
    const missing = await call(selfAction, '/api/user/self', {
      ...as,
      method: 'DELETE',
      body: { confirm: user.username },
    });
    expect(missing.body).toMatchObject({ success: false, message: 'enter your current password' });
    const wrong = await call(selfAction, '/api/user/self', {
      ...as,
      method: 'DELETE',
      body: { confirm: user.username, password: 'guess-1234' },
    });
    expect(wrong.body).toMatchObject({ success: false, message: 'the current password is wrong' });
    expect((await reload(user.id)).deletedAt).toBeNull();
    const right = await call(selfAction, '/api/user/self', {
      ...as,
      method: 'DELETE',
      body: { confirm: user.username, password: 'old-password-1' },
    });
    expect(right.body.success).toBe(true);
    expect((await reload(user.id)).deletedAt).toBeInstanceOf(Date);
  });
});

describe('DELETE /api/user/self', () => {
  it('needs the confirmation, then deregisters and clears the cookie', async () => {
    const { user, as } = await signedIn();
    const bad = await call(selfAction, '/api/user/self', { ...as, method: 'DELETE', body: { confirm: 'x' } });
    expect(bad.body).toMatchObject({
      success: false,
      message: 'please enter your account name to confirm deletion',
    });
    const { res, body } = await call(selfAction, `/api/user/self?confirm=${user.username}`, {
      ...as,
      method: 'DELETE',
    });
    expect(body.success).toBe(true);
    expect(res.headers.get('Set-Cookie')).toContain('Max-Age=0');
    expect((await call(selfLoader, '/api/user/self', as)).res.status).toBe(401);
  });
});

describe('invitation and settings', () => {
  it('aff code, transfer and notification settings', async () => {
    const { user, as } = await signedIn({ affQuota: 1_000_000 });
    expect((await call(affLoader, '/api/user/aff', as)).body.data).toBe(user.affCode);
    const small = await call(transferAction, '/api/user/aff_transfer', {
      ...as,
      method: 'POST',
      body: { quota: 1 },
    });
    expect(small.body).toMatchObject({ success: false, message: 'transfer amount minimum is $1.00' });
    const moved = await call(transferAction, '/api/user/aff_transfer', {
      ...as,
      method: 'POST',
      body: { quota: 600_000 },
    });
    expect(moved.body).toMatchObject({ success: true, data: { quota: 600_000, aff_quota: 400_000 } });
    const setting = await call(settingAction, '/api/user/setting', {
      ...as,
      method: 'PUT',
      body: { notify_type: 'webhook', quota_warning_threshold: 500000, webhook_url: 'http://insecure.test' },
    });
    expect(setting.body).toMatchObject({ success: false, message: 'webhook url must start with https://' });
    const saved = await call(settingAction, '/api/user/setting', {
      ...as,
      method: 'PUT',
      body: { notify_type: 'email', quota_warning_threshold: 500000 },
    });
    expect(saved.body.success).toBe(true);
    // GET /api/user/self: `setting` is a JSON string, as new-api returns it (ADR 025); the PUT body above is new-api's
    const self = (await call(selfLoader, '/api/user/self', as)).body.data as { setting: unknown };
    expect(typeof self.setting).toBe('string');
    expect(JSON.parse(String(self.setting))).toMatchObject({
      notify_type: 'email',
      quota_warning_threshold: 500000,
    });
    expect((await call(modelsLoader, '/api/user/models', as)).body).toMatchObject({
      success: true,
      data: [],
    });
    expect(
      (await call(settingAction, '/api/user/setting', { ...as, method: 'POST', body: {} })).res.status,
    ).toBe(405);
  });
});
