/**
 * The in-process store's outbox on disk (ADR 014), against a real PostgreSQL: a settle returns once its entry is
 * in relay_outbox, an ack deletes it, and a new store loaded from the journal has the same outbox and the same
 * pending amounts as the one that died.
 */
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sqlFor } from '../core/repo.ts';
import { type JournalSql, type OutboxJournal, PgOutboxJournal } from './journal.ts';
import { MemoryStore } from './memory.ts';

let db: TestDatabase;
let sql: JournalSql;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'relay_journal' });
  sql = sqlFor(db.orm);
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await sql('delete from relay_outbox');
});

const user = { kind: 'user', id: 7 } as const;
const token = { kind: 'token', id: 70 } as const;
const rows = async () =>
  (
    await sql<{ id: string; request_id: string; amount: string }>('select * from relay_outbox order by id')
  ).map((r) => [r.request_id, Number(r.amount)]);

async function storeWith(journal: OutboxJournal, committed = 10_000) {
  const store = new MemoryStore();
  const restored = await store.useJournal(journal);
  for (const a of [user, token])
    await store.loadBalance(a, await store.balanceGeneration(a), committed, 60_000);
  return { store, restored };
}

async function call(store: MemoryStore, requestId: string, hold: number, cost: number, now = Date.now()) {
  const r = await store.reserve({ requestId, userId: 7, tokenId: 70, amount: hold, holdTtlMs: 60_000, now });
  expect(r).toEqual({ ok: true, held: hold });
  return store.settle({
    requestId,
    userId: 7,
    tokenId: 70,
    amount: cost,
    success: true,
    payload: `p-${requestId}`,
    now,
  });
}

describe('PgOutboxJournal with the in-process store', () => {
  it('a settle is on disk when it returns; a store started on the journal restores the outbox and the pending amounts', async () => {
    const journal = new PgOutboxJournal(sql);
    const { store: first } = await storeWith(journal);
    const a = await call(first, 'req-a', 500, 300);
    expect(await rows()).toEqual([['req-a', 300]]);
    await call(first, 'req-b', 500, 200);
    expect(await first.balance(user)).toBe(10_000 - 500);
    // The process dies: nothing of `first` survives but the table.
    const { store: second, restored } = await storeWith(journal);
    expect(restored).toBe(2);
    // Billing has not committed these yet: they still count against the balance loaded from PostgreSQL.
    expect(await second.balance(user)).toBe(10_000 - 500);
    expect(await second.balance(token)).toBe(10_000 - 500);
    const pending = await second.outboxPending(Date.now() + 1_000, 10);
    expect(pending.map((e) => [e.id, e.requestId, e.amount, e.payload])).toEqual([
      [a.entryId, 'req-a', 300, 'p-req-a'],
      [expect.any(String), 'req-b', 200, 'p-req-b'],
    ]);
    // New ids continue after the restored ones, even with a clock that went back.
    const c = await call(second, 'req-c', 100, 100, 1);
    expect(c.entryId > (pending[1]?.id ?? '')).toBe(true);
    expect((await second.outboxPending(Date.now() + 1_000, 10)).map((e) => e.requestId)).toEqual([
      'req-a',
      'req-b',
      'req-c',
    ]);

    // Billing acknowledged: rows deleted, pend released once (a duplicate ack changes nothing).
    await second.ackOutbox(pending);
    await second.ackOutbox(pending);
    expect(await rows()).toEqual([['req-c', 100]]);
    await second.invalidateBalance(user);
    await second.loadBalance(user, await second.balanceGeneration(user), 10_000 - 500, 60_000);
    expect(await second.balance(user)).toBe(10_000 - 500 - 100);
  });

  it('settles arriving together share one INSERT (group commit) and all reach the table', async () => {
    const statements: string[] = [];
    const counting: JournalSql = (q, p) => {
      if (q.startsWith('insert')) statements.push(q);
      return sql(q, p);
    };
    const { store } = await storeWith(new PgOutboxJournal(counting), 1_000_000);
    await Promise.all(Array.from({ length: 50 }, (_, i) => call(store, `req-${i}`, 10, 10)));
    expect((await rows()).length).toBe(50);
    expect(statements.length).toBeLessThan(50);
  });

  it('a journal write that fails does not fail the settle; the entry stays in memory and is written by the next sweep', async () => {
    let down = true;
    const errors: unknown[] = [];
    const flaky: JournalSql = (q, p) =>
      down && q.startsWith('insert') ? Promise.reject(new Error('db down')) : sql(q, p);
    const store = new MemoryStore();
    await store.useJournal(new PgOutboxJournal(flaky), { onError: (e) => errors.push(e) });
    for (const a of [user, token]) await store.loadBalance(a, 0, 10_000, 60_000);
    await call(store, 'req-x', 50, 40);
    expect(errors).toHaveLength(1);
    expect(await rows()).toEqual([]);
    expect((await store.outboxPending(Date.now() + 1_000, 10)).map((e) => e.requestId)).toEqual(['req-x']);
    down = false;
    await store.releaseExpiredHolds(Date.now());
    expect(await rows()).toEqual([['req-x', 40]]);
  });
});
