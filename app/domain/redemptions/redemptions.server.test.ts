import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Redemption, RedemptionStatus } from '@switchyard/db/entities/redemption.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ForbiddenError, InputError, NotFoundError, UnauthorizedError } from '#app/domain/errors.ts';
import { i18next } from '#app/i18n/i18n.server.ts';
import {
  createRedemptionSchema,
  createRedemptions,
  deleteRedemption,
  filterUnusedKeys,
  getRedemption,
  listRedemptions,
  parseInput,
  type RedemptionsCtx,
  redeemCode,
  searchRedemptions,
  updateRedemption,
  updateRedemptionSchema,
} from './redemptions.server.ts';

let db: TestDatabase;
let t: RedemptionsCtx['t'];
let seq = 0;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'redemptions', poolMax: 14 });
  t = await i18next.getFixedT('en', 'common');
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em
    .getConnection()
    .execute('truncate table redemptions, audit_entries, logs, users restart identity cascade');
});

const options = {
  get: ((key: string) =>
    ({ DisplayInCurrencyEnabled: true, QuotaPerUnit: 500000 })[
      key as 'QuotaPerUnit'
    ]) as RedemptionsCtx['options']['get'],
};

async function makeUser(over: Partial<Record<string, unknown>> = {}): Promise<User> {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, {
    username: `rd${seq}`,
    displayName: '',
    affCode: `rdaff${seq}`,
    ...over,
  } as never);
  await em.flush();
  return user;
}

function ctxFor(actor: User | null): RedemptionsCtx {
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
    ip: '127.0.0.1',
  };
}

const create = async (ctx: RedemptionsCtx, body: Record<string, unknown>) =>
  createRedemptions(ctx, parseInput(ctx, createRedemptionSchema, body));
const update = async (ctx: RedemptionsCtx, body: Record<string, unknown>) =>
  updateRedemption(ctx, parseInput(ctx, updateRedemptionSchema, body));
const rowByKey = (key: string) => db.orm.em.fork().findOneOrFail(Redemption, { key });
const quotaOf = async (id: number) => Number((await db.orm.em.fork().findOneOrFail(User, { id })).quota);

describe('admin', () => {
  it('creates N codes of 32 hex characters in one call, with defaults and an audit entry', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const ctx = ctxFor(admin);
    const keys = await create(ctx, { name: 'batch', quota: '250000', count: '5' });
    expect(keys).toHaveLength(5);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(keys).size).toBe(5);
    const rows = await db.orm.em.fork().find(Redemption, {}, { orderBy: { id: 'asc' } });
    expect(rows.map((r) => [r.name, Number(r.quota), r.status, r.userId, r.usedUserId])).toEqual(
      keys.map(() => ['batch', 250000, RedemptionStatus.Unused, admin.id, 0]),
    );
    const audits = await db.orm.em.fork().find(AuditEntry, { action: 'redemption.create' });
    expect(audits).toHaveLength(1);
    // the audit text carries short prefixes only, never a whole key
    for (const k of keys) expect(audits[0]!.after).not.toContain(k);
    expect(audits[0]!.after).toContain(keys[0]!.slice(0, 6));

    // defaults (seed §9): quota 100000, count 1; an empty name becomes the formatted quota (seed §5)
    const one = await create(ctx, { name: '' });
    expect(one).toHaveLength(1);
    const row = await rowByKey(one[0]!);
    expect(Number(row.quota)).toBe(100000);
    expect(row.name).toBe('$0.20');
  });

  it('refuses bad counts, quotas and names', async () => {
    const ctx = ctxFor(await makeUser({ role: Role.Admin }));
    await expect(create(ctx, { count: 0 })).rejects.toThrow('The number of codes must be greater than 0');
    await expect(create(ctx, { count: 101 })).rejects.toThrow('At most 100 codes can be generated at once');
    await expect(create(ctx, { quota: 0 })).rejects.toThrow(InputError);
    await expect(create(ctx, { quota: '1.5' })).rejects.toThrow('Please check your input');
    await expect(create(ctx, { name: 'x'.repeat(21) })).rejects.toThrow('The name must be 1 to 20');
    expect(await db.orm.em.fork().count(Redemption, {})).toBe(0);
  });

  it('lists, searches by name, id and key prefix, gets and deletes', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const ctx = ctxFor(admin);
    const [a] = await create(ctx, { name: 'alpha', quota: 1000 });
    const [b] = await create(ctx, { name: 'beta', quota: 2000 });
    await create(ctx, { name: 'gamma', quota: 3000 });
    const page = await listRedemptions(ctx, { page: 1, pageSize: 2 });
    expect(page).toMatchObject({ page: 1, total: 3, page_size: 2 });
    expect(page.items.map((i) => i.name)).toEqual(['gamma', 'beta']);
    expect((await searchRedemptions(ctx, { keyword: 'alp', page: 1, pageSize: 10 })).items[0]?.key).toBe(a);
    const rowB = await rowByKey(b!);
    expect(
      (await searchRedemptions(ctx, { keyword: String(rowB.id), page: 1, pageSize: 10 })).items.map(
        (i) => i.id,
      ),
    ).toContain(rowB.id);
    expect(
      (await searchRedemptions(ctx, { keyword: b!.slice(0, 10), page: 1, pageSize: 10 })).items.map(
        (i) => i.key,
      ),
    ).toEqual([b]);
    expect((await getRedemption(ctx, rowB.id)).name).toBe('beta');
    await deleteRedemption(ctx, rowB.id);
    await expect(getRedemption(ctx, rowB.id)).rejects.toThrow(NotFoundError);
    await expect(deleteRedemption(ctx, rowB.id)).rejects.toThrow(NotFoundError);
    expect((await listRedemptions(ctx, { page: 1, pageSize: 10 })).total).toBe(2);
    expect(await db.orm.em.fork().count(AuditEntry, { action: 'redemption.delete' })).toBe(1);
    // a deleted code can no longer be redeemed
    await expect(redeemCode(ctxFor(await makeUser()), { key: b })).rejects.toThrow('Invalid redemption code');
  });

  it('edits unused codes only; enable/disable never touch a used code', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const ctx = ctxFor(admin);
    const [key] = await create(ctx, { name: 'edit-me', quota: 1000 });
    const row = await rowByKey(key!);
    const edited = await update(ctx, { id: row.id, name: 'renamed', quota: 5000 });
    expect(edited).toMatchObject({ name: 'renamed', quota: 5000, status: 1 });

    const disabled = await update(ctx, { id: row.id, status_only: true, status: 2 });
    expect(disabled.status).toBe(2);
    // a disabled code cannot be edited (unused only) and cannot be redeemed
    await expect(update(ctx, { id: row.id, name: 'x', quota: 1 })).rejects.toThrow(
      'Only unused codes can be edited',
    );
    const user = await makeUser();
    await expect(redeemCode(ctxFor(user), { key })).rejects.toThrow(
      'This redemption code has already been used',
    );
    expect(await quotaOf(user.id)).toBe(0);
    expect((await update(ctx, { id: row.id, status_only: 'true', status: '1' })).status).toBe(1);

    await redeemCode(ctxFor(user), { key });
    await expect(update(ctx, { id: row.id, name: 'again', quota: 1 })).rejects.toThrow(
      'Only unused codes can be edited',
    );
    await expect(update(ctx, { id: row.id, status_only: true, status: 1 })).rejects.toThrow(
      'A used code cannot be enabled',
    );
    await expect(update(ctx, { id: row.id, status_only: true, status: 2 })).rejects.toThrow(
      'A used code cannot be disabled',
    );
    await expect(update(ctx, { id: row.id, status_only: true, status: 3 })).rejects.toThrow('Invalid status');
    expect((await rowByKey(key!)).status).toBe(RedemptionStatus.Used);
    const actions = (await db.orm.em.fork().find(AuditEntry, {}, { orderBy: { id: 'asc' } })).map(
      (a) => a.action,
    );
    expect(actions).toEqual([
      'redemption.create',
      'redemption.update',
      'redemption.disable',
      'redemption.enable',
      'redemption.redeem',
    ]);
  });

  it('refuses every admin function to an ordinary user (403) and to nobody (401)', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const [key] = await create(ctxFor(admin), { quota: 1000 });
    const row = await rowByKey(key!);
    const plain = ctxFor(await makeUser());
    const calls = [
      () => listRedemptions(plain, { page: 1, pageSize: 10 }),
      () => searchRedemptions(plain, { keyword: 'a', page: 1, pageSize: 10 }),
      () => getRedemption(plain, row.id),
      () => create(plain, { quota: 1000 }),
      () => update(plain, { id: row.id, name: 'x', quota: 1 }),
      () => update(plain, { id: row.id, status_only: true, status: 2 }),
      () => deleteRedemption(plain, row.id),
      () => filterUnusedKeys(plain, [key!]),
    ];
    for (const call of calls) await expect(call()).rejects.toThrow(ForbiddenError);
    await expect(listRedemptions(ctxFor(null), { page: 1, pageSize: 10 })).rejects.toThrow(UnauthorizedError);
    expect((await rowByKey(key!)).name).toBe('$0.002000');
    expect(await db.orm.em.fork().count(Redemption, {})).toBe(1);
  });

  it('filterUnusedKeys hands back only real unused codes', async () => {
    const ctx = ctxFor(await makeUser({ role: Role.Admin }));
    const keys = await create(ctx, { quota: 1000, count: 3 });
    await redeemCode(ctxFor(await makeUser()), { key: keys[1] });
    expect(await filterUnusedKeys(ctx, [...keys, 'f'.repeat(32), '<script>'])).toEqual([keys[0], keys[2]]);
  });
});

describe('redeem', () => {
  it('credits once, writes a top-up log and an audit entry, and refuses a second redeem', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const [key] = await create(ctxFor(admin), { name: 'gift', quota: 1_000_000 });
    const user = await makeUser({ quota: 10 });
    const added = await redeemCode(ctxFor(user), { key: ` ${key!.toUpperCase()} ` });
    expect(added).toBe(1_000_000);
    expect(await quotaOf(user.id)).toBe(1_000_010);
    const row = await rowByKey(key!);
    expect(row.status).toBe(RedemptionStatus.Used);
    expect(row.usedUserId).toBe(user.id);
    expect(Number(row.redeemedTime)).toBeGreaterThan(0);
    const logs = await db.orm.em.fork().find(Log, { userId: user.id });
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ type: LogType.TopUp, quota: 1_000_000, username: user.username });
    expect(logs[0]!.content).toBe(`Redeemed code #${row.id} (${key!.slice(0, 6)}…) for $2.00`);
    const audit = await db.orm.em.fork().findOneOrFail(AuditEntry, { action: 'redemption.redeem' });
    expect(audit).toMatchObject({ actorId: user.id, targetType: 'redemption', targetId: String(row.id) });
    expect(audit.after).not.toContain(key);

    await expect(redeemCode(ctxFor(user), { key })).rejects.toThrow(
      'This redemption code has already been used',
    );
    await expect(redeemCode(ctxFor(await makeUser()), { key })).rejects.toThrow(
      'This redemption code has already been used',
    );
    expect(await quotaOf(user.id)).toBe(1_000_010);
    expect(await db.orm.em.fork().count(Log, {})).toBe(1);
  });

  it('asks for a code, refuses unknown ones and needs a user', async () => {
    const user = await makeUser();
    await expect(redeemCode(ctxFor(user), { key: '' })).rejects.toThrow('Please enter the redemption code!');
    await expect(redeemCode(ctxFor(user), {})).rejects.toThrow('Please enter the redemption code!');
    await expect(redeemCode(ctxFor(user), { key: 'a'.repeat(32) })).rejects.toThrow(
      'Invalid redemption code',
    );
    await expect(redeemCode(ctxFor(user), { key: "' or 1=1 --" })).rejects.toThrow('Invalid redemption code');
    await expect(redeemCode(ctxFor(null), { key: 'a'.repeat(32) })).rejects.toThrow(UnauthorizedError);
  });

  it('10 concurrent redeems of one code by different users credit exactly one of them', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const [key] = await create(ctxFor(admin), { quota: 777 });
    const users = await Promise.all(Array.from({ length: 10 }, () => makeUser()));
    const results = await Promise.allSettled(users.map((u) => redeemCode(ctxFor(u), { key })));
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    expect((won[0] as PromiseFulfilledResult<number>).value).toBe(777);
    for (const r of results)
      if (r.status === 'rejected')
        expect((r.reason as Error).message).toBe('This redemption code has already been used');
    const quotas = await Promise.all(users.map((u) => quotaOf(u.id)));
    expect(quotas.filter((q) => q === 777)).toHaveLength(1);
    expect(quotas.reduce((a, b) => a + b, 0)).toBe(777);
    const winner = users[quotas.indexOf(777)]!;
    expect((await rowByKey(key!)).usedUserId).toBe(winner.id);
    expect(await db.orm.em.fork().count(Log, { type: LogType.TopUp })).toBe(1);
    expect(await db.orm.em.fork().count(AuditEntry, { action: 'redemption.redeem' })).toBe(1);
  });
});
