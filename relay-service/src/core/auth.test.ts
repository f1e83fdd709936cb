import { describe, expect, it } from 'vitest';
import { Accounts, type AccountsRepo } from './auth.ts';
import type { TokenRecord, UserRecord } from './repo.ts';
import { tokenRecord, userRecord } from './testing.ts';

const token = (id: number, over: Partial<TokenRecord> = {}): TokenRecord =>
  tokenRecord({ id, userId: id, key: `key${id}`, name: `t${id}`, remainQuota: 100, ...over });
const user = (id: number, over: Partial<UserRecord> = {}): UserRecord =>
  userRecord({ id, username: `u${id}`, quota: 1000, ...over });

/** A database of tokens and users that counts the reads of each kind. */
function fakeRepo() {
  const tokens = new Map<string, TokenRecord>();
  const users = new Map<number, UserRecord>();
  const calls = { tokenByKey: 0, userById: 0, tokensByKeys: [] as number[], usersByIds: 0 };
  let gate: Promise<void> | null = null;
  const repo: AccountsRepo = {
    async tokenByKey(key) {
      calls.tokenByKey++;
      return tokens.get(key) ?? null;
    },
    async userById(id) {
      calls.userById++;
      return users.get(id) ?? null;
    },
    async tokensByKeys(keys) {
      calls.tokensByKeys.push(keys.length);
      // Read first, then wait: a refresh that raced with an admin change holds the old rows.
      const rows = keys.flatMap((k) => (tokens.has(k) ? [tokens.get(k)!] : []));
      if (gate) await gate;
      return rows;
    },
    async usersByIds(ids) {
      calls.usersByIds++;
      return ids.flatMap((id) => (users.has(id) ? [users.get(id)!] : []));
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
    expect(db.calls.tokenByKey).toBe(2_500);

    db.tokens.set('key7', token(7, { status: 2 }));
    db.users.set(8, user(8, { quota: 5 }));
    await cache.refresh(6_000);
    // Chunks of 1,000 keys: three reads of tokens, three of their users.
    expect(db.calls.tokensByKeys).toEqual([1_000, 1_000, 500]);
    expect(db.calls.usersByIds).toBe(3);

    // Past the first TTL, yet served from the refreshed entries with the new rows and no single reads.
    expect((await cache.lookup('key7', 12_000))?.token.status).toBe(2);
    expect((await cache.lookup('key8', 12_000))?.user.quota).toBe(5);
    expect(db.calls.tokenByKey).toBe(2_500);
  });

  it('drops entries whose token or user is gone, and entries nobody used for idleMs', async () => {
    const db = fakeRepo();
    for (const id of [1, 2, 3]) db.add(id);
    const cache = new Accounts(db.repo, 10_000, { idleMs: 60_000 });
    await cache.lookup('key1', 0);
    await cache.lookup('key2', 0);
    await cache.lookup('key3', 50_000);
    db.tokens.delete('key1');
    await cache.refresh(70_000);
    // key1 deleted, key2 idle for 70 s: neither is kept; key3 was refreshed.
    expect(db.calls.tokensByKeys).toEqual([1]);
    expect(cache.size).toBe(1);
    expect(await cache.lookup('key1', 70_001)).toBeNull();
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
    expect(db.calls.tokenByKey).toBe(1);
    await cache.lookup('key1', 10_000);
    expect(db.calls.tokenByKey).toBe(2);
  });

  it('once started, serves an entry up to two TTLs after its last read (the refresh has a whole TTL)', async () => {
    const db = fakeRepo();
    db.add(1);
    const cache = new Accounts(db.repo, 10_000);
    cache.start();
    try {
      await cache.lookup('key1', 0);
      await cache.lookup('key1', 19_999);
      expect(db.calls.tokenByKey).toBe(1);
      await cache.lookup('key1', 20_000);
      expect(db.calls.tokenByKey).toBe(2);
    } finally {
      cache.stop();
    }
  });
});
