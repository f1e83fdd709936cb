import { User } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub } from '@switchyard/db/pubsub.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type BillingDeps,
  reportUsage,
  type UsageEventInput,
  UsageKind,
} from '#app/domain/billing/billing.server.ts';
import { reconcileQuotaData, reconcileWindow, scheduleQuotaDataJob } from './reconcile.server.ts';

let db: TestDatabase;
let options: OptionService;
let deps: BillingDeps;
const em = () => db.orm.em.fork();

/** Whole hours (unix seconds). */
const H = 1_763_895_600;
const H2 = H + 3600;
const RANGE = { from: H - 3600, to: H + 3 * 3600 };

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'dash_job', poolMax: 12 });
  options = new OptionService({ orm: db.orm, pubsub: createMemoryPubSub() });
  await options.load();
  deps = { em, options };
});
afterAll(async () => {
  await options?.close();
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em
    .getConnection()
    .execute('truncate table usage_ledger, logs, quota_data, options, users restart identity cascade');
  await options.load();
});

async function users(): Promise<{ alice: number; bob: number }> {
  const e = em();
  const alice = e.create(User, { username: 'alice', affCode: 'dja', quota: 10_000_000 });
  const bob = e.create(User, { username: 'bob', affCode: 'djb', quota: 10_000_000 });
  await e.flush();
  return { alice: alice.id, bob: bob.id };
}

let seq = 0;
function call(userId: number, over: Partial<UsageEventInput> = {}): UsageEventInput {
  seq += 1;
  return {
    requestId: `dj-${seq}`,
    userId,
    tokenId: 0,
    channelIds: [],
    modelName: 'gpt-4o',
    upstreamModel: '',
    usage: { promptTokens: 10, completionTokens: 5 },
    quota: 100,
    isStream: false,
    useTimeMs: 0,
    frtMs: 0,
    group: 'default',
    otherJson: '',
    createdAtMs: (H + 60) * 1000,
    ip: '',
    tokenName: '',
    kind: UsageKind.Consume,
    content: '',
    ...over,
  };
}

type QD = {
  user_id: number;
  username: string;
  model_name: string;
  created_at: number;
  count: number;
  quota: number;
  token_used: number;
};
async function quotaData(): Promise<QD[]> {
  const rows = (await em()
    .getConnection()
    .execute(
      'select user_id, username, model_name, created_at, count, quota, token_used from quota_data ' +
        'order by user_id, model_name, created_at',
    )) as QD[];
  return rows.map((r) => ({
    ...r,
    created_at: Number(r.created_at),
    quota: Number(r.quota),
    token_used: Number(r.token_used),
  }));
}

/** A mixed workload: two users, two models, two hours, one channel test (never counted). */
async function workload(u: { alice: number; bob: number }) {
  const events = [
    call(u.alice),
    call(u.alice, { quota: 250, usage: { promptTokens: 100, completionTokens: 20 } }),
    call(u.alice, { modelName: 'claude-3-5-haiku', quota: 40 }),
    call(u.alice, { createdAtMs: (H2 + 10) * 1000, quota: 7 }),
    call(u.bob, { quota: 1000, usage: { promptTokens: 1, completionTokens: 1 } }),
    call(u.alice, { kind: UsageKind.ChannelTest, quota: 0 }),
  ];
  await reportUsage(deps, events);
}

const EXPECTED = (u: { alice: number; bob: number }): QD[] => [
  {
    user_id: u.alice,
    username: 'alice',
    model_name: 'claude-3-5-haiku',
    created_at: H,
    count: 1,
    quota: 40,
    token_used: 15,
  },
  {
    user_id: u.alice,
    username: 'alice',
    model_name: 'gpt-4o',
    created_at: H,
    count: 2,
    quota: 350,
    token_used: 135,
  },
  {
    user_id: u.alice,
    username: 'alice',
    model_name: 'gpt-4o',
    created_at: H2,
    count: 1,
    quota: 7,
    token_used: 15,
  },
  {
    user_id: u.bob,
    username: 'bob',
    model_name: 'gpt-4o',
    created_at: H,
    count: 1,
    quota: 1000,
    token_used: 2,
  },
];

describe('quota_data reconciliation (ADR 026)', () => {
  it('billing and the job agree exactly; a rerun changes nothing', async () => {
    const u = await users();
    await workload(u);
    expect(await quotaData()).toEqual(EXPECTED(u));
    const first = await reconcileQuotaData(em, RANGE);
    expect(first).toMatchObject({ ran: true, upserted: 0, deleted: 0 });
    expect(await quotaData()).toEqual(EXPECTED(u));
  });

  it('backfills hours billed while DataExportEnabled was off, exactly, and repairs damaged rows', async () => {
    const u = await users();
    await options.set('DataExportEnabled', false);
    await workload(u);
    expect(await quotaData()).toEqual([]);
    await options.set('DataExportEnabled', true);
    const r = await reconcileQuotaData(em, RANGE);
    expect(r).toMatchObject({ ran: true, groups: 3, upserted: 4, deleted: 0 });
    expect(await quotaData()).toEqual(EXPECTED(u));

    // damage: a wrong count, a stray model; the job sets the values (not adds) and removes the stray row
    const conn = em().getConnection();
    await conn.execute('update quota_data set count = 99, quota = 1 where model_name = ? ', [
      'claude-3-5-haiku',
    ]);
    await conn.execute(
      "insert into quota_data (user_id, username, model_name, created_at, count, quota, token_used) values (?, 'bob', 'ghost', ?, 3, 3, 3)",
      [u.bob, H],
    );
    expect(await reconcileQuotaData(em, RANGE)).toMatchObject({ upserted: 1, deleted: 1 });
    expect(await quotaData()).toEqual(EXPECTED(u));
  });

  it('leaves an hour alone when its usage is not completely logged (LogConsumeEnabled off)', async () => {
    const u = await users();
    await options.set('LogConsumeEnabled', false);
    await workload(u);
    await options.set('LogConsumeEnabled', true);
    // one more logged call in the same hour: the hour is still incomplete in the logs
    await reportUsage(deps, [call(u.bob, { quota: 5 })]);
    const before = await quotaData();
    expect(before.find((r) => r.user_id === u.bob)).toMatchObject({ count: 2, quota: 1005 });
    expect(await reconcileQuotaData(em, RANGE)).toMatchObject({ upserted: 0, deleted: 0 });
    expect(await quotaData()).toEqual(before);
  });

  it('a run killed before its commit leaves nothing behind, and the rerun is exact', async () => {
    const u = await users();
    await options.set('DataExportEnabled', false);
    await workload(u);
    await options.set('DataExportEnabled', true);
    await expect(
      reconcileQuotaData(em, RANGE, {
        beforeCommit: () => {
          throw new Error('killed');
        },
      }),
    ).rejects.toThrow('killed');
    expect(await quotaData()).toEqual([]);
    // the lock died with the transaction: the next run takes it
    expect(await reconcileQuotaData(em, RANGE)).toMatchObject({ ran: true, upserted: 4 });
    expect(await reconcileQuotaData(em, RANGE)).toMatchObject({ ran: true, upserted: 0 });
    expect(await quotaData()).toEqual(EXPECTED(u));
  });

  it('two concurrent runs (two replicas) never double count: one runs, the other skips', async () => {
    const u = await users();
    await options.set('DataExportEnabled', false);
    await workload(u);
    await options.set('DataExportEnabled', true);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const slow = reconcileQuotaData(em, RANGE, {
      beforeCommit: async () => {
        entered();
        await held;
      },
    });
    await inside;
    const second = await reconcileQuotaData(em, RANGE);
    expect(second.ran).toBe(false);
    release();
    expect(await slow).toMatchObject({ ran: true, upserted: 4 });
    expect(await quotaData()).toEqual(EXPECTED(u));
    // and many at once, racing billing that keeps charging: the totals stay exact
    const more = Array.from({ length: 30 }, (_, i) => call(i % 2 ? u.alice : u.bob, { quota: 1 + i }));
    await Promise.all([
      ...more.map((e) => reportUsage(deps, [e])),
      ...Array.from({ length: 6 }, () => reconcileQuotaData(em, RANGE)),
    ]);
    await reconcileQuotaData(em, RANGE);
    const totals = (await em()
      .getConnection()
      .execute('select sum(count)::int as n, sum(quota)::int as q from quota_data')) as {
      n: number;
      q: number;
    }[];
    const expectedQuota = 40 + 350 + 7 + 1000 + more.reduce((a, e) => a + e.quota, 0);
    expect(totals[0]).toEqual({ n: 5 + 30, q: expectedQuota });
  });

  it('a charge in flight while the job rebuilds is counted exactly once', async () => {
    const u = await users();
    await options.set('DataExportEnabled', false);
    await workload(u);
    await options.set('DataExportEnabled', true);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const job = reconcileQuotaData(em, RANGE, {
      afterRead: async () => {
        entered();
        await held;
      },
    });
    await inside;
    // Between the job's read and its writes: Billing waits for the job's write lock (shared vs exclusive), then adds on top of the rebuilt rows.
    const charge = reportUsage(deps, [call(u.bob, { quota: 9 })]);
    await new Promise((r) => setTimeout(r, 100));
    release();
    await Promise.all([job, charge]);
    expect((await quotaData()).find((r) => r.user_id === u.bob)).toMatchObject({ count: 2, quota: 1009 });
    expect(await reconcileQuotaData(em, RANGE)).toMatchObject({ upserted: 0, deleted: 0 });
  });
});

describe('the schedule', () => {
  it('honours DataExportInterval and DataExportEnabled live, through the option cache', async () => {
    let now = 1_000_000_000_000;
    const logs: string[] = [];
    const job = scheduleQuotaDataJob({ em, options, log: (m) => logs.push(m), now: () => now });
    try {
      expect(job.nextInMs()).toBe(5 * 60_000);
      now += 60_000;
      await options.set('DataExportInterval', 2);
      // re-armed at once: two minutes after the last run, one of which has passed
      expect(job.nextInMs()).toBe(60_000);
      await options.set('DataExportEnabled', false);
      expect(job.nextInMs()).toBeNull();
      expect(await job.runNow()).toBeNull();
      await options.set('DataExportEnabled', true);
      expect(job.nextInMs()).toBe(2 * 60_000);
      const result = await job.runNow();
      expect(result?.ran).toBe(true);
      // the window covers the last two intervals, at least the previous hour, up to the current hour's end
      const nowSec = Math.floor(now / 1000);
      expect({ from: result?.from, to: result?.to }).toEqual(reconcileWindow(nowSec, 2));
      expect(job.nextInMs()).toBe(2 * 60_000);
    } finally {
      await job.stop();
    }
    expect(job.nextInMs()).toBeNull();
  });

  it('the window: two intervals back, at least an hour, whole hours', () => {
    expect(reconcileWindow(H + 1800, 5)).toEqual({ from: H - 3600, to: H + 3600 });
    expect(reconcileWindow(H + 1800, 120)).toEqual({ from: H - 4 * 3600, to: H + 3600 });
  });
});
