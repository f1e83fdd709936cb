import { Role, User } from '@switchyard/db/entities/user.ts';
import { hashPassword, verifyPassword } from '@switchyard/db/security/password.ts';
import { PLAINTEXT_BOX } from '@switchyard/db/security/secrets.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeOptions, makeSession, makeUser } from '#app/domain/account/test-helpers.server.ts';
import { accessTokenHash } from '#app/domain/auth/session.server.ts';
import { action, loader } from './setting.tsx';

let db: TestDatabase;
let services: Record<string, unknown>;
beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'settingpage' });
  services = {
    orm: db.orm,
    options: fakeOptions(),
    relay: null,
    version: 't',
    startedAt: 0,
    secrets: PLAINTEXT_BOX,
  };
});
afterAll(async () => {
  await db?.drop();
});

type Page = {
  tab: string;
  forbidden: boolean;
  personal: { self: { id: number }; inviteLink: string } | null;
  intent?: string;
  error?: string;
  token?: string;
};
type Result = { data: Page; init?: ResponseInit | null };

function req(path: string, token?: string, form?: Record<string, string>) {
  const headers = new Headers({ 'Accept-Language': 'en' });
  if (token) headers.set('Cookie', `sy_session=${token}`);
  return new Request(`http://localhost${path}`, {
    method: form ? 'POST' : 'GET',
    headers,
    body: form ? new URLSearchParams(form) : undefined,
  });
}

const args = (request: Request) => ({ request, params: {}, context: { services } as never });

async function thrown(p: Promise<unknown>): Promise<Response> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Response) return e;
    throw e;
  }
  throw new Error('expected a thrown Response');
}

describe('/setting loader', () => {
  it('sends anonymous visitors to /login', async () => {
    const res = await thrown(loader(args(req('/setting'))));
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/login?redirectTo=%2Fsetting');
  });

  it('personal tab by default; other tabs are 403 for users and open for admins', async () => {
    const user = await makeUser(db.orm, { quota: 500000 });
    const { token } = await makeSession(db.orm, user);
    const page = (await loader(args(req('/setting', token)))) as unknown as Page;
    expect(page.tab).toBe('personal');
    expect(page.personal?.self.id).toBe(user.id);
    expect(page.personal?.inviteLink).toBe(`http://localhost/register?aff=${user.affCode}`);
    const other = (await loader(args(req('/setting?tab=system', token)))) as unknown as Result;
    expect(other.init?.status).toBe(403);
    expect(other.data.forbidden).toBe(true);
    const admin = await makeUser(db.orm, { role: Role.Admin });
    const adminSession = await makeSession(db.orm, admin);
    const ok = (await loader(args(req('/setting?tab=system', adminSession.token)))) as unknown as Result;
    expect(ok.init?.status).toBe(200);
    expect(ok.data.forbidden).toBe(false);
  });
});

describe('/setting action', () => {
  it('transfer: PRG with a flash toast, refusals re-render with the message', async () => {
    const user = await makeUser(db.orm, { affQuota: 1_000_000 });
    const { token } = await makeSession(db.orm, user);
    const res = (await action(
      args(req('/setting?tab=personal', token, { intent: 'transfer', quota: '500000' })),
    )) as Response;
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/setting?tab=personal');
    expect(res.headers.get('Set-Cookie')).toContain('sy_toast=');
    const bad = (await action(
      args(req('/setting', token, { intent: 'transfer', quota: '1' })),
    )) as unknown as Result;
    expect(bad.init?.status).toBe(400);
    expect(bad.data).toMatchObject({ intent: 'transfer', error: 'transfer amount minimum is $1.00' });
  });

  it('token is answered once, delete clears the session and goes to /login', async () => {
    const user = await makeUser(db.orm);
    const { token } = await makeSession(db.orm, user);
    const issued = (await action(args(req('/setting', token, { intent: 'token' })))) as unknown as Result;
    const row = await db.orm.em.fork().findOneOrFail(User, { id: user.id });
    expect(row.accessToken).toBe(await accessTokenHash(String(issued.data.token)));
    expect(row.accessToken).not.toBe(issued.data.token);
    const del = (await action(
      args(req('/setting', token, { intent: 'delete', confirm: user.username })),
    )) as Response;
    expect(del.status).toBe(302);
    expect(del.headers.get('Location')).toBe('/login');
    expect(del.headers.get('Set-Cookie')).toContain('sy_session=;');
    const after = await thrown(loader(args(req('/setting', token))));
    expect(after.headers.get('Location')).toContain('/login');
  });

  it('password and delete ask for the current password when the account has one', async () => {
    const user = await makeUser(db.orm, { passwordHash: await hashPassword('old-password-1') });
    const { token } = await makeSession(db.orm, user);
    const page = (await loader(args(req('/setting', token)))) as unknown as {
      personal: { hasPassword: boolean };
    };
    expect(page.personal.hasPassword).toBe(true);
    const change = { intent: 'password', password: 'new-password-1', password2: 'new-password-1' };
    const missing = (await action(args(req('/setting', token, change)))) as unknown as Result;
    expect(missing.init?.status).toBe(400);
    expect(missing.data).toMatchObject({ intent: 'password', error: 'enter your current password' });
    const wrong = (await action(
      args(req('/setting', token, { ...change, original_password: 'guess-1234' })),
    )) as unknown as Result;
    expect(wrong.data).toMatchObject({ intent: 'password', error: 'the current password is wrong' });
    const row = () => db.orm.em.fork().findOneOrFail(User, { id: user.id });
    expect(await verifyPassword('old-password-1', (await row()).passwordHash)).toBe(true);
    const ok = (await action(
      args(req('/setting', token, { ...change, original_password: 'old-password-1' })),
    )) as Response;
    expect(ok.status).toBe(302);
    expect(await verifyPassword('new-password-1', (await row()).passwordHash)).toBe(true);
    const del = (await action(
      args(req('/setting', token, { intent: 'delete', confirm: user.username, password: 'old-password-1' })),
    )) as unknown as Result;
    expect(del.data).toMatchObject({ intent: 'delete', error: 'the current password is wrong' });
    expect((await row()).deletedAt).toBeNull();
    const gone = (await action(
      args(req('/setting', token, { intent: 'delete', confirm: user.username, password: 'new-password-1' })),
    )) as Response;
    expect(gone.status).toBe(302);
    expect((await row()).deletedAt).toBeInstanceOf(Date);
  });

  it('remembers the models toggle in a cookie', async () => {
    const user = await makeUser(db.orm);
    const { token } = await makeSession(db.orm, user);
    const res = (await action(
      args(req('/setting', token, { intent: 'models', expanded: 'true' })),
    )) as Response;
    expect(res.headers.get('Set-Cookie')).toMatch(/^sy_models_expanded=/);
  });
});
