import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ForbiddenError, InputError, NotFoundError, UnauthorizedError } from '#app/domain/errors.ts';
import { i18next } from '#app/i18n/i18n.server.ts';
import { frtTone, LOG_COUNT_CAP, parseOther, useTimeTone } from './constants.ts';
import {
  clearLogsBefore,
  countLogsBefore,
  getLogUserInfo,
  type LogQuery,
  type LogsCtx,
  listAllLogs,
  listSelfLogs,
  logQuerySchema,
  parseInput,
  statAllLogs,
  statSelfLogs,
} from './logs.server.ts';

let db: TestDatabase;
let t: LogsCtx['t'];
let seq = 0;
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'logs' });
  t = await i18next.getFixedT('en', 'common');
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em
    .getConnection()
    .execute('truncate table audit_entries, logs, users restart identity cascade');
});

async function makeUser(over: Record<string, unknown> = {}): Promise<User> {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, {
    username: `lg${seq}`,
    displayName: '',
    affCode: `lgaff${seq}`,
    ...over,
  } as never);
  await em.flush();
  return user;
}

function ctxFor(actor: User | null): LogsCtx {
  return {
    em: db.orm.em.fork(),
    actor: actor
      ? { id: actor.id, username: actor.username, displayName: '', role: actor.role, group: actor.group }
      : null,
    t,
    ip: '127.0.0.1',
  };
}

const OTHER = {
  model_ratio: 2.5,
  completion_ratio: 4,
  group_ratio: 1,
  model_price: -1,
  cache_tokens: 30,
  cache_ratio: 0.5,
  reasoning_tokens: 12,
  frt: 2500,
  is_model_mapped: true,
  upstream_model_name: 'gpt-4o-2024-11-20',
  admin_info: { use_channel: ['3', '7'] },
};

async function seedLog(user: User, over: Partial<Record<keyof Log, unknown>> = {}): Promise<Log> {
  const em = db.orm.em.fork();
  const log = em.create(Log, {
    userId: user.id,
    username: user.username,
    type: LogType.Consume,
    createdAt: now() - 10,
    tokenName: 'main',
    modelName: 'gpt-4o',
    quota: 1500,
    promptTokens: 100,
    completionTokens: 20,
    useTime: 3,
    isStream: true,
    channelId: 7,
    channelName: 'primary',
    group: 'default',
    other: JSON.stringify(OTHER),
    ...over,
  } as never);
  await em.flush();
  return log;
}

/** One of each type for `user` (1 top-up, 2 consume with other JSON, 3 manage, 4 system). */
async function seedFour(user: User, base = now() - 100) {
  await seedLog(user, { type: LogType.TopUp, createdAt: base, quota: 500000, content: 'top up', other: '' });
  await seedLog(user, { type: LogType.Consume, createdAt: base + 1 });
  await seedLog(user, {
    type: LogType.Manage,
    createdAt: base + 2,
    quota: 0,
    content: 'admin set quota',
    other: '',
  });
  await seedLog(user, {
    type: LogType.System,
    createdAt: base + 3,
    quota: 0,
    content: 'system note',
    other: '',
  });
}

const q = (over: Record<string, unknown> = {}): LogQuery =>
  parseInput({ t }, logQuerySchema, { p: '1', page_size: '10', ...over });

describe('listing', () => {
  it('a user sees only their own rows, newest first, without channel or retry path', async () => {
    const alice = await makeUser();
    const bob = await makeUser();
    await seedFour(alice);
    await seedFour(bob);
    const page = await listSelfLogs(ctxFor(alice), q());
    expect(page.items.map((i) => i.type)).toEqual([4, 3, 2, 1]);
    expect(page.items.every((i) => i.user_id === alice.id)).toBe(true);
    expect(page).toMatchObject({ page: 1, page_size: 10, total: 4, total_capped: false, has_more: false });
    const consume = page.items.find((i) => i.type === 2)!;
    expect(consume).toMatchObject({ channel: 0, channel_name: '', quota: 1500, prompt_tokens: 100 });
    const other = JSON.parse(consume.other);
    expect(other.admin_info).toBeUndefined();
    expect(other.upstream_model_name).toBe('gpt-4o-2024-11-20');
    // the username and channel filters of the admin call cannot widen the self call
    const widened = await listSelfLogs(ctxFor(alice), q({ username: bob.username, channel: '7' }));
    expect(widened.items.every((i) => i.user_id === alice.id)).toBe(true);
    expect(widened.total).toBe(4);
  });

  it('filters by type, token, model, group and the time window', async () => {
    const alice = await makeUser();
    const base = now() - 1000;
    await seedFour(alice, base);
    await seedLog(alice, { createdAt: base + 10, tokenName: 'other', modelName: 'claude-3', group: 'vip' });
    const ctx = ctxFor(alice);
    const types = async (over: Record<string, unknown>) =>
      (await listSelfLogs(ctx, q(over))).items.map((i) => `${i.type}:${i.token_name}:${i.model_name}`);
    expect(await types({ type: '2' })).toEqual(['2:other:claude-3', '2:main:gpt-4o']);
    expect(await types({ type: '1' })).toEqual(['1:main:gpt-4o']);
    expect(await types({ token_name: 'other' })).toEqual(['2:other:claude-3']);
    expect(await types({ model_name: 'claude-3' })).toEqual(['2:other:claude-3']);
    expect(await types({ group: 'vip' })).toEqual(['2:other:claude-3']);
    expect(await types({ start_timestamp: String(base + 2), end_timestamp: String(base + 3) })).toEqual([
      '4:main:gpt-4o',
      '3:main:gpt-4o',
    ]);
  });

  it('the admin sees every user and filters by username and channel', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser();
    const bob = await makeUser();
    await seedFour(alice);
    await seedLog(bob, { channelId: 9 });
    const ctx = ctxFor(admin);
    expect((await listAllLogs(ctx, q())).total).toBe(5);
    const byName = await listAllLogs(ctx, q({ username: bob.username }));
    expect(byName.items.map((i) => i.user_id)).toEqual([bob.id]);
    // the admin keeps the channel and the retry path
    expect(byName.items[0]).toMatchObject({ channel: 9, channel_name: 'primary' });
    expect(JSON.parse(byName.items[0]!.other).admin_info).toEqual({ use_channel: ['3', '7'] });
    const byChannel = await listAllLogs(ctx, q({ channel: '9' }));
    expect(byChannel.items.map((i) => i.user_id)).toEqual([bob.id]);
    // a name no user has now (renamed or removed) still matches the rows that carry it
    await seedLog(bob, { username: 'gone-name' });
    const gone = await listAllLogs(ctx, q({ username: 'gone-name' }));
    expect(gone.items.map((i) => [i.user_id, i.username])).toEqual([[bob.id, 'gone-name']]);
    // a current name matches only that user's rows with that name
    await seedLog(alice, { username: bob.username });
    expect((await listAllLogs(ctx, q({ username: bob.username }))).items.map((i) => i.user_id)).toEqual([
      bob.id,
    ]);
    expect((await statAllLogs(ctx, q({ username: 'gone-name' }))).quota).toBe(1500);
  });

  it('paginates with has_more and caps the count instead of counting every row', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser();
    await seedFour(alice);
    const ctx = ctxFor(alice);
    const p1 = await listSelfLogs(ctx, q({ page_size: '3' }));
    expect(p1).toMatchObject({ page: 1, total: 4, has_more: true });
    expect(p1.items).toHaveLength(3);
    const p2 = await listSelfLogs(ctx, q({ page_size: '3', p: '2' }));
    expect(p2).toMatchObject({ page: 2, total: 4, has_more: false });
    expect(p2.items.map((i) => i.type)).toEqual([1]);
    // p=0 means the first page
    expect((await listSelfLogs(ctx, q({ p: '0', page_size: '3' }))).page).toBe(1);

    await db.orm.em
      .getConnection()
      .execute(
        `insert into logs (user_id, username, type, created_at, quota) select ?, ?, 2, ?, 1 from generate_series(1, ${LOG_COUNT_CAP + 5})`,
        [alice.id, alice.username, now() - 50],
      );
    const big = await listAllLogs(ctxFor(admin), q({ page_size: '100', p: '2' }));
    expect(big).toMatchObject({ total: LOG_COUNT_CAP, total_capped: true, has_more: true });
    expect(big.items).toHaveLength(100);
  });

  it('refuses bad input, anonymous callers and non-admins on the admin calls', async () => {
    const alice = await makeUser();
    expect(() => q({ type: 'abc' })).toThrow(InputError);
    expect(() => q({ username: 'x'.repeat(65) })).toThrow(InputError);
    expect(() => listSelfLogs(ctxFor(null), q())).toThrow(UnauthorizedError);
    await expect(listAllLogs(ctxFor(alice), q())).rejects.toBeInstanceOf(ForbiddenError);
    await expect(statAllLogs(ctxFor(alice), q())).rejects.toBeInstanceOf(ForbiddenError);
    await expect(getLogUserInfo(ctxFor(alice), alice.id)).rejects.toBeInstanceOf(ForbiddenError);
    await expect(clearLogsBefore(ctxFor(alice), now())).rejects.toBeInstanceOf(ForbiddenError);
  });
});

describe('stats', () => {
  it('sums consume quota in the window and counts the last minute as rpm / tpm', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser();
    const bob = await makeUser();
    await seedFour(alice, now() - 3600); // consume 1500, an hour ago (outside rpm)
    await seedLog(alice, { createdAt: now() - 5, quota: 700, promptTokens: 40, completionTokens: 2 });
    await seedLog(alice, {
      createdAt: now() - 5,
      quota: 300,
      modelName: 'claude-3',
      promptTokens: 8,
      completionTokens: 0,
    });
    await seedLog(bob, { createdAt: now() - 5, quota: 9000 });
    expect(await statSelfLogs(ctxFor(alice), q())).toEqual({ quota: 2500, rpm: 2, tpm: 50 });
    expect(await statSelfLogs(ctxFor(alice), q({ model_name: 'claude-3' }))).toEqual({
      quota: 300,
      rpm: 1,
      tpm: 8,
    });
    expect(await statSelfLogs(ctxFor(alice), q({ start_timestamp: String(now() - 60) }))).toEqual({
      quota: 1000,
      rpm: 2,
      tpm: 50,
    });
    // the type filter does not turn top-ups into "used quota"
    expect((await statSelfLogs(ctxFor(alice), q({ type: '1' }))).quota).toBe(2500);
    expect(await statAllLogs(ctxFor(admin), q())).toEqual({ quota: 11500, rpm: 3, tpm: 50 + 120 });
    expect(await statAllLogs(ctxFor(admin), q({ username: bob.username }))).toEqual({
      quota: 9000,
      rpm: 1,
      tpm: 120,
    });
  });
});

describe('admin helpers', () => {
  it('user info for the dialog', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser({ quota: 123, usedQuota: 45, requestCount: 6, group: 'vip' });
    expect(await getLogUserInfo(ctxFor(admin), alice.id)).toEqual({
      id: alice.id,
      username: alice.username,
      quota: 123,
      used_quota: 45,
      request_count: 6,
      group: 'vip',
    });
    await expect(getLogUserInfo(ctxFor(admin), 999999)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('clears rows before a time in batches, counts them and writes an AuditEntry', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const alice = await makeUser();
    const cut = now() - 1000;
    await seedFour(alice, cut - 10); // before
    await seedFour(alice, cut + 10); // after
    await db.orm.em
      .getConnection()
      .execute(
        'insert into logs (user_id, username, type, created_at) select ?, ?, 2, ? from generate_series(1, 12000)',
        [alice.id, alice.username, cut - 500],
      );
    const ctx = ctxFor(admin);
    expect(await countLogsBefore(ctx, cut)).toEqual({ count: LOG_COUNT_CAP, capped: true });
    await expect(clearLogsBefore(ctx, 0)).rejects.toBeInstanceOf(InputError);
    expect(await clearLogsBefore(ctx, cut)).toBe(12004);
    const left = await db.orm.em.fork().find(Log, {}, { orderBy: { createdAt: 'asc' } });
    expect(left).toHaveLength(4);
    expect(left.every((l) => l.createdAt >= cut)).toBe(true);
    const audit = await db.orm.em.fork().find(AuditEntry, { action: 'log.clear' });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorId: admin.id, targetType: 'log', ip: '127.0.0.1' });
    expect(JSON.parse(audit[0]!.before!)).toEqual({ target_timestamp: cut });
    expect(JSON.parse(audit[0]!.after!)).toEqual({ deleted: 12004 });
    expect(await countLogsBefore(ctx, cut)).toEqual({ count: 0, capped: false });
  });
});

describe('presentation helpers', () => {
  it('colours use time and first-token time by the seed thresholds', () => {
    expect([0, 100, 101, 299, 300].map(useTimeTone)).toEqual(['green', 'green', 'orange', 'orange', 'red']);
    expect([0, 2999, 3000, 9999, 10000].map(frtTone)).toEqual(['green', 'green', 'orange', 'orange', 'red']);
  });

  it('reads other leniently (ratio vs fixed price, mapping, retry path)', () => {
    const d = parseOther(JSON.stringify(OTHER));
    expect(d).toMatchObject({
      modelRatio: 2.5,
      modelPrice: undefined,
      cacheTokens: 30,
      reasoningTokens: 12,
      frt: 2500,
      isModelMapped: true,
      upstreamModelName: 'gpt-4o-2024-11-20',
      useChannel: ['3', '7'],
    });
    expect(parseOther('{"model_price":0.02}').modelPrice).toBe(0.02);
    expect(parseOther('not json')).toMatchObject({ isModelMapped: false, useChannel: undefined });
    expect(parseOther('[1]').modelRatio).toBeUndefined();
  });
});
