/**
 * The account cache's reads against a migrated PostgreSQL: one joined row per live token of a live owner, for a
 * single key (a miss) and for many token ids (the bulk refresh), with every field the relay uses mapped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo, type Repo, sqlFor } from '../../relay-service/src/core/repo.ts';
import { type Stack, seedToken, seedUser, startStack } from './relay-stack.ts';

let stack: Stack;
let repo: Repo;

beforeAll(async () => {
  stack = await startStack({ suffix: 'repo', relays: 0 });
  repo = createRepo(sqlFor(stack.orm));
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

describe('relay repo: accounts', () => {
  it('reads a token with its owner in one row, every field mapped', async () => {
    const u = await seedUser(stack, { quota: 1234, group: 'vip', role: 10, status: 1 });
    await stack.sql(`update users set setting = ? where id = ?`, [
      JSON.stringify({ accept_unset_model_ratio_model: true }),
      u.id,
    ]);
    const t = await seedToken(stack, u.id, {
      remainQuota: 55,
      group: 'svip',
      modelLimits: ['gpt-4o', 'gpt-4o-mini'],
      allowIps: '10.0.0.0/8',
      expiredTime: 1_900_000_000,
    });
    const found = await repo.accountByKey(t.key);
    expect(found?.token).toMatchObject({
      id: t.id,
      userId: u.id,
      status: 1,
      remainQuota: 55,
      unlimitedQuota: false,
      expiredTime: 1_900_000_000,
      modelLimitsEnabled: true,
      modelLimits: ['gpt-4o', 'gpt-4o-mini'],
      allowIps: '10.0.0.0/8',
      group: 'svip',
    });
    expect(found?.user).toEqual({
      id: u.id,
      username: u.username,
      group: 'vip',
      quota: 1234,
      role: 10,
      status: 1,
      setting: { accept_unset_model_ratio_model: true },
    });
    expect(await repo.accountByKey('no-such-key')).toBeNull();
  });

  it('leaves out deleted tokens and tokens of deleted users, one by one and in bulk', async () => {
    const live = await seedUser(stack, { quota: 1 });
    const gone = await seedUser(stack, { quota: 1 });
    const a = await seedToken(stack, live.id);
    const b = await seedToken(stack, live.id);
    const c = await seedToken(stack, gone.id);
    await stack.sql(`update tokens set deleted_at = now() where id = ?`, [b.id]);
    await stack.sql(`update users set deleted_at = now() where id = ?`, [gone.id]);

    expect((await repo.accountByKey(a.key))?.token.id).toBe(a.id);
    expect(await repo.accountByKey(b.key)).toBeNull();
    expect(await repo.accountByKey(c.key)).toBeNull();

    const bulk = await repo.accountsByIds([a.id, b.id, c.id, 999_999]);
    expect(bulk.map((x) => [x.token.id, x.user.id])).toEqual([[a.id, live.id]]);
    expect(await repo.accountsByIds([])).toEqual([]);
  });

  it('reads a thousand tokens in one call', async () => {
    const u = await seedUser(stack, { quota: 1 });
    const ids: number[] = [];
    for (let i = 0; i < 1_000; i++) ids.push((await seedToken(stack, u.id)).id);
    const rows = await repo.accountsByIds(ids);
    expect(new Set(rows.map((r) => r.token.id))).toEqual(new Set(ids));
    expect(rows.every((r) => r.user.id === u.id)).toBe(true);
  }, 60_000);
});
