import { Channel } from '@switchyard/db/entities/channel.ts';
import { Token } from '@switchyard/db/entities/token.ts';
import { User } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub } from '@switchyard/db/pubsub.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { warningThreshold } from '#app/domain/account/setting.ts';
import {
  type BillingDeps,
  CHANNEL_TEST_LOG_NAME,
  quotaCrossing,
  reportUsage,
  type UsageEventInput,
  UsageKind,
} from './billing.server.ts';

let db: TestDatabase;
let options: OptionService;
let deps: BillingDeps;

/** A whole hour (unix seconds): quota_data rows are keyed by it. */
const H = 1_763_895_600;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'billing', poolMax: 12 });
  options = new OptionService({ orm: db.orm, pubsub: createMemoryPubSub() });
  await options.load();
  deps = { em: () => db.orm.em.fork(), options };
});
afterAll(async () => {
  await options?.close();
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em
    .getConnection()
    .execute(
      'truncate table usage_ledger, logs, quota_data, tokens, channels, audit_entries, options, users restart identity cascade',
    );
  await options.load();
});

type Fixture = { userId: number; tokenId: number; unlimitedId: number; c1: number; c2: number };

async function seed(): Promise<Fixture> {
  const em = db.orm.em.fork();
  const user = em.create(User, { username: 'alice', affCode: 'alice01', quota: 100_000 });
  await em.flush();
  const token = em.create(Token, {
    userId: user.id,
    key: 'a'.repeat(48),
    name: 'limited',
    remainQuota: 50_000,
  });
  const unlimited = em.create(Token, {
    userId: user.id,
    key: 'b'.repeat(48),
    name: 'unlimited',
    remainQuota: 7,
    unlimitedQuota: true,
  });
  const c1 = em.create(Channel, { name: 'primary', models: 'gpt-4o' });
  const c2 = em.create(Channel, { name: 'fallback', models: 'gpt-4o,claude-3-5-haiku' });
  await em.flush();
  return { userId: user.id, tokenId: token.id, unlimitedId: unlimited.id, c1: c1.id, c2: c2.id };
}

function event(
  over: Partial<UsageEventInput> & Pick<UsageEventInput, 'requestId' | 'userId'>,
): UsageEventInput {
  return {
    tokenId: 0,
    channelIds: [],
    modelName: 'gpt-4o',
    upstreamModel: '',
    usage: { promptTokens: 0, completionTokens: 0 },
    quota: 0,
    isStream: false,
    useTimeMs: 0,
    frtMs: 0,
    group: 'default',
    otherJson: '',
    createdAtMs: H * 1000,
    ip: '',
    tokenName: '',
    kind: UsageKind.Consume,
    content: '',
    ...over,
  };
}

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return (await db.orm.em.getConnection().execute(query, params)) as T[];
}

async function userRow(id: number) {
  const [row] = await sql<{ quota: string; used_quota: string; request_count: number }>(
    'select quota, used_quota, request_count from users where id = ?',
    [id],
  );
  return { quota: Number(row?.quota), usedQuota: Number(row?.used_quota), requestCount: row?.request_count };
}

async function tokenRow(id: number) {
  const [row] = await sql<{ remain_quota: string; used_quota: string; accessed_time: string }>(
    'select remain_quota, used_quota, accessed_time from tokens where id = ?',
    [id],
  );
  return {
    remainQuota: Number(row?.remain_quota),
    usedQuota: Number(row?.used_quota),
    accessedTime: Number(row?.accessed_time),
  };
}

async function channelUsed(id: number): Promise<number> {
  const [row] = await sql<{ used_quota: string }>('select used_quota from channels where id = ?', [id]);
  return Number(row?.used_quota);
}

/** Everything Billing writes, for "nothing changed" checks. */
async function snapshot() {
  return {
    users: await sql('select id, quota, used_quota, request_count from users order by id'),
    tokens: await sql('select id, remain_quota, used_quota, accessed_time from tokens order by id'),
    channels: await sql('select id, used_quota from channels order by id'),
    quotaData: await sql(
      'select user_id, model_name, created_at, count, quota, token_used from quota_data order by id',
    ),
    logs: await sql('select * from logs order by id'),
    ledger: await sql('select * from usage_ledger order by request_id'),
  };
}

function goldenBatch(f: Fixture): UsageEventInput[] {
  return [
    event({
      requestId: 'req-a',
      userId: f.userId,
      tokenId: f.tokenId,
      channelIds: [f.c1],
      usage: { promptTokens: 100, completionTokens: 50 },
      quota: 1500,
      useTimeMs: 1400,
      frtMs: 350,
      createdAtMs: H * 1000 + 1500,
      ip: '203.0.113.7',
      content: 'model ratio 2.5',
      otherJson: '{"model_ratio":2.5,"group_ratio":1}',
    }),
    event({
      requestId: 'req-b',
      userId: f.userId,
      tokenId: f.tokenId,
      channelIds: [f.c1, f.c2],
      upstreamModel: 'gpt-4o-2024-11-20',
      usage: { promptTokens: 200, completionTokens: 0 },
      quota: 2500,
      isStream: true,
      useTimeMs: 2600,
      createdAtMs: (H + 100) * 1000,
    }),
    event({
      requestId: 'req-c',
      userId: f.userId,
      channelIds: [f.c2],
      modelName: 'claude-3-5-haiku',
      usage: { promptTokens: 10, completionTokens: 20 },
      quota: 1000,
      createdAtMs: (H + 3605) * 1000,
      tokenName: 'playground-default',
      group: 'vip',
    }),
  ];
}

describe('reportUsage', () => {
  it('bills a batch: balances, counters, channels, quota_data and log rows match hand-computed values', async () => {
    const f = await seed();
    const acks = await reportUsage(deps, goldenBatch(f));
    expect(acks).toEqual([
      { requestId: 'req-a', status: 'accepted', message: '' },
      { requestId: 'req-b', status: 'accepted', message: '' },
      { requestId: 'req-c', status: 'accepted', message: '' },
    ]);

    expect(await userRow(f.userId)).toEqual({ quota: 95_000, usedQuota: 5000, requestCount: 3 });
    // req-c used no stored token: only req-a and req-b touch the limited token.
    expect(await tokenRow(f.tokenId)).toEqual({
      remainQuota: 46_000,
      usedQuota: 4000,
      accessedTime: H + 100,
    });
    expect(await channelUsed(f.c1)).toBe(1500); // req-b was served by c2, the last of its chain
    expect(await channelUsed(f.c2)).toBe(3500);

    const quotaData = await sql(
      'select user_id, username, model_name, created_at::int as created_at, count, quota::int as quota, ' +
        'token_used::int as token_used from quota_data order by created_at',
    );
    expect(quotaData).toEqual([
      {
        user_id: f.userId,
        username: 'alice',
        model_name: 'gpt-4o',
        created_at: H,
        count: 2,
        quota: 4000,
        token_used: 350,
      },
      {
        user_id: f.userId,
        username: 'alice',
        model_name: 'claude-3-5-haiku',
        created_at: H + 3600,
        count: 1,
        quota: 1000,
        token_used: 30,
      },
    ]);

    const logs = await sql<Record<string, unknown>>(
      'select user_id, created_at::int as created_at, type, content, username, token_name, token_id, model_name, ' +
        'quota::int as quota, prompt_tokens, completion_tokens, use_time, is_stream, channel_id, channel_name, ' +
        '"group", other, request_id, ip from logs order by request_id',
    );
    expect(logs).toHaveLength(3);
    expect(logs[0]).toEqual({
      user_id: f.userId,
      created_at: H + 1,
      type: 2,
      content: 'model ratio 2.5',
      username: 'alice',
      token_name: 'limited',
      token_id: f.tokenId,
      model_name: 'gpt-4o',
      quota: 1500,
      prompt_tokens: 100,
      completion_tokens: 50,
      use_time: 1,
      is_stream: false,
      channel_id: f.c1,
      channel_name: 'primary',
      group: 'default',
      other: expect.any(String),
      request_id: 'req-a',
      ip: '203.0.113.7',
    });
    expect(JSON.parse(logs[0]?.other as string)).toEqual({
      model_ratio: 2.5,
      group_ratio: 1,
      frt: 350,
      admin_info: { use_channel: [String(f.c1)] },
    });
    expect(logs[1]).toMatchObject({
      request_id: 'req-b',
      use_time: 3,
      is_stream: true,
      channel_id: f.c2,
      channel_name: 'fallback',
      token_name: 'limited',
      prompt_tokens: 200,
      completion_tokens: 0,
    });
    expect(JSON.parse(logs[1]?.other as string)).toEqual({
      is_model_mapped: true,
      upstream_model_name: 'gpt-4o-2024-11-20',
      admin_info: { use_channel: [String(f.c1), String(f.c2)] },
    });
    expect(logs[2]).toMatchObject({
      request_id: 'req-c',
      token_id: 0,
      token_name: 'playground-default',
      model_name: 'claude-3-5-haiku',
      group: 'vip',
      created_at: H + 3605,
    });
    expect(
      await sql('select request_id, kind, quota::int as quota from usage_ledger order by request_id'),
    ).toEqual([
      { request_id: 'req-a', kind: 1, quota: 1500 },
      { request_id: 'req-b', kind: 1, quota: 2500 },
      { request_id: 'req-c', kind: 1, quota: 1000 },
    ]);

    // The same batch again: every event is a duplicate and nothing changes.
    const before = await snapshot();
    const again = await reportUsage(deps, goldenBatch(f));
    expect(again.map((a) => a.status)).toEqual(['duplicate', 'duplicate', 'duplicate']);
    expect(await snapshot()).toEqual(before);
  });

  it('bills a request id repeated inside one batch once', async () => {
    const f = await seed();
    const x = event({ requestId: 'x', userId: f.userId, tokenId: f.tokenId, quota: 300 });
    const y = event({ requestId: 'y', userId: f.userId, tokenId: f.tokenId, quota: 200 });
    const acks = await reportUsage(deps, [x, { ...x }, y, { ...x, quota: 999 }]);
    expect(acks.map((a) => [a.requestId, a.status])).toEqual([
      ['x', 'accepted'],
      ['x', 'duplicate'],
      ['y', 'accepted'],
      ['x', 'duplicate'],
    ]);
    expect(await userRow(f.userId)).toEqual({ quota: 99_500, usedQuota: 500, requestCount: 2 });
    expect(await sql('select request_id from logs order by request_id')).toEqual([
      { request_id: 'x' },
      { request_id: 'y' },
    ]);
  });

  it('bills each event once when 5 callers report the same events concurrently', async () => {
    const f = await seed();
    const em = db.orm.em.fork();
    const bob = em.create(User, { username: 'bob', affCode: 'bob01', quota: 100_000 });
    await em.flush();
    const events = Array.from({ length: 40 }, (_, i) =>
      event({
        requestId: `c-${i}`,
        userId: i % 2 === 0 ? f.userId : bob.id,
        tokenId: i % 2 === 0 ? f.tokenId : 0,
        // Both users share the channels, in both orders, so lock ordering is exercised.
        channelIds: i % 3 === 0 ? [f.c1] : [f.c2],
        modelName: i % 4 === 0 ? 'gpt-4o' : 'claude-3-5-haiku',
        quota: 100 + i,
        usage: { promptTokens: i, completionTokens: 1 },
        createdAtMs: (H + i * 200) * 1000,
      }),
    );
    // Each caller sends every event, in its own order and batch split.
    const callers = Array.from({ length: 5 }, (_, c) => {
      const order = [...events].sort((a, b) => ((a.quota * (c + 7)) % 41) - ((b.quota * (c + 7)) % 41));
      return (async () => [
        ...(await reportUsage(deps, order.slice(0, 25))),
        ...(await reportUsage(deps, order.slice(25))),
      ])();
    });
    const results = (await Promise.all(callers)).flat();
    const accepted = results.filter((a) => a.status === 'accepted').map((a) => a.requestId);
    expect(accepted.sort()).toEqual(events.map((e) => e.requestId).sort());
    expect(results.filter((a) => a.status === 'duplicate')).toHaveLength(4 * events.length);

    const total = (uid: number) => events.filter((e) => e.userId === uid).reduce((s, e) => s + e.quota, 0);
    for (const uid of [f.userId, bob.id]) {
      const [logSum] = await sql<{ s: string; n: string }>(
        'select coalesce(sum(quota), 0) as s, count(*) as n from logs where user_id = ? and type = 2',
        [uid],
      );
      const row = await userRow(uid);
      expect(row.usedQuota).toBe(Number(logSum?.s));
      expect(row.usedQuota).toBe(total(uid));
      expect(row.quota).toBe(100_000 - total(uid));
      expect(row.requestCount).toBe(20);
    }
    const channelTotal = events.reduce((s, e) => s + e.quota, 0);
    expect((await channelUsed(f.c1)) + (await channelUsed(f.c2))).toBe(channelTotal);
    const [qd] = await sql<{ s: string; n: string }>(
      'select sum(quota) as s, sum(count) as n from quota_data',
    );
    expect([Number(qd?.s), Number(qd?.n)]).toEqual([channelTotal, 40]);
  });

  it('logs a channel test without touching any balance', async () => {
    const f = await seed();
    const before = await snapshot();
    const acks = await reportUsage(deps, [
      event({
        requestId: 'test-1',
        userId: f.userId,
        channelIds: [f.c2],
        kind: UsageKind.ChannelTest,
        quota: 750,
        usage: { promptTokens: 12, completionTokens: 3 },
        useTimeMs: 800,
      }),
    ]);
    expect(acks[0]?.status).toBe('accepted');
    const after = await snapshot();
    expect(after.users).toEqual(before.users);
    expect(after.tokens).toEqual(before.tokens);
    expect(after.channels).toEqual(before.channels);
    expect(after.quotaData).toEqual([]);
    expect(after.logs).toHaveLength(1);
    expect(after.logs[0]).toMatchObject({
      type: 2,
      user_id: f.userId,
      username: 'alice',
      token_name: CHANNEL_TEST_LOG_NAME,
      content: CHANNEL_TEST_LOG_NAME,
      quota: '750',
      channel_id: f.c2,
      channel_name: 'fallback',
      use_time: 1,
      request_id: 'test-1',
    });
    expect(after.ledger).toMatchObject([{ request_id: 'test-1', kind: 2 }]);
    expect(
      (await reportUsage(deps, [event({ requestId: 'test-1', userId: f.userId, kind: 2 })]))[0]?.status,
    ).toBe('duplicate');
  });

  it('with LogConsumeEnabled off writes no log rows but still bills once', async () => {
    const f = await seed();
    await options.set('LogConsumeEnabled', false);
    const batch = goldenBatch(f);
    expect((await reportUsage(deps, batch)).map((a) => a.status)).toEqual([
      'accepted',
      'accepted',
      'accepted',
    ]);
    expect(await sql('select id from logs')).toEqual([]);
    expect(await userRow(f.userId)).toEqual({ quota: 95_000, usedQuota: 5000, requestCount: 3 });
    expect(await tokenRow(f.tokenId)).toMatchObject({ remainQuota: 46_000, usedQuota: 4000 });

    const before = await snapshot();
    expect((await reportUsage(deps, batch)).map((a) => a.status)).toEqual([
      'duplicate',
      'duplicate',
      'duplicate',
    ]);
    expect(await snapshot()).toEqual(before);
  });

  it('applies a task refund once: user quota and token remain_quota back, a system log row (ADR 029)', async () => {
    const f = await seed();
    await options.set('LogConsumeEnabled', false);
    const refund = (requestId: string, tokenId: number) =>
      event({
        requestId,
        userId: f.userId,
        tokenId,
        channelIds: [f.c1],
        modelName: 'mj_imagine',
        quota: 50_000,
        kind: UsageKind.TaskRefund,
        content: 'Midjourney task 1 failed (banned); 50000 quota refunded',
      });
    const acks = await Promise.all([
      reportUsage(deps, [refund('mj-refund:1', f.tokenId)]),
      reportUsage(deps, [refund('mj-refund:1', f.tokenId)]),
    ]);
    expect(acks.map((a) => a[0]!.status).sort()).toEqual(['accepted', 'duplicate']);
    // used_quota of the user keeps the charge (the sum of consume logs); the token's goes down.
    expect(await userRow(f.userId)).toEqual({ quota: 150_000, usedQuota: 0, requestCount: 0 });
    expect(await tokenRow(f.tokenId)).toMatchObject({ remainQuota: 100_000, usedQuota: -50_000 });
    // Written although LogConsumeEnabled is off: a refund is a system row.
    const logs = await sql<{ type: number; quota: string; content: string; model_name: string }>(
      'select type, quota, content, model_name from logs',
    );
    expect(logs).toEqual([
      {
        type: 4,
        quota: '50000',
        content: 'Midjourney task 1 failed (banned); 50000 quota refunded',
        model_name: 'mj_imagine',
      },
    ]);
    // An unlimited token keeps its remain_quota.
    await reportUsage(deps, [refund('mj-refund:2', f.unlimitedId)]);
    expect(await tokenRow(f.unlimitedId)).toMatchObject({ remainQuota: 7 });
  });

  it('with DataExportEnabled off keeps quota_data unchanged', async () => {
    const f = await seed();
    await options.set('DataExportEnabled', false);
    await reportUsage(deps, goldenBatch(f));
    expect(await sql('select id from quota_data')).toEqual([]);
    expect(await userRow(f.userId)).toMatchObject({ usedQuota: 5000 });
    expect(await sql('select count(*)::int as n from logs')).toEqual([{ n: 3 }]);
  });

  it('rejects malformed events and unknown users while billing the rest of the batch', async () => {
    const f = await seed();
    const ok = (requestId: string) => event({ requestId, userId: f.userId, tokenId: f.tokenId, quota: 10 });
    const batch = [
      ok('good-1'),
      event({ requestId: '', userId: f.userId }),
      event({ requestId: 'r'.repeat(65), userId: f.userId }),
      event({ requestId: 'bad-user', userId: 0 }),
      event({ requestId: 'bad-quota', userId: f.userId, quota: -1 }),
      event({ requestId: 'bad-tokens', userId: f.userId, usage: { promptTokens: -5, completionTokens: 0 } }),
      event({ requestId: 'bad-model', userId: f.userId, modelName: '' }),
      event({ requestId: 'bad-other-array', userId: f.userId, otherJson: '[1,2]' }),
      event({ requestId: 'bad-other-json', userId: f.userId, otherJson: '{nope' }),
      event({ requestId: 'bad-kind', userId: f.userId, kind: 0 }),
      event({
        requestId: 'bad-int32',
        userId: f.userId,
        usage: { promptTokens: 2 ** 31, completionTokens: 0 },
      }),
      event({ requestId: 'bad-fraction', userId: f.userId, quota: 1.5 }),
      event({ requestId: 'ghost', userId: 9999, quota: 10 }),
      ok('good-2'),
    ];
    const acks = await reportUsage(deps, batch);
    expect(acks.map((a) => a.status)).toEqual([
      'accepted',
      ...Array.from({ length: 12 }, () => 'rejected'),
      'accepted',
    ]);
    expect(acks.map((a) => a.requestId)).toEqual(batch.map((e) => e.requestId));
    for (const ack of acks.slice(1, -1)) expect(ack.message).not.toBe('');
    expect(acks[1]?.message).toMatch(/request_id is empty/);
    expect(acks[7]?.message).toMatch(/JSON object/);
    expect(acks[12]?.message).toMatch(/unknown user 9999/);
    expect(await userRow(f.userId)).toEqual({ quota: 99_980, usedQuota: 20, requestCount: 2 });
    expect(await sql('select request_id from usage_ledger order by request_id')).toEqual([
      { request_id: 'good-1' },
      { request_id: 'good-2' },
    ]);
    // A rejected event is not recorded: fixed and re-sent, it is billed.
    expect((await reportUsage(deps, [{ ...batch[4]!, quota: 5 }]))[0]?.status).toBe('accepted');
  });

  it('leaves the remain_quota of an unlimited token alone', async () => {
    const f = await seed();
    await reportUsage(deps, [
      event({
        requestId: 'u-1',
        userId: f.userId,
        tokenId: f.unlimitedId,
        quota: 4000,
        createdAtMs: 5_000_000,
      }),
    ]);
    expect(await tokenRow(f.unlimitedId)).toEqual({ remainQuota: 7, usedQuota: 4000, accessedTime: 5000 });
    expect(await userRow(f.userId)).toMatchObject({ quota: 96_000, usedQuota: 4000 });
  });

  it('stores text verbatim, quotes and placeholders included', async () => {
    const f = await seed();
    const content = `it's a "test" \\ with ? and ?? and $1`;
    await reportUsage(deps, [
      event({ requestId: "q'1?", userId: f.userId, content, otherJson: '{"note":"a ? b \\\\ c"}' }),
    ]);
    const [row] = await sql<{ content: string; other: string; request_id: string }>(
      'select content, other, request_id from logs',
    );
    expect(row?.content).toBe(content);
    expect(row?.request_id).toBe("q'1?");
    expect(JSON.parse(row?.other ?? '')).toEqual({ note: 'a ? b \\ c' });
  });

  it('bills text that PostgreSQL cannot store as it is (a lone surrogate, NUL) instead of failing the batch', async () => {
    const f = await seed();
    const acks = await reportUsage(deps, [
      event({
        requestId: 'odd-1',
        userId: f.userId,
        modelName: 'gpt\ud800-x',
        content: 'a\u0000b',
        quota: 5,
      }),
      event({ requestId: 'odd-2', userId: f.userId, quota: 6 }),
    ]);
    expect(acks.map((a) => a.status)).toEqual(['accepted', 'accepted']);
    const rows = await sql<{ model_name: string; content: string }>(
      'select model_name, content from logs order by request_id',
    );
    expect(rows[0]).toEqual({ model_name: 'gpt\ufffd-x', content: 'ab' });
    expect(await userRow(f.userId)).toMatchObject({ usedQuota: 11 });
  });

  it('bills 500 events with a handful of statements', async () => {
    const f = await seed();
    const events = Array.from({ length: 500 }, (_, i) =>
      event({
        requestId: `bulk-${i}`,
        userId: f.userId,
        tokenId: f.tokenId,
        channelIds: [i % 2 ? f.c1 : f.c2],
        quota: 10,
        createdAtMs: (H + i * 30) * 1000,
      }),
    );
    const connection = db.orm.em.getConnection();
    const spy = vi.spyOn(connection, 'execute');
    try {
      const acks = await reportUsage(deps, events);
      expect(acks.every((a) => a.status === 'accepted')).toBe(true);
      // users lock, ledger, users update, tokens lock + update, channels lock + update, quota_data, logs
      expect(spy.mock.calls.length).toBeGreaterThanOrEqual(9);
      expect(spy.mock.calls.length).toBeLessThanOrEqual(10);
    } finally {
      spy.mockRestore();
    }
    expect(await userRow(f.userId)).toEqual({ quota: 95_000, usedQuota: 5000, requestCount: 500 });
    expect(await sql('select count(*)::int as n from logs')).toEqual([{ n: 500 }]);
  });
});

describe('quota warning crossing (ADR 022)', () => {
  it('warns when a charge goes below the threshold, once until the balance is found at or above it again', () => {
    expect(quotaCrossing(150, 120, 100, false)).toEqual({ send: false, warned: false });
    expect(quotaCrossing(120, 90, 100, false)).toEqual({ send: true, warned: true });
    expect(quotaCrossing(90, 80, 100, true)).toEqual({ send: false, warned: true });
    // topped up to 160 since: re-armed, and a charge across warns again
    expect(quotaCrossing(160, 90, 100, true)).toEqual({ send: true, warned: true });
    expect(quotaCrossing(160, 110, 100, true)).toEqual({ send: false, warned: false });
    // below and never warned (threshold raised, balance lowered by an administrator): warned once
    expect(quotaCrossing(50, 40, 100, false)).toEqual({ send: true, warned: true });
    // a threshold of 0 warns only when the balance goes negative
    expect(quotaCrossing(10, 0, 0, false)).toEqual({ send: false, warned: false });
  });

  it("takes the user's own threshold, else QuotaRemindThreshold", () => {
    expect(warningThreshold('{"quota_warning_threshold":500000}', 1000)).toBe(500000);
    expect(warningThreshold('', 1000)).toBe(1000);
    expect(warningThreshold('{"notify_type":"email"}', 1000)).toBe(1000);
    expect(warningThreshold('{"quota_warning_threshold":0}', 1000)).toBe(1000);
    expect(warningThreshold('not json', 7)).toBe(7);
  });
});
