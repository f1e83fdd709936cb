import { Ability } from '@switchyard/db/entities/ability.ts';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { hashPassword, verifyPassword } from '@switchyard/db/security/password.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessTokenHash } from '#app/domain/auth/session.server.ts';
import { InputError, UnauthorizedError } from '#app/domain/errors.ts';
import {
  deleteSelf,
  getAffCode,
  getSelf,
  issueAccessToken,
  listUserModels,
  transferAffQuota,
  updateSelf,
} from './account.server.ts';
import { updateNotificationSettings } from './notification.server.ts';
import { parseUserSetting } from './setting.ts';
import { fakeOptions, makeCtx, makeSession, makeUser } from './test-helpers.server.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'account' });
});
afterAll(async () => {
  await db?.drop();
});

const reload = (id: number) => db.orm.em.fork().findOneOrFail(User, { id });

describe('getSelf', () => {
  it('returns the wire fields, the setting as a JSON string and never the hash or tokens', async () => {
    const user = await makeUser(db.orm, {
      quota: 1000,
      usedQuota: 20,
      requestCount: 3,
      affCount: 2,
      affQuota: 50,
      affHistoryQuota: 70,
      passwordHash: 'secret-hash',
      accessToken: 'secret-token',
      setting: JSON.stringify({
        notify_type: 'webhook',
        webhook_url: 'https://x.test/h',
        webhook_secret: 's3',
      }),
    });
    const self = await getSelf(await makeCtx(db.orm, user));
    expect(self).toMatchObject({
      id: user.id,
      username: user.username,
      quota: 1000,
      used_quota: 20,
      request_count: 3,
      aff_code: user.affCode,
      aff_count: 2,
      aff_quota: 50,
      aff_history_quota: 70,
      group: 'default',
      role: Role.User,
    });
    // a JSON string, as new-api stores and returns it (ADR 025), the webhook secret withheld
    expect(typeof self.setting).toBe('string');
    expect(JSON.parse(self.setting)).toMatchObject({
      notify_type: 'webhook',
      webhook_url: 'https://x.test/h',
      webhook_secret_set: true,
    });
    const json = JSON.stringify(self);
    expect(json).not.toContain('secret-hash');
    expect(json).not.toContain('secret-token');
    expect(json).not.toContain('s3"');
  });

  it('refuses without a signed-in user', async () => {
    await expect(getSelf(await makeCtx(db.orm, null))).rejects.toBeInstanceOf(UnauthorizedError);
  });
});

describe('updateSelf', () => {
  it('edits only the signed-in user even when another id is sent', async () => {
    const me = await makeUser(db.orm);
    const other = await makeUser(db.orm, { displayName: 'other' });
    await updateSelf(await makeCtx(db.orm, me), { id: other.id, display_name: 'Me Now' });
    expect((await reload(me.id)).displayName).toBe('Me Now');
    expect((await reload(other.id)).displayName).toBe('other');
  });

  it('refuses a taken username', async () => {
    const me = await makeUser(db.orm);
    const other = await makeUser(db.orm);
    await expect(updateSelf(await makeCtx(db.orm, me), { username: other.username })).rejects.toThrow(
      'username already exists',
    );
  });

  it('checks both password entries and the minimum length', async () => {
    const me = await makeUser(db.orm);
    const ctx = await makeCtx(db.orm, me);
    await expect(updateSelf(ctx, { password: 'abcdefgh', password2: 'abcdefgX' })).rejects.toThrow(
      'passwords do not match',
    );
    await expect(updateSelf(ctx, { password: 'short', password2: 'short' })).rejects.toThrow(
      'password length must not be less than 8',
    );
  });

  it('changes the password and revokes the other sessions only', async () => {
    const me = await makeUser(db.orm);
    const current = await makeSession(db.orm, me);
    const other = await makeSession(db.orm, me);
    await updateSelf(
      await makeCtx(db.orm, me),
      { password: 'new-password-1', password2: 'new-password-1' },
      { currentSessionId: current.id },
    );
    expect(await verifyPassword('new-password-1', (await reload(me.id)).passwordHash)).toBe(true);
    const em = db.orm.em.fork();
    expect(await em.count(Session, { id: current.id })).toBe(1);
    expect(await em.count(Session, { id: other.id })).toBe(0);
    expect(await em.count(AuditEntry, { action: 'user.update_self', targetId: String(me.id) })).toBe(1);
  });
});

describe('the current password guards password change and deletion (ADR 016)', () => {
  it('a password change needs the current password when the account has one', async () => {
    const me = await makeUser(db.orm, { passwordHash: await hashPassword('old-password-1') });
    const ctx = () => makeCtx(db.orm, me);
    const change = { password: 'new-password-1', password2: 'new-password-1' };
    await expect(updateSelf(await ctx(), change)).rejects.toThrow('enter your current password');
    await expect(updateSelf(await ctx(), { ...change, original_password: 'guess-1234' })).rejects.toThrow(
      'the current password is wrong',
    );
    const refused = await reload(me.id);
    expect(await verifyPassword('old-password-1', refused.passwordHash)).toBe(true);
    await updateSelf(await ctx(), { ...change, original_password: 'old-password-1' });
    expect(await verifyPassword('new-password-1', (await reload(me.id)).passwordHash)).toBe(true);
    // other fields still change without it
    await updateSelf(await ctx(), { display_name: 'Renamed' });
    expect((await reload(me.id)).displayName).toBe('Renamed');
  });

  it('a refused change changes nothing else in the same request', async () => {
    const me = await makeUser(db.orm, { passwordHash: await hashPassword('old-password-1') });
    await expect(
      updateSelf(await makeCtx(db.orm, me), {
        display_name: 'Hijacked',
        password: 'new-password-1',
        password2: 'new-password-1',
      }),
    ).rejects.toBeInstanceOf(InputError);
    expect((await reload(me.id)).displayName).not.toBe('Hijacked');
  });

  it('an account without a password (OAuth only) sets one without it', async () => {
    const me = await makeUser(db.orm, { githubId: `gh${Date.now()}` });
    await updateSelf(await makeCtx(db.orm, me), { password: 'first-password', password2: 'first-password' });
    expect(await verifyPassword('first-password', (await reload(me.id)).passwordHash)).toBe(true);
  });

  it('deleting the account needs the current password when the account has one', async () => {
    const me = await makeUser(db.orm, { passwordHash: await hashPassword('old-password-1') });
    const ctx = () => makeCtx(db.orm, me);
    await expect(deleteSelf(await ctx(), { confirm: me.username })).rejects.toThrow(
      'enter your current password',
    );
    await expect(deleteSelf(await ctx(), { confirm: me.username, password: 'nope-nope' })).rejects.toThrow(
      'the current password is wrong',
    );
    expect((await reload(me.id)).deletedAt).toBeNull();
    await deleteSelf(await ctx(), { confirm: me.username, password: 'old-password-1' });
    expect((await reload(me.id)).deletedAt).toBeInstanceOf(Date);
  });
});

describe('deleteSelf', () => {
  it('needs the username typed exactly', async () => {
    const me = await makeUser(db.orm);
    await expect(deleteSelf(await makeCtx(db.orm, me), { confirm: 'nope' })).rejects.toThrow(
      'please enter your account name to confirm deletion',
    );
    expect((await reload(me.id)).deletedAt).toBeNull();
  });

  it('root cannot delete itself', async () => {
    const root = await makeUser(db.orm, { role: Role.Root });
    await expect(deleteSelf(await makeCtx(db.orm, root), { confirm: root.username })).rejects.toBeInstanceOf(
      InputError,
    );
    expect((await reload(root.id)).deletedAt).toBeNull();
  });

  it('marks the user deregistered and revokes every session', async () => {
    const me = await makeUser(db.orm, { accessToken: `tok-${Date.now()}` });
    await makeSession(db.orm, me);
    await makeSession(db.orm, me);
    await deleteSelf(await makeCtx(db.orm, me), { confirm: me.username });
    const row = await reload(me.id);
    expect(row.deletedAt).toBeInstanceOf(Date);
    expect(row.accessToken).toBeNull();
    expect(await db.orm.em.fork().count(Session, { user: me.id })).toBe(0);
    await expect(getSelf(await makeCtx(db.orm, me))).rejects.toBeInstanceOf(UnauthorizedError);
  });
});

describe('issueAccessToken', () => {
  it('rotates the token each time', async () => {
    const me = await makeUser(db.orm);
    const ctx = await makeCtx(db.orm, me);
    const first = await issueAccessToken(ctx);
    const second = await issueAccessToken(await makeCtx(db.orm, me));
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second).not.toBe(first);
    const em = db.orm.em.fork();
    // Only the hash is stored (ADR 019): neither token is in the table, the second one's hash is.
    expect(await em.count(User, { accessToken: { $in: [first, second] } })).toBe(0);
    expect(await em.count(User, { accessToken: await accessTokenHash(first) })).toBe(0);
    expect(await em.count(User, { accessToken: await accessTokenHash(second), id: me.id })).toBe(1);
  });
});

describe('getAffCode', () => {
  it('returns the existing code or creates one', async () => {
    const withCode = await makeUser(db.orm);
    expect(await getAffCode(await makeCtx(db.orm, withCode))).toBe(withCode.affCode);
    const without = await makeUser(db.orm, { affCode: '' });
    const code = await getAffCode(await makeCtx(db.orm, without));
    expect(code).toMatch(/^[A-Za-z0-9]{8}$/);
    expect((await reload(without.id)).affCode).toBe(code);
    expect(await getAffCode(await makeCtx(db.orm, without))).toBe(code);
  });
});

describe('transferAffQuota', () => {
  const options = fakeOptions({ QuotaPerUnit: 500000, DisplayInCurrencyEnabled: true });

  it('refuses less than one QuotaPerUnit with the formatted minimum', async () => {
    const me = await makeUser(db.orm, { affQuota: 2_000_000 });
    await expect(transferAffQuota(await makeCtx(db.orm, me, options), { quota: 499_999 })).rejects.toThrow(
      'transfer amount minimum is $1.00',
    );
    const abbreviated = fakeOptions({ QuotaPerUnit: 500000, DisplayInCurrencyEnabled: false });
    await expect(transferAffQuota(await makeCtx(db.orm, me, abbreviated), { quota: 10 })).rejects.toThrow(
      'transfer amount minimum is 500k',
    );
  });

  it('refuses more than the pending earnings', async () => {
    const me = await makeUser(db.orm, { affQuota: 600_000 });
    await expect(transferAffQuota(await makeCtx(db.orm, me, options), { quota: 700_000 })).rejects.toThrow(
      'not enough invitation earnings',
    );
  });

  it('moves aff_quota into quota with an audit entry and a log row', async () => {
    const me = await makeUser(db.orm, { affQuota: 1_500_000, quota: 10 });
    const result = await transferAffQuota(await makeCtx(db.orm, me, options), { quota: 1_000_000 });
    expect(result).toEqual({ quota: 1_000_010, aff_quota: 500_000 });
    const em = db.orm.em.fork();
    expect(await em.count(AuditEntry, { action: 'user.aff_transfer', targetId: String(me.id) })).toBe(1);
    const log = await em.findOneOrFail(Log, { userId: me.id });
    expect(log).toMatchObject({ type: LogType.TopUp, quota: 1_000_000 });
  });

  it('never overdraws under concurrent transfers', async () => {
    const me = await makeUser(db.orm, { affQuota: 1_500_000, quota: 0 });
    const attempts = await Promise.allSettled(
      Array.from({ length: 6 }, async () =>
        transferAffQuota(await makeCtx(db.orm, me, options), { quota: 500_000 }),
      ),
    );
    const succeeded = attempts.filter((a) => a.status === 'fulfilled').length;
    expect(succeeded).toBe(3);
    const row = await reload(me.id);
    expect(row.affQuota).toBe(0);
    expect(row.quota).toBe(1_500_000);
  });
});

describe('updateNotificationSettings', () => {
  it('validates webhook urls (https only) and e-mails', async () => {
    const me = await makeUser(db.orm);
    const ctx = await makeCtx(db.orm, me);
    const base = { notify_type: 'webhook', quota_warning_threshold: 100000 };
    await expect(updateNotificationSettings(ctx, base)).rejects.toThrow('please enter a webhook url');
    await expect(
      updateNotificationSettings(ctx, { ...base, webhook_url: 'http://x.test/h' }),
    ).rejects.toThrow('webhook url must start with https://');
    await expect(
      updateNotificationSettings(ctx, {
        notify_type: 'email',
        quota_warning_threshold: 1,
        notification_email: 'x',
      }),
    ).rejects.toThrow('please enter a valid email address');
    await expect(
      updateNotificationSettings(ctx, { notify_type: 'sms', quota_warning_threshold: 1 }),
    ).rejects.toBeInstanceOf(InputError);
    await expect(
      updateNotificationSettings(ctx, { notify_type: 'email', quota_warning_threshold: 0 }),
    ).rejects.toThrow('the warning threshold must be a positive integer');
  });

  it('stores the setting JSON, keeps other keys and keeps the secret when left empty', async () => {
    const me = await makeUser(db.orm, { setting: JSON.stringify({ accept_unset_model_ratio_model: true }) });
    const saved = await updateNotificationSettings(await makeCtx(db.orm, me), {
      notify_type: 'webhook',
      quota_warning_threshold: '500000',
      webhook_url: 'https://hooks.example.com/x',
      webhook_secret: 'shh',
      notification_email: '',
    });
    expect(saved).toMatchObject({ notify_type: 'webhook', webhook_secret_set: true });
    expect(saved).not.toHaveProperty('webhook_secret');
    await updateNotificationSettings(await makeCtx(db.orm, me), {
      notify_type: 'email',
      quota_warning_threshold: 1000000,
      notification_email: 'me@example.com',
    });
    const stored = JSON.parse((await reload(me.id)).setting);
    expect(stored).toMatchObject({
      accept_unset_model_ratio_model: true,
      notify_type: 'email',
      quota_warning_threshold: 1000000,
      webhook_secret: 'shh',
      notification_email: 'me@example.com',
    });
  });

  it('threshold defaults: 100000 without a setting, 500000 for a stored setting without one', () => {
    expect(parseUserSetting('').quota_warning_threshold).toBe(100000);
    expect(parseUserSetting('{"notify_type":"email"}').quota_warning_threshold).toBe(500000);
    expect(parseUserSetting('not json').quota_warning_threshold).toBe(100000);
  });
});

describe('listUserModels', () => {
  it('returns [] without abilities, then the enabled models of the group', async () => {
    const me = await makeUser(db.orm, { group: 'vip' });
    expect(await listUserModels(await makeCtx(db.orm, me))).toEqual([]);
    const em = db.orm.em.fork();
    em.create(Ability, { group: 'vip', model: 'gpt-4o', channelId: 1, enabled: true } as never);
    em.create(Ability, { group: 'vip', model: 'gpt-4o', channelId: 2, enabled: true } as never);
    em.create(Ability, { group: 'vip', model: 'claude', channelId: 1, enabled: false } as never);
    em.create(Ability, { group: 'default', model: 'other', channelId: 1, enabled: true } as never);
    await em.flush();
    expect(await listUserModels(await makeCtx(db.orm, me))).toEqual(['gpt-4o']);
  });
});
