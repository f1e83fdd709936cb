import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User, UserStatus } from '@switchyard/db/entities/user.ts';
import { verifyPassword } from '@switchyard/db/security/password.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ForbiddenError, InputError, NotFoundError, UnauthorizedError } from '#app/domain/errors.ts';
import { i18next } from '#app/i18n/i18n.server.ts';
import {
  createUser,
  getUser,
  listGroups,
  listUsers,
  manageUser,
  searchUsers,
  type UsersCtx,
  updateUser,
} from './users.server.ts';

let db: TestDatabase;
let t: UsersCtx['t'];
let seq = 0;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'users' });
  t = await i18next.getFixedT(new Request('http://x/', { headers: { 'Accept-Language': 'en' } }), 'common');
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  const conn = db.orm.em.getConnection();
  await conn.execute('truncate table sessions, audit_entries, logs, users restart identity cascade');
});

const options = {
  get: ((key: string) =>
    ({ QuotaForNewUser: 500, GroupRatio: { default: 1, vip: 1.5, svip: 2 } })[
      key
    ]) as UsersCtx['options']['get'],
};

async function makeUser(over: Partial<Record<string, unknown>> = {}): Promise<User> {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, {
    username: `u${seq}`,
    displayName: `User ${seq}`,
    affCode: `aff${seq}x${Date.now() % 100000}`,
    ...over,
  } as never);
  await em.flush();
  return user;
}

function ctxFor(actor: User | null, ip = '127.0.0.1'): UsersCtx {
  return {
    em: db.orm.em.fork(),
    actor: actor
      ? {
          id: actor.id,
          username: actor.username,
          displayName: actor.displayName,
          role: actor.role,
          group: actor.group,
        }
      : null,
    t,
    options,
    ip,
  };
}

async function addSession(user: User): Promise<string> {
  const em = db.orm.em.fork();
  const id = `${user.id}`.padStart(64, 'a');
  em.create(Session, { id, user: user.id, expiresAt: new Date(Date.now() + 3_600_000) } as never);
  await em.flush();
  return id;
}

const sessionCount = (userId: number) => db.orm.em.fork().count(Session, { user: userId });
const fresh = (id: number) => db.orm.em.fork().findOneOrFail(User, { id });

describe('guards', () => {
  it('refuses anonymous (401) and ordinary users (403)', async () => {
    const plain = await makeUser();
    await expect(listUsers(ctxFor(null), { page: 1, pageSize: 10 })).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    await expect(listUsers(ctxFor(plain), { page: 1, pageSize: 10 })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(manageUser(ctxFor(plain), { id: plain.id, action: 'disable' })).rejects.toBeInstanceOf(
      ForbiddenError,
    );
  });
});

describe('listUsers / searchUsers / getUser', () => {
  it('lists newest first with page and total, and never leaks secrets', async () => {
    const admin = await makeUser({ role: Role.Admin, passwordHash: 'secret-hash', accessToken: 'tok123' });
    for (let i = 0; i < 4; i++) await makeUser();
    const page = await listUsers(ctxFor(admin), { page: 1, pageSize: 2 });
    expect(page.total).toBe(5);
    expect(page.page).toBe(1);
    expect(page.items).toHaveLength(2);
    expect(page.items[0]!.id).toBeGreaterThan(page.items[1]!.id);
    const last = await listUsers(ctxFor(admin), { page: 3, pageSize: 2 });
    expect(last.items.map((u) => u.id)).toEqual([admin.id]);
    const json = JSON.stringify(last);
    expect(json).not.toContain('secret-hash');
    expect(json).not.toContain('tok123');
    expect(json).not.toMatch(/password|access_token/);
    expect(last.items[0]).toMatchObject({
      username: admin.username,
      display_name: admin.displayName,
      role: 10,
    });
    // p=0 is treated as 1; page size is clamped to 1..100
    expect((await listUsers(ctxFor(admin), { page: 0, pageSize: 1000 })).page_size).toBe(100);
  });

  it('searches id exactly, username/display name/email with ILIKE, and filters by group', async () => {
    const admin = await makeUser({ role: Role.Admin, username: 'boss' });
    const a = await makeUser({ username: 'Alice_1', email: 'alice@example.com', group: 'vip' });
    const b = await makeUser({ username: 'bob', displayName: 'Bobby ALICE', group: 'default' });
    const c = await makeUser({ username: 'carol', email: 'carol@ALICE.org', group: 'vip' });
    const ctx = ctxFor(admin);
    const ids = async (keyword: string, group = '') =>
      (await searchUsers(ctx, { keyword, group, page: 1, pageSize: 10 })).items.map((u) => u.id);
    expect(await ids('alice')).toEqual([c.id, b.id, a.id]);
    expect(await ids('alice', 'vip')).toEqual([c.id, a.id]);
    expect(await ids(String(b.id))).toContain(b.id);
    expect(await ids('%')).toEqual([]);
    expect(await ids('e_1')).toEqual([a.id]);
    expect(await ids('', 'vip')).toEqual([c.id, a.id]);
    expect((await getUser(ctx, a.id)).username).toBe('Alice_1');
    await expect(getUser(ctx, 999999)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('lists the group names from GroupRatio', async () => {
    const admin = await makeUser({ role: Role.Admin });
    expect(listGroups(ctxFor(admin))).toEqual(['default', 'vip', 'svip']);
  });
});

describe('createUser', () => {
  it('validates, hashes the password, grants QuotaForNewUser, audits, and keeps usernames unique', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const ctx = ctxFor(admin);
    await expect(createUser(ctx, { username: '', display_name: '', password: 'x' })).rejects.toThrow(
      'Username and password cannot be empty',
    );
    await expect(
      createUser(ctx, { username: 'newbie', display_name: '', password: 'short' }),
    ).rejects.toThrow('Password length must not be less than 8');
    const wire = await createUser(ctx, { username: 'newbie', display_name: '', password: 'longenough' });
    expect(wire).toMatchObject({
      username: 'newbie',
      display_name: 'newbie',
      role: 1,
      status: 1,
      quota: 500,
    });
    const row = await fresh(wire.id);
    expect(await verifyPassword('longenough', row.passwordHash)).toBe(true);
    const audits = await db.orm.em.fork().find(AuditEntry, { action: 'user.create' });
    expect(audits).toHaveLength(1);
    expect(audits[0]!.actorId).toBe(admin.id);
    await expect(
      createUser(ctxFor(admin), { username: 'newbie', display_name: 'x', password: 'longenough' }),
    ).rejects.toBeInstanceOf(InputError);
  });
});

describe('updateUser', () => {
  it('changes names and group; password only when non-empty, then revokes sessions', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const target = await makeUser({ passwordHash: 'old' });
    await addSession(target);
    await updateUser(ctxFor(admin), {
      id: target.id,
      username: 'renamed',
      display_name: 'Renamed',
      password: '',
      group: 'vip',
    });
    let row = await fresh(target.id);
    expect(row).toMatchObject({
      username: 'renamed',
      displayName: 'Renamed',
      group: 'vip',
      passwordHash: 'old',
    });
    expect(await sessionCount(target.id)).toBe(1);
    await expect(
      updateUser(ctxFor(admin), { id: target.id, username: 'renamed', display_name: '', password: 'short' }),
    ).rejects.toThrow('Password length must not be less than 8');
    await updateUser(ctxFor(admin), {
      id: target.id,
      username: 'renamed',
      display_name: 'Renamed',
      password: 'brand-new-pass',
    });
    row = await fresh(target.id);
    expect(await verifyPassword('brand-new-pass', row.passwordHash)).toBe(true);
    expect(await sessionCount(target.id)).toBe(0);
  });

  it('refuses to edit a user of the same or a higher role (admin vs admin, admin vs root)', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const other = await makeUser({ role: Role.Admin });
    const root = await makeUser({ role: Role.Root });
    for (const target of [other, root]) {
      await expect(
        updateUser(ctxFor(admin), { id: target.id, username: target.username, display_name: 'x' }),
      ).rejects.toThrow('No permission to operate on a user of the same or a higher role');
    }
  });

  it('writes the quota change, an audit entry and a management log in one transaction', async () => {
    const admin = await makeUser({ role: Role.Admin, username: 'quota-admin' });
    const target = await makeUser({ quota: 1000 });
    const base = { id: target.id, username: target.username, display_name: target.displayName };
    await updateUser(ctxFor(admin), { ...base, quota: 2500 });
    expect(Number((await fresh(target.id)).quota)).toBe(2500);
    // add-quota delta, negative allowed: old + added = new
    await updateUser(ctxFor(admin), { ...base, add_quota: -700 });
    expect(Number((await fresh(target.id)).quota)).toBe(1800);
    const logs = await db.orm.em.fork().find(Log, { userId: target.id }, { orderBy: { id: 'asc' } });
    expect(logs.map((l) => [l.type, Number(l.quota)])).toEqual([
      [LogType.Manage, 1500],
      [LogType.Manage, -700],
    ]);
    expect(logs[1]!.content).toContain('quota-admin');
    expect(logs[1]!.content).toContain('2500');
    expect(logs[1]!.content).toContain('1800');
    const audits = await db.orm.em
      .fork()
      .find(AuditEntry, { action: 'user.quota' }, { orderBy: { id: 'asc' } });
    expect(audits.map((a) => [a.before, a.after])).toEqual([
      ['{"quota":1000}', '{"quota":2500}'],
      ['{"quota":2500}', '{"quota":1800}'],
    ]);
    await expect(updateUser(ctxFor(admin), { ...base, quota: 1.5 })).rejects.toThrow(
      'Quota must be an integer',
    );
  });

  it('writes nothing when the transaction fails midway', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const target = await makeUser({ quota: 1000 });
    // An audit row that cannot be stored (ip longer than its column) fails the flush after the quota update,
    // the log row and the audit rows are queued: everything must roll back.
    await expect(
      updateUser(ctxFor(admin, 'x'.repeat(200)), {
        id: target.id,
        username: target.username,
        display_name: target.displayName,
        quota: 9999,
      }),
    ).rejects.toThrow();
    expect(Number((await fresh(target.id)).quota)).toBe(1000);
    expect(await db.orm.em.fork().count(Log, {})).toBe(0);
    expect(await db.orm.em.fork().count(AuditEntry, {})).toBe(0);
  });
});

describe('manageUser', () => {
  it('admin vs admin and admin vs root are refused; admin cannot promote', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const other = await makeUser({ role: Role.Admin });
    const root = await makeUser({ role: Role.Root });
    const plain = await makeUser();
    for (const action of ['disable', 'demote', 'delete'] as const) {
      await expect(manageUser(ctxFor(admin), { id: other.id, action })).rejects.toThrow(
        'No permission to operate on a user of the same or a higher role',
      );
      await expect(manageUser(ctxFor(admin), { id: root.id, action })).rejects.toBeInstanceOf(InputError);
    }
    await expect(manageUser(ctxFor(admin), { id: plain.id, action: 'promote' })).rejects.toThrow(
      'Admins cannot promote other users to admin',
    );
    await expect(manageUser(ctxFor(admin), { id: 999999, action: 'disable' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(await db.orm.em.fork().count(AuditEntry, {})).toBe(0);
  });

  it('root promotes to admin and demotes back; nobody promotes to root; root cannot act on root', async () => {
    const root = await makeUser({ role: Role.Root });
    const otherRoot = await makeUser({ role: Role.Root });
    const plain = await makeUser();
    expect(await manageUser(ctxFor(root), { id: plain.id, action: 'promote' })).toEqual({
      status: UserStatus.Enabled,
      role: Role.Admin,
    });
    await expect(manageUser(ctxFor(root), { id: plain.id, action: 'promote' })).rejects.toThrow(
      'This user is already an admin',
    );
    expect(await manageUser(ctxFor(root), { id: plain.id, action: 'demote' })).toEqual({
      status: UserStatus.Enabled,
      role: Role.User,
    });
    await expect(manageUser(ctxFor(root), { id: plain.id, action: 'demote' })).rejects.toThrow(
      'Cannot demote an ordinary user',
    );
    await expect(manageUser(ctxFor(root), { id: otherRoot.id, action: 'disable' })).rejects.toBeInstanceOf(
      InputError,
    );
    const actions = (await db.orm.em.fork().find(AuditEntry, {}, { orderBy: { id: 'asc' } })).map(
      (a) => a.action,
    );
    expect(actions).toEqual(['user.promote', 'user.demote']);
  });

  it('disable bans and revokes sessions; enable only from status 2 (3 refused)', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const plain = await makeUser();
    await addSession(plain);
    expect(await manageUser(ctxFor(admin), { id: plain.id, action: 'disable' })).toEqual({
      status: UserStatus.Banned,
      role: Role.User,
    });
    expect(await sessionCount(plain.id)).toBe(0);
    expect(await manageUser(ctxFor(admin), { id: plain.id, action: 'enable' })).toEqual({
      status: UserStatus.Enabled,
      role: Role.User,
    });
    const locked = await makeUser({ status: 3 });
    await expect(manageUser(ctxFor(admin), { id: locked.id, action: 'enable' })).rejects.toThrow(
      'This user cannot be enabled in its current status',
    );
    expect((await fresh(locked.id)).status).toBe(3);
  });

  it('delete deregisters: sessions revoked, logs kept, username stays reserved, no further actions', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const plain = await makeUser({ username: 'leaving' });
    await addSession(plain);
    const em = db.orm.em.fork();
    em.create(Log, { userId: plain.id, username: 'leaving', type: LogType.Consume, content: 'usage' });
    await em.flush();
    await manageUser(ctxFor(admin), { id: plain.id, action: 'delete' });
    const row = await fresh(plain.id);
    expect(row.deletedAt).toBeInstanceOf(Date);
    expect(await sessionCount(plain.id)).toBe(0);
    expect(await db.orm.em.fork().count(Log, { userId: plain.id })).toBe(1);
    await expect(manageUser(ctxFor(admin), { id: plain.id, action: 'enable' })).rejects.toThrow(
      'This user has been deregistered',
    );
    await expect(
      createUser(ctxFor(admin), { username: 'leaving', display_name: '', password: 'longenough' }),
    ).rejects.toThrow('Username already exists');
    const listed = await listUsers(ctxFor(admin), { page: 1, pageSize: 10 });
    expect(listed.items.find((u) => u.id === plain.id)?.DeletedAt).not.toBeNull();
  });
});
