import { describe, expect, it } from 'vitest';
import { Accounts, type AccountsRepo } from './auth.ts';
import type { TokenRecord, UserRecord } from './repo.ts';
import { tokenRecord, userRecord } from './testing.ts';

const token = (id: number, over: Partial<TokenRecord> = {}): TokenRecord =>
  tokenRecord({ id, userId: id, name: `t${id}`, remainQuota: 100, ...over });
const user = (id: number, over: Partial<UserRecord> = {}): UserRecord =>
  userRecord({ id, username: `u${id}`, quota: 1000, ...over });

/** A database of tokens (by key, `key<id>`) and users that counts the reads of each kind. */
function fakeRepo() {
  const tokens = new Map<string, TokenRecord>();
  const users = new Map<number, UserRecord>();
  const calls = { accountByKey: 0, accountsByIds: [] as number[] };
  let gate: Promise<void> | null = null;
  // A token counts only with a live owner, as the repo's join does.
  const account = (key: string) => {
    const token = tokens.get(key);
    const user = token ? users.get(token.userId) : undefined;
    return token && user ? { token, user } : null;
  };
  const repo: AccountsRepo = {
    async accountByKey(key) {
      calls.accountByKey++;
      return account(key);
    },
    async accountsByIds(ids) {
      calls.accountsByIds.push(ids.length);
      // Read first, then wait: a refresh that raced with an admin change holds the old rows.
      const rows = ids.flatMap((id) => account(`key${id}`) ?? []);
      if (gate) await gate;
      return rows;
    },
  };
  const add = (id: number) => {
    tokens.set(`key${id}`, token(id));
    users.set(id, user(id));
  };
  return {
    repo,
    tokens,
    users,
    calls,
    add,
    hold: () => {
      let open!: () => void;
      gate = new Promise((r) => {
        open = r;
      });
      return () => {
        gate = null;
        open();
      };
    },
  };
}

describe('account cache', () => {
  it('refreshes every entry in use with bulk reads, so known keys never wait on the database', async () => {
    const db = fakeRepo();
    for (let id = 1; id <= 2_500; id++) db.add(id);
    const cache = new Accounts(db.repo, 10_000);
    for (let id = 1; id <= 2_500; id++) await cache.lookup(`key${id}`, 1_000);
    expect(db.calls.accountByKey).toBe(2_500);

    db.tokens.set('key7', token(7, { status: 2 }));
    db.users.set(8, user(8, { quota: 5 }));
    await cache.refresh(6_000);
    // Chunks of 1,000 tokens: three reads by id, each of tokens with their owners.
    expect(db.calls.accountsByIds).toEqual([1_000, 1_000, 500]);

    // Past the first TTL, yet served from the refreshed entries with the new rows and no single reads.
    expect((await cache.lookup('key7', 12_000))?.token.status).toBe(2);
    expect((await cache.lookup('key8', 12_000))?.user.quota).toBe(5);
    expect(db.calls.accountByKey).toBe(2_500);
  });

  it('drops entries whose token or user is gone, and entries nobody used for idleMs', async () => {
    const db = fakeRepo();
    for (const id of [1, 2, 3, 4]) db.add(id);
    const cache = new Accounts(db.repo, 10_000, { idleMs: 60_000 });
    await cache.lookup('key1', 0);
    await cache.lookup('key2', 0);
    await cache.lookup('key3', 50_000);
    await cache.lookup('key4', 50_000);
    db.tokens.delete('key1');
    db.users.delete(4);
    await cache.refresh(70_000);
    // key1 deleted, key4's owner deleted, key2 idle for 70 s: none is kept; key3 was refreshed.
    expect(db.calls.accountsByIds).toEqual([2]);
    expect(cache.size).toBe(1);
    expect(await cache.lookup('key1', 70_001)).toBeNull();
    expect(await cache.lookup('key4', 70_001)).toBeNull();
  });

  it('never brings back an entry invalidated while a refresh was reading', async () => {
    const db = fakeRepo();
    db.add(1);
    const cache = new Accounts(db.repo, 10_000);
    await cache.lookup('key1', 0);
    const open = db.hold();
    const refreshing = cache.refresh(5_000);
    // The console disables the token and tells the relay while the refresh holds the old row.
    db.tokens.set('key1', token(1, { status: 2 }));
    cache.invalidate([], [1]);
    open();
    await refreshing;
    expect((await cache.lookup('key1', 5_001))?.token.status).toBe(2);
  });

  it('reads a key again one by one once its entry is older than the TTL (no refresh ran)', async () => {
    const db = fakeRepo();
    db.add(1);
    const cache = new Accounts(db.repo, 10_000);
    await cache.lookup('key1', 0);
    await cache.lookup('key1', 9_999);
    expect(db.calls.accountByKey).toBe(1);
    await cache.lookup('key1', 10_000);
    expect(db.calls.accountByKey).toBe(2);
  });

  it('once started, serves an entry up to two TTLs after its last read (the refresh has a whole TTL)', async () => {
    const db = fakeRepo();
    db.add(1);
    const cache = new Accounts(db.repo, 10_000);
    cache.start();
    try {
      await cache.lookup('key1', 0);
      await cache.lookup('key1', 19_999);
      expect(db.calls.accountByKey).toBe(1);
      await cache.lookup('key1', 20_000);
      expect(db.calls.accountByKey).toBe(2);
    } finally {
      cache.stop();
    }
  });
});
