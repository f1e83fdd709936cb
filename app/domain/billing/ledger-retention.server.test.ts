/**
 * usage_ledger retention against a migrated PostgreSQL: old rows go in chunks, recent ones stay, a second
 * replica pruning at the same time stands aside, and a retention of 0 schedules nothing.
 */
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pruneUsageLedger, schedulePruning } from './ledger-retention.server.ts';

let db: TestDatabase;
const NOW = 1_800_000_000;
const DAY = 86_400;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'ledger_retention' });
}, 60_000);
afterAll(async () => {
  await db?.drop();
});

async function seed(count: number, createdAt: number, prefix: string) {
  await db.orm.em.getConnection().execute(
    `insert into usage_ledger (request_id, user_id, token_id, quota, kind, created_at)
     select ? || g, 1, 0, 1, 1, ? from generate_series(1, ?) g`,
    [prefix, createdAt, count],
  );
}
const count = async (where = 'true') =>
  Number(
    (
      (await db.orm.em.getConnection().execute(`select count(*) as n from usage_ledger where ${where}`)) as {
        n: string;
      }[]
    )[0]?.n,
  );

describe('usage_ledger retention', () => {
  beforeEach(async () => {
    await db.orm.em.getConnection().execute('delete from usage_ledger');
  });

  it('deletes the rows older than the retention in chunks and keeps the others', async () => {
    await seed(2_500, NOW - 31 * DAY, 'old-');
    await seed(40, NOW - 30 * DAY + 1, 'edge-');
    await seed(300, NOW - 3600, 'new-');
    const r = await pruneUsageLedger(() => db.orm.em.fork(), {
      retentionDays: 30,
      nowSec: NOW,
      chunk: 1_000,
    });
    expect(r).toEqual({ deleted: 2_500, cutoff: NOW - 30 * DAY, busy: false });
    expect(await count()).toBe(340);
    expect(await count("request_id like 'old-%'")).toBe(0);
    // Nothing left to delete: a second run is a no-op.
    expect((await pruneUsageLedger(() => db.orm.em.fork(), { retentionDays: 30, nowSec: NOW })).deleted).toBe(
      0,
    );
  });

  it('stands aside while another replica holds the pruning lock', async () => {
    await seed(10, NOW - 40 * DAY, 'old-');
    const other = db.orm.em.fork();
    await other.transactional(async (tx) => {
      await tx.execute('select pg_advisory_xact_lock(7304117501)');
      const r = await pruneUsageLedger(() => db.orm.em.fork(), { retentionDays: 30, nowSec: NOW });
      expect(r).toMatchObject({ deleted: 0, busy: true });
    });
    expect(await count()).toBe(10);
    expect((await pruneUsageLedger(() => db.orm.em.fork(), { retentionDays: 30, nowSec: NOW })).deleted).toBe(
      10,
    );
  });

  it('runs on its schedule, and a retention of 0 keeps every row', async () => {
    await seed(5, Math.floor(Date.now() / 1000) - 10 * DAY, 'old-');
    const logs: string[] = [];
    const none = schedulePruning(() => db.orm.em.fork(), {
      retentionDays: 0,
      firstAfterMs: 1,
      log: (m) => logs.push(m),
    });
    await new Promise((r) => setTimeout(r, 50));
    await none.stop();
    expect(await count()).toBe(5);

    const week = schedulePruning(() => db.orm.em.fork(), {
      retentionDays: 7,
      firstAfterMs: 1,
      everyMs: 60_000,
      log: (m) => logs.push(m),
    });
    const deadline = Date.now() + 5_000;
    while ((await count()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await week.stop();
    expect(await count()).toBe(0);
    expect(logs).toEqual(['usage_ledger: deleted 5 rows older than 7 days']);
  });
});
