/**
 * Routing and channel health through the real relay: priority tiers and weights, retries across channels,
 * status-code mapping, auto-disable/enable, the admin channel pin, the RelayService channel operations over
 * real gRPC with the console's typed client, and an Azure channel end to end through the official SDK.
 * Channels are told apart by their upstream key (fake rules match `key`); each test routes its own model names
 * so the channels of other tests never compete.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRelayClient, type RelayClient, RelayError } from '#app/grpc/relay-client.server.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import {
  drained,
  reload,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

const SECRET = 'relay-channels-internal-secret-0123456789abcdef';
const ROOT_ID = 1;

let stack: Stack;
let fake: FakeOpenAI;
/** A second upstream that answers 401 (with the masked key in the message) for REJECTED_KEY. */
let rejecting: FakeOpenAI;
let grpc: RelayClient;
let user: { id: number; key: string; tokenId: number };
let admin: { id: number; key: string };

const REJECTED_KEY = 'sk-bad-upstream-WXYZ';

/** Every model any test routes, with a ratio so it is priced (1 unless a test needs another). */
const MODELS = [
  'tier-m',
  'retry-m',
  'twice-m',
  'noretry-m',
  'map-m',
  'ban-m',
  'noban-m',
  'off-m',
  'kw-m',
  'leak-m',
  'pin-m',
  'test-m',
  'test-fail-m',
  'slow-m',
  'reenable-m',
  'manual-m',
  'play-m',
  'ttl-m',
  'stream-retry-m',
  'unreach-m',
  'root-group-m',
  'mapped-test-m',
  'nousage-m',
  'text-embedding-test',
  'test-ban-m',
  'gpt-4.1-mini',
  'gpt-4o-mini-az',
  'quota-ban-m',
  'inv-token-m',
  'refresh-m',
  'inv-channel-m',
  'grpc-err-m',
  'race-m',
  'race-test-m',
  'ban-retry-m',
  'same-tier-m',
  'pin-vip-m',
];

beforeAll(async () => {
  fake = await startFakeOpenAI();
  rejecting = await startFakeOpenAI({ rejectKeys: [REJECTED_KEY] });
  stack = await startStack({
    suffix: 'relay_channels',
    env: { INTERNAL_API_SECRET: SECRET, RELAY_ACCOUNT_TTL_MS: '3600000' },
  });
  // The channel-test log is written for user 1 (root): the first user of this fresh database.
  const root = await seedUser(stack, { quota: 1_000_000, role: 100 });
  expect(root.id).toBe(ROOT_ID);
  const u = await seedUser(stack, { quota: 100_000_000 });
  const t = await seedToken(stack, u.id, { remainQuota: 50_000_000 });
  user = { id: u.id, key: t.key, tokenId: t.id };
  const a = await seedUser(stack, { quota: 100_000_000, role: 100 });
  admin = { id: a.id, key: (await seedToken(stack, a.id, { unlimited: true })).key };
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ ...Object.fromEntries(MODELS.map((m) => [m, 1])), 'test-m': 2 }),
    CompletionRatio: JSON.stringify({ 'test-m': 2 }),
  });
  grpc = createRelayClient(stack.relays[0]!.grpcAddress, { internalSecret: SECRET, timeoutMs: 20_000 });
}, 60_000);

afterAll(async () => {
  grpc?.close();
  await stack?.close();
  await fake?.close();
  await rejecting?.close();
});

beforeEach(() => {
  fake.reset();
  rejecting.reset();
});

const sdk = (key: string) =>
  new OpenAI({ baseURL: `${stack.relays[0]!.httpUrl}/v1`, apiKey: key, maxRetries: 0 });

const chat = (model: string, key = `sk-${user.key}`, extra: Record<string, unknown> = {}) =>
  sdk(key).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

/** Resolves with the error the SDK threw (fails the test when the call succeeded). */
async function chatError(model: string, key?: string): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await chat(model, key).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

/** Upstream requests received with each key, in arrival order. */
const keysSeen = (f: FakeOpenAI = fake) => f.requests.map((r) => r.key);

async function channelRow(id: number) {
  const [row] = await stack.sql<Record<string, unknown>>(`select * from channels where id = ?`, [id]);
  return row!;
}

async function abilitiesEnabled(id: number): Promise<boolean[]> {
  const rows = await stack.sql<{ enabled: boolean }>(`select enabled from abilities where channel_id = ?`, [
    id,
  ]);
  return rows.map((r) => r.enabled);
}

async function lastLog(where: string, params: unknown[]) {
  await drained(stack);
  const [row] = await stack.sql<Record<string, unknown>>(
    `select * from logs where ${where} order by id desc limit 1`,
    params,
  );
  return row;
}

let channelSeq = 0;
/** A channel on `fake` (unless baseUrl) with its own key, for one model. */
async function channel(
  model: string,
  fields: Partial<Parameters<typeof seedChannel>[1]> = {},
): Promise<{ id: number; key: string }> {
  const key = fields.key ?? `sk-ch-${model}-${channelSeq++}`;
  const { id } = await seedChannel(stack, { baseUrl: fake.url, models: [model], ...fields, key });
  return { id, key };
}

describe('routing', () => {
  it('the highest priority tier serves, split by weight+10; status 2 and 3 channels never serve', async () => {
    const light = await channel('tier-m', { priority: 10, weight: 0 });
    const heavy = await channel('tier-m', { priority: 10, weight: 30 });
    const lower = await channel('tier-m', { priority: 0, weight: 100 });
    const manual = await channel('tier-m', { priority: 20, weight: 100, status: 2 });
    const auto = await channel('tier-m', { priority: 20, weight: 100, status: 3 });
    // Abilities left enabled by mistake must not route to a disabled channel either.
    await stack.sql(`update abilities set enabled = true where channel_id in (?, ?)`, [manual.id, auto.id]);
    await reload(stack);

    const n = 200;
    for (let i = 0; i < n; i += 20) await Promise.all(Array.from({ length: 20 }, () => chat('tier-m')));
    const seen = keysSeen();
    expect(seen).toHaveLength(n);
    const count = (k: string) => seen.filter((s) => s === k).length;
    expect(count(lower.key)).toBe(0);
    expect(count(manual.key)).toBe(0);
    expect(count(auto.key)).toBe(0);
    // Expected shares 10/50 and 40/50: 40 and 160 of 200 (σ ≈ 5.7).
    expect(count(light.key) + count(heavy.key)).toBe(n);
    expect(count(light.key)).toBeGreaterThan(15);
    expect(count(light.key)).toBeLessThan(70);
  });
});

describe('retries', () => {
  beforeAll(async () => {
    await setOptions(stack, { RetryTimes: '2', AutomaticDisableChannelEnabled: 'false' });
  });

  it('500 then 429 then success: served by the third channel, the path logged in order', async () => {
    const a = await channel('retry-m', { priority: 30 });
    const b = await channel('retry-m', { priority: 20 });
    const c = await channel('retry-m', { priority: 10 });
    await reload(stack);
    fake.on({ key: a.key, respond: { status: 500 } });
    fake.on({ key: b.key, respond: { status: 429 } });
    const res = await chat('retry-m');
    expect(res.choices[0]?.message.content).toBe('Hello from retry-m');
    expect(keysSeen()).toEqual([a.key, b.key, c.key]);
    const log = await lastLog(`user_id = ? and model_name = 'retry-m'`, [user.id]);
    expect(Number(log?.channel_id)).toBe(c.id);
    expect(JSON.parse(String(log?.other)).admin_info.use_channel).toEqual([a.id, b.id, c.id].map(String));
  });

  it('inside one tier the retries pick the untried channels: every call ends on the good one', async () => {
    const bad1 = await channel('same-tier-m');
    const bad2 = await channel('same-tier-m');
    const good = await channel('same-tier-m');
    const chans = [bad1, bad2, good];
    await reload(stack);
    fake.on({ key: bad1.key, respond: { status: 500 } });
    fake.on({ key: bad2.key, respond: { status: 429 } });
    const idOf = new Map(chans.map((c) => [c.key, String(c.id)]));
    for (let i = 0; i < 15; i++) {
      fake.requests.length = 0;
      await chat('same-tier-m');
      const seen = keysSeen();
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.at(-1)).toBe(good.key);
      const log = await lastLog(`user_id = ? and model_name = 'same-tier-m'`, [user.id]);
      expect(JSON.parse(String(log?.other)).admin_info.use_channel).toEqual(
        seen.map((k) => idOf.get(k ?? '')),
      );
    }
  });

  it('a streamed request is retried on another channel before any byte reaches the client', async () => {
    const a = await channel('stream-retry-m', { priority: 30 });
    const b = await channel('stream-retry-m', { priority: 20 });
    await reload(stack);
    fake.on({ key: a.key, respond: { status: 503 } });
    const stream = await sdk(`sk-${user.key}`).chat.completions.create({
      model: 'stream-retry-m',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello from stream-retry-m');
    expect(keysSeen()).toEqual([a.key, b.key]);
    const log = await lastLog(`user_id = ? and model_name = 'stream-retry-m'`, [user.id]);
    expect(JSON.parse(String(log?.other)).admin_info.use_channel).toEqual([a.id, b.id].map(String));
  });

  it('an unreachable upstream is retried on the next channel', async () => {
    await channel('unreach-m', { priority: 30, baseUrl: 'http://127.0.0.1:1' });
    const b = await channel('unreach-m', { priority: 20 });
    await reload(stack);
    await chat('unreach-m');
    expect(keysSeen()).toEqual([b.key]);
  });

  it('never tries a channel twice: RetryTimes=5 with two failing channels makes two requests, last error wins', async () => {
    await setOptions(stack, { RetryTimes: '5' });
    const a = await channel('twice-m', { priority: 30 });
    const b = await channel('twice-m', { priority: 20 });
    await reload(stack);
    fake.on({ key: a.key, respond: { status: 500 } });
    fake.on({ key: b.key, respond: { status: 429 } });
    const err = await chatError('twice-m');
    expect(err.status).toBe(429);
    expect(keysSeen()).toEqual([a.key, b.key]);
    await setOptions(stack, { RetryTimes: '2' });
  });

  it('400 and 504 are not retried', async () => {
    const a = await channel('noretry-m', { priority: 30 });
    await channel('noretry-m', { priority: 20 });
    await reload(stack);
    for (const status of [400, 504]) {
      fake.reset();
      fake.on({ key: a.key, respond: { status } });
      const err = await chatError('noretry-m');
      expect(err.status).toBe(status);
      expect(keysSeen()).toEqual([a.key]);
    }
  });

  it('status_code_mapping changes the client status and the retry decision', async () => {
    const a = await channel('map-m', { priority: 30, statusCodeMapping: { '429': '400' } });
    const b = await channel('map-m', { priority: 20 });
    await reload(stack);
    fake.on({ key: a.key, respond: { status: 429 } });
    const err = await chatError('map-m');
    expect(err.status).toBe(400);
    expect(keysSeen()).toEqual([a.key]);
    // Unmapped, the same 429 moves on to the next channel.
    await stack.sql(`update channels set status_code_mapping = '' where id = ?`, [a.id]);
    await reload(stack);
    fake.reset();
    fake.on({ key: a.key, respond: { status: 429 } });
    await chat('map-m');
    expect(keysSeen()).toEqual([a.key, b.key]);
    // And a 400 mapped to 502 becomes retryable.
    await stack.sql(`update channels set status_code_mapping = '{"400":"502"}' where id = ?`, [a.id]);
    await reload(stack);
    fake.reset();
    fake.on({ key: a.key, respond: { status: 400 } });
    await chat('map-m');
    expect(keysSeen()).toEqual([a.key, b.key]);
  });
});

describe('auto-disable', () => {
  beforeAll(async () => {
    await setOptions(stack, {
      RetryTimes: '0',
      AutomaticDisableChannelEnabled: 'true',
      AutomaticDisableKeywords: 'Your account has been suspended\nsomething else',
    });
  });

  it('auto_ban=1 and a 401: status 3 with reason and time, abilities off, the next call goes elsewhere', async () => {
    const before = Math.floor(Date.now() / 1000);
    const bad = await channel('ban-m', { priority: 30 });
    const good = await channel('ban-m', { priority: 20 });
    await reload(stack);
    fake.on({ key: bad.key, respond: { status: 401 } });
    const err = await chatError('ban-m');
    expect(err.status).toBe(401);
    const row = await channelRow(bad.id);
    expect(Number(row.status)).toBe(3);
    const info = JSON.parse(String(row.other_info));
    expect(info.status_reason).toMatch(/401/);
    expect(info.status_time).toBeGreaterThanOrEqual(before);
    expect(await abilitiesEnabled(bad.id)).toEqual([false]);
    fake.reset();
    await chat('ban-m');
    expect(keysSeen()).toEqual([good.key]);
  });

  it('with retries on, the 401 channel is disabled and the same call is served by the next one', async () => {
    await setOptions(stack, { RetryTimes: '1' });
    const bad = await channel('ban-retry-m', { priority: 30 });
    const good = await channel('ban-retry-m', { priority: 20 });
    await reload(stack);
    fake.on({ key: bad.key, respond: { status: 401 } });
    await chat('ban-retry-m');
    expect(keysSeen()).toEqual([bad.key, good.key]);
    expect(Number((await channelRow(bad.id)).status)).toBe(3);
    await setOptions(stack, { RetryTimes: '0' });
  });

  it('an in-flight failure never turns a manual disable (2) into an auto-disable (3)', async () => {
    const a = await channel('race-m');
    await reload(stack);
    // The console disabled it by hand after this relay loaded its routing table (no invalidation yet).
    await stack.sql(`update channels set status = 2 where id = ?`, [a.id]);
    await stack.sql(`update abilities set enabled = false where channel_id = ?`, [a.id]);
    fake.on({ key: a.key, respond: { status: 401 } });
    await chatError('race-m');
    expect(keysSeen()).toEqual([a.key]);
    const row = await channelRow(a.id);
    expect(Number(row.status)).toBe(2);
    expect(await abilitiesEnabled(a.id)).toEqual([false]);
    // Otherwise AutomaticEnableChannelEnabled would later re-enable what the administrator switched off.
    expect(String(row.other_info ?? '')).not.toMatch(/status_reason/);
  });

  it('auto_ban=0 never disables', async () => {
    const a = await channel('noban-m', { autoBan: false });
    await reload(stack);
    fake.on({ key: a.key, respond: { status: 401 } });
    await chatError('noban-m');
    await chatError('noban-m');
    expect(keysSeen()).toEqual([a.key, a.key]);
    expect(Number((await channelRow(a.id)).status)).toBe(1);
  });

  it('with AutomaticDisableChannelEnabled off nothing is disabled', async () => {
    await setOptions(stack, { AutomaticDisableChannelEnabled: 'false' });
    const a = await channel('off-m');
    await reload(stack);
    fake.on({ key: a.key, respond: { status: 401 } });
    await chatError('off-m');
    expect(Number((await channelRow(a.id)).status)).toBe(1);
    expect(await abilitiesEnabled(a.id)).toEqual([true]);
    await setOptions(stack, { AutomaticDisableChannelEnabled: 'true' });
  });

  it('a keyword in a 500 body disables; a 500 without one does not', async () => {
    const a = await channel('kw-m');
    const b = await channel('kw-m');
    await reload(stack);
    fake.on({ key: b.key, respond: { status: 500 } });
    fake.on({
      key: a.key,
      respond: {
        status: 500,
        error: { message: 'Sorry, your account has been SUSPENDED.', type: 'server_error' },
      },
    });
    // Weighted random order: call until both have answered once.
    for (let i = 0; i < 40 && new Set(keysSeen()).size < 2; i++) await chatError('kw-m');
    expect(new Set(keysSeen())).toEqual(new Set([a.key, b.key]));
    expect(Number((await channelRow(a.id)).status)).toBe(3);
    expect(JSON.parse(String((await channelRow(a.id)).other_info)).status_reason).toMatch(/keyword/);
    expect(Number((await channelRow(b.id)).status)).toBe(1);
  });

  it('an upstream insufficient_quota 429 disables the channel', async () => {
    const a = await channel('quota-ban-m');
    await reload(stack);
    fake.on({
      key: a.key,
      respond: { error: { message: 'You exceeded your current quota.', type: 'insufficient_quota' } },
    });
    const err = await chatError('quota-ban-m');
    expect(err.status).toBe(429);
    expect(Number((await channelRow(a.id)).status)).toBe(3);
  });

  it('the client never sees the upstream key fragment of a 401', async () => {
    await seedChannel(stack, { baseUrl: rejecting.url, models: ['leak-m'], key: REJECTED_KEY });
    await reload(stack);
    const err = await chatError('leak-m');
    expect(rejecting.requests).toHaveLength(1);
    expect(err.status).toBe(401);
    expect(err.message).not.toContain('WXYZ');
    expect(JSON.stringify(err.error)).not.toContain('WXYZ');
  });
});

describe('admin channel pin sk-KEY-CHANNELID', () => {
  it('routes an admin to the pinned channel without retries; a normal user gets 403', async () => {
    await setOptions(stack, { RetryTimes: '3', AutomaticDisableChannelEnabled: 'false' });
    await channel('pin-m', { priority: 30 });
    const low = await channel('pin-m', { priority: 0 });
    await reload(stack);
    const res = await chat('pin-m', `sk-${admin.key}-${low.id}`);
    expect(res.choices[0]?.message.content).toBe('Hello from pin-m');
    expect(keysSeen()).toEqual([low.key]);

    fake.reset();
    fake.on({ key: low.key, respond: { status: 500 } });
    const failed = await chatError('pin-m', `sk-${admin.key}-${low.id}`);
    expect(failed.status).toBe(500);
    expect(keysSeen()).toEqual([low.key]);

    // The pin bypasses routing: a channel outside the admin's group still serves.
    const vip = await channel('pin-vip-m', { groups: ['vip'] });
    await reload(stack);
    fake.reset();
    await chat('pin-vip-m', `sk-${admin.key}-${vip.id}`);
    expect(keysSeen()).toEqual([vip.key]);

    // A disabled channel cannot be pinned either.
    const off = await channel('pin-m', { status: 2 });
    await reload(stack);
    fake.reset();
    expect((await chatError('pin-m', `sk-${admin.key}-${off.id}`)).status).toBe(403);
    expect(fake.requests).toHaveLength(0);

    const denied = await chatError('pin-m', `sk-${user.key}-${low.id}`);
    expect(denied.status).toBe(403);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('RelayService over gRPC', () => {
  beforeAll(async () => {
    await setOptions(stack, {
      RetryTimes: '0',
      AutomaticDisableChannelEnabled: 'false',
      AutomaticEnableChannelEnabled: 'false',
      ChannelDisableThreshold: '5',
    });
  });

  /** quota, used_quota, request_count of root. */
  async function rootQuota(): Promise<number[]> {
    await drained(stack);
    const [r] = await stack.sql<Record<string, string>>(
      `select quota, used_quota, request_count from users where id = ?`,
      [ROOT_ID],
    );
    return [r!.quota, r!.used_quota, r!.request_count].map(Number);
  }

  it('testChannel success: response_time and test_time set, a "模型测试" log for user 1, nothing deducted', async () => {
    const ch = await channel('test-m');
    await reload(stack);
    fake.on({ key: ch.key, respond: { usage: { prompt_tokens: 100, completion_tokens: 50 }, delayMs: 30 } });
    const quotaBefore = await rootQuota();
    const startedS = Math.floor(Date.now() / 1000);
    const r = await grpc.testChannel(ch.id, '');
    expect(r).toMatchObject({ channelId: ch.id, success: true, model: 'test-m', status: 1 });
    expect(r.responseTimeMs).toBeGreaterThanOrEqual(30);
    expect(fake.requests[0]?.body?.max_tokens).toBe(10);
    const row = await channelRow(ch.id);
    expect(Number(row.response_time)).toBeGreaterThanOrEqual(30);
    expect(Number(row.test_time)).toBeGreaterThanOrEqual(startedS);
    const log = await lastLog(`user_id = ? and model_name = 'test-m'`, [ROOT_ID]);
    expect(log?.token_name).toBe('模型测试');
    // (100 + 50·2)·2 = 400
    expect(Number(log?.quota)).toBe(400);
    expect(Number(log?.channel_id)).toBe(ch.id);
    expect(await rootQuota()).toEqual(quotaBefore);
    expect(Number((await channelRow(ch.id)).used_quota)).toBe(0);
  });

  it("testChannel runs in root's group with the requested model through the channel's mapping", async () => {
    await setOptions(stack, { GroupRatio: JSON.stringify({ default: 1, vip: 3, svip: 1 }) });
    const ch = await channel('root-group-m', {
      groups: ['vip'],
      models: ['root-group-m', 'mapped-test-m'],
      modelMapping: { 'mapped-test-m': 'upstream-name' },
    });
    await reload(stack);
    fake.on({ key: ch.key, respond: { usage: { prompt_tokens: 100, completion_tokens: 50 } } });
    const r = await grpc.testChannel(ch.id, 'mapped-test-m');
    expect(r).toMatchObject({ success: true, model: 'mapped-test-m' });
    expect(fake.requests.at(-1)?.body?.model).toBe('upstream-name');
    const log = await lastLog(`user_id = ? and model_name = 'mapped-test-m'`, [ROOT_ID]);
    // Root's group (default, ratio 1), not the channel's vip (ratio 3): 100 + 50 = 150.
    expect(log?.group).toBe('default');
    expect(Number(log?.quota)).toBe(150);
    await setOptions(stack, { GroupRatio: JSON.stringify({ default: 1, vip: 1, svip: 1 }) });
  });

  it('testChannel: a 200 without usage fails; an embedding model is tested on /embeddings', async () => {
    const ch = await channel('nousage-m', { models: ['nousage-m', 'text-embedding-test'] });
    await reload(stack);
    fake.on({ key: ch.key, respond: { omitUsage: true }, times: 1 });
    const r = await grpc.testChannel(ch.id, '');
    expect(r.success).toBe(false);
    expect(r.message).toMatch(/usage/);
    const e = await grpc.testChannel(ch.id, 'text-embedding-test');
    expect(e.success).toBe(true);
    expect(fake.requests.at(-1)).toMatchObject({ path: '/v1/embeddings', body: { input: 'hello world' } });
  });

  it('testChannel: a disabling error (401) auto-disables an enabled channel when the option is on', async () => {
    const ch = await channel('test-ban-m');
    await reload(stack);
    fake.on({ key: ch.key, respond: { status: 401 } });
    expect((await grpc.testChannel(ch.id, '')).status).toBe(1);
    expect(Number((await channelRow(ch.id)).status)).toBe(1);
    await setOptions(stack, { AutomaticDisableChannelEnabled: 'true' });
    const r = await grpc.testChannel(ch.id, '');
    expect(r).toMatchObject({ success: false, status: 3 });
    expect(r.message).toMatch(/401/);
    expect(JSON.parse(String((await channelRow(ch.id)).other_info)).status_reason).toMatch(/401/);
    await setOptions(stack, { AutomaticDisableChannelEnabled: 'false' });
  });

  it('testChannel failure returns the upstream message', async () => {
    const ch = await channel('test-fail-m');
    await reload(stack);
    fake.on({
      key: ch.key,
      respond: { status: 500, error: { message: 'engine on fire', type: 'server_error' } },
    });
    const r = await grpc.testChannel(ch.id, '');
    expect(r.success).toBe(false);
    expect(r.message).toContain('engine on fire');
    expect(r.status).toBe(1);
    const log = await lastLog(`model_name = 'test-fail-m'`, []);
    expect(log).toBeUndefined();
  });

  it('a test slower than ChannelDisableThreshold disables when AutomaticDisableChannelEnabled', async () => {
    const ch = await channel('slow-m');
    await reload(stack);
    await setOptions(stack, { ChannelDisableThreshold: '0.3' });
    fake.on({ key: ch.key, respond: { delayMs: 500 } });
    const kept = await grpc.testChannel(ch.id, '');
    expect(kept.success).toBe(false);
    expect(kept.message).toMatch(/threshold/);
    expect(Number((await channelRow(ch.id)).status)).toBe(1);
    // The upstream did serve the slow test: it is logged like a passing one.
    const log = await lastLog(`user_id = ? and model_name = 'slow-m'`, [ROOT_ID]);
    expect(log?.token_name).toBe('模型测试');

    await setOptions(stack, { AutomaticDisableChannelEnabled: 'true' });
    const r = await grpc.testChannel(ch.id, '');
    expect(r.success).toBe(false);
    expect(r.status).toBe(3);
    const row = await channelRow(ch.id);
    expect(Number(row.status)).toBe(3);
    expect(JSON.parse(String(row.other_info)).status_reason).toMatch(/threshold/);
    expect(await abilitiesEnabled(ch.id)).toEqual([false]);
    await setOptions(stack, { ChannelDisableThreshold: '5', AutomaticDisableChannelEnabled: 'false' });
  });

  it('a passing test re-enables an auto-disabled channel only with AutomaticEnableChannelEnabled, never a manual one', async () => {
    const auto = await channel('reenable-m', { status: 3 });
    const manual = await channel('manual-m', { status: 2 });
    await reload(stack);
    expect((await grpc.testChannel(auto.id, '')).status).toBe(3);
    expect(Number((await channelRow(auto.id)).status)).toBe(3);

    await setOptions(stack, { AutomaticEnableChannelEnabled: 'true' });
    const r = await grpc.testChannel(auto.id, '');
    expect(r).toMatchObject({ success: true, status: 1 });
    expect(Number((await channelRow(auto.id)).status)).toBe(1);
    expect(await abilitiesEnabled(auto.id)).toEqual([true]);
    // Routable again at once.
    await chat('reenable-m');
    expect(keysSeen().at(-1)).toBe(auto.key);

    const m = await grpc.testChannel(manual.id, '');
    expect(m).toMatchObject({ success: true, status: 2 });
    expect(Number((await channelRow(manual.id)).status)).toBe(2);
    expect(await abilitiesEnabled(manual.id)).toEqual([false]);
    await setOptions(stack, { AutomaticEnableChannelEnabled: 'false' });
  });

  it('testAllChannels streams progress over the enabled and auto-disabled channels', async () => {
    const [{ n }] = (await stack.sql<{ n: string }>(
      `select count(*) as n from channels where status in (1, 3)`,
    )) as [{ n: string }];
    const items = [];
    for await (const p of grpc.testAllChannels([])) items.push(p);
    expect(items.length).toBe(Number(n));
    expect(items.map((p) => p.index)).toEqual(items.map((_, i) => i + 1));
    expect(new Set(items.map((p) => p.total))).toEqual(new Set([Number(n)]));
    const ids = (
      await stack.sql<{ id: number }>(`select id from channels where status in (1, 3) order by id`)
    ).map((r) => Number(r.id));
    expect(items.map((p) => p.channelId)).toEqual(ids);
    // Only the manual one (status 2) is left out by default; asking for it tests just those.
    const manualOnly = [];
    for await (const p of grpc.testAllChannels([2])) manualOnly.push(p);
    const [{ m }] = (await stack.sql<{ m: string }>(
      `select count(*) as m from channels where status = 2`,
    )) as [{ m: string }];
    expect(manualOnly.length).toBe(Number(m));
    expect(manualOnly.every((p) => p.status === 2)).toBe(true);
  });

  it('fetchUpstreamModels for a saved channel and for unsaved form values', async () => {
    const ch = await channel('test-m', { key: 'sk-models-saved' });
    await reload(stack);
    const saved = await grpc.fetchUpstreamModels({ channelId: ch.id });
    expect(saved).toContain('gpt-4o');
    expect(fake.requests.at(-1)).toMatchObject({ path: '/v1/models', key: 'sk-models-saved' });

    const unsaved = await grpc.fetchUpstreamModels({
      type: 1,
      key: 'sk-form-key\nsk-second-line',
      baseUrl: `${fake.url}/`,
      other: '',
      setting: '',
      openaiOrganization: '',
    });
    expect(unsaved).toEqual(saved);
    expect(fake.requests.at(-1)).toMatchObject({ path: '/v1/models', key: 'sk-form-key' });

    await expect(
      grpc.fetchUpstreamModels({
        type: 1,
        key: REJECTED_KEY,
        baseUrl: rejecting.url,
        other: '',
        setting: '',
        openaiOrganization: '',
      }),
    ).rejects.toBeInstanceOf(RelayError);
  });

  it('updateChannelBalance from the OpenAI billing endpoints; an unsupported type says so', async () => {
    fake.billing.hardLimitUsd = 120;
    fake.billing.totalUsageCents = 2550;
    const ch = await channel('test-m', { key: 'sk-balance' });
    const azure = await channel('test-m', { type: 3, key: 'azure-balance' });
    await reload(stack);
    const b = await grpc.updateChannelBalance(ch.id);
    expect(b).toMatchObject({ channelId: ch.id, success: true, balance: 94.5 });
    expect(b.updatedAt).toBeGreaterThan(0);
    const paths = fake.requests.map((r) => r.path);
    expect(paths).toEqual(['/v1/dashboard/billing/subscription', '/v1/dashboard/billing/usage']);
    const row = await channelRow(ch.id);
    expect(Number(row.balance)).toBe(94.5);
    expect(Number(row.balance_updated_time)).toBe(b.updatedAt);

    const z = await grpc.updateChannelBalance(azure.id);
    expect(z.success).toBe(false);
    expect(z.message).toMatch(/not supported/);
  });

  it('updateAllChannelBalances streams one result per enabled channel', async () => {
    const ids = (await stack.sql<{ id: number }>(`select id from channels where status = 1 order by id`)).map(
      (r) => Number(r.id),
    );
    const got = [];
    for await (const b of grpc.updateAllChannelBalances()) got.push(b);
    expect(got.map((b) => b.channelId)).toEqual(ids);
    expect(got.some((b) => b.success)).toBe(true);
    expect(got.some((b) => !b.success)).toBe(true);
  });

  describe('chat', () => {
    let ch: { id: number; key: string };
    beforeAll(async () => {
      ch = await channel('play-m');
      await reload(stack);
    });

    async function tokenRemain(): Promise<number> {
      await drained(stack);
      const [t] = await stack.sql<{ remain_quota: string }>(`select remain_quota from tokens where id = ?`, [
        user.tokenId,
      ]);
      return Number(t!.remain_quota);
    }

    it('chatCompletion and streamChatCompletion with a token key bill the token', async () => {
      fake.on({ key: ch.key, respond: { usage: { prompt_tokens: 7, completion_tokens: 3 } } });
      const before = await tokenRemain();
      const body = JSON.stringify({ model: 'play-m', messages: [{ role: 'user', content: 'hi' }] });
      const json = JSON.parse(await grpc.chatCompletion({ tokenKey: `sk-${user.key}` }, body, '10.1.2.3'));
      expect(json.choices[0].message.content).toBe('Hello from play-m');
      const log = await lastLog(`user_id = ? and model_name = 'play-m'`, [user.id]);
      expect(Number(log?.token_id)).toBe(user.tokenId);
      expect(Number(log?.quota)).toBe(10);
      expect(log?.ip).toBe('10.1.2.3');
      expect(before - (await tokenRemain())).toBe(10);

      let text = '';
      for await (const c of grpc.streamChatCompletion({ tokenKey: `sk-${user.key}` }, body, '')) {
        text += JSON.parse(c).choices[0]?.delta?.content ?? '';
      }
      expect(text).toBe('Hello from play-m');
      expect(fake.requests.at(-1)?.body?.stream).toBe(true);
      expect(before - (await tokenRemain())).toBe(20);
    });

    it('the service identity (playground) logs playground-<group> and leaves token quota alone', async () => {
      fake.on({ key: ch.key, respond: { usage: { prompt_tokens: 5, completion_tokens: 5 } } });
      const before = await tokenRemain();
      const [u0] = await stack.sql<{ quota: string }>(`select quota from users where id = ?`, [user.id]);
      const body = JSON.stringify({ model: 'play-m', messages: [{ role: 'user', content: 'hi' }] });
      const json = JSON.parse(await grpc.chatCompletion({ userId: user.id, group: '' }, body, ''));
      expect(json.choices[0].message.content).toBe('Hello from play-m');
      let chunks = 0;
      for await (const _ of grpc.streamChatCompletion({ userId: user.id, group: 'default' }, body, ''))
        chunks++;
      expect(chunks).toBeGreaterThan(0);
      await drained(stack);
      const logs = await stack.sql<Record<string, unknown>>(
        `select * from logs where user_id = ? and model_name = 'play-m' order by id desc limit 2`,
        [user.id],
      );
      expect(logs.map((l) => l.token_name)).toEqual(['playground-default', 'playground-default']);
      expect(logs.map((l) => Number(l.token_id))).toEqual([0, 0]);
      expect(await tokenRemain()).toBe(before);
      const [u1] = await stack.sql<{ quota: string }>(`select quota from users where id = ?`, [user.id]);
      expect(Number(u0!.quota) - Number(u1!.quota)).toBe(20);
    });

    it('a group the user may not use is PERMISSION_DENIED', async () => {
      const body = JSON.stringify({ model: 'play-m', messages: [{ role: 'user', content: 'hi' }] });
      await expect(grpc.chatCompletion({ userId: user.id, group: 'svip' }, body, '')).rejects.toMatchObject({
        code: 'permission_denied',
      });
      expect(fake.requests).toHaveLength(0);
    });

    it('a usable group without a GroupRatio is refused as on the HTTP front, not an internal error', async () => {
      await setOptions(stack, {
        UserUsableGroups: JSON.stringify({ default: 'default', vip: 'vip', unpriced: 'no ratio' }),
      });
      const body = JSON.stringify({ model: 'play-m', messages: [{ role: 'user', content: 'hi' }] });
      try {
        await expect(
          grpc.chatCompletion({ userId: user.id, group: 'unpriced' }, body, ''),
        ).rejects.toMatchObject({
          code: 'permission_denied',
          message: expect.stringMatching(/ratio/),
        });
        expect(fake.requests).toHaveLength(0);
      } finally {
        await setOptions(stack, { UserUsableGroups: JSON.stringify({ default: 'default', vip: 'vip' }) });
      }
    });
  });

  it('a wrong INTERNAL_API_SECRET is UNAUTHENTICATED (no secret at all: tests/integration/grpc-auth.test.ts)', async () => {
    const ch = await channel('test-m', { key: 'sk-unauth' });
    await reload(stack);
    const body = JSON.stringify({ model: 'play-m', messages: [{ role: 'user', content: 'hi' }] });
    for (const secret of ['wrong-secret-0123456789abcdef-0123456789', `${SECRET}x`]) {
      const c = createRelayClient(stack.relays[0]!.grpcAddress, {
        timeoutMs: 10_000,
        internalSecret: secret,
      });
      try {
        await expect(c.testChannel(ch.id, '')).rejects.toMatchObject({ code: 'unauthenticated' });
        await expect(c.invalidateAccounts({ userIds: [user.id] })).rejects.toMatchObject({
          code: 'unauthenticated',
        });
        await expect(c.chatCompletion({ userId: user.id, group: '' }, body, '')).rejects.toMatchObject({
          code: 'unauthenticated',
        });
        const it = c.updateAllChannelBalances()[Symbol.asyncIterator]();
        await expect(it.next()).rejects.toMatchObject({ code: 'unauthenticated' });
      } finally {
        c.close();
      }
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('invalidateAccounts: a raised quota applies at once, without waiting for the account TTL', async () => {
    const ch = await channel('ttl-m');
    await reload(stack);
    const poor = await seedUser(stack, { quota: 5 });
    const t = await seedToken(stack, poor.id, { unlimited: true });
    const call = () => chat('ttl-m', `sk-${t.key}`, { max_tokens: 1000 });
    const refused = await call().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
    await stack.sql(`update users set quota = 10000000 where id = ?`, [poor.id]);
    // The cached balance (TTL one hour in this stack) still refuses.
    await expect(call()).rejects.toMatchObject({ status: 403 });
    await grpc.invalidateAccounts({ userIds: [poor.id] });
    const res = await call();
    expect(res.choices[0]?.message.content).toBe('Hello from ttl-m');
    expect(keysSeen()).toEqual([ch.key]);
  });
});

describe('RelayService errors and invalidation', () => {
  it('channel operations on a missing channel are NOT_FOUND; relay refusals keep their meaning', async () => {
    await expect(grpc.testChannel(999_999, '')).rejects.toMatchObject({ code: 'not_found' });
    await expect(grpc.updateChannelBalance(999_999)).rejects.toMatchObject({ code: 'not_found' });
    await expect(grpc.fetchUpstreamModels({ channelId: 999_999 })).rejects.toMatchObject({
      code: 'not_found',
    });
    const body = (model: string) => JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] });
    // Served but unpriced (an unknown model is NOT_FOUND-like 503 instead, see relay-openai.test.ts).
    await channel('unpriced-model');
    await reload(stack);
    await expect(
      grpc.chatCompletion({ tokenKey: `sk-${user.key}` }, body('unpriced-model'), ''),
    ).rejects.toMatchObject({ code: 'permission_denied', message: expect.stringMatching(/price/) });
    await expect(grpc.chatCompletion({ tokenKey: 'sk-nope' }, body('grpc-err-m'), '')).rejects.toMatchObject({
      code: 'unauthenticated',
    });
    const ch = await channel('grpc-err-m');
    await reload(stack);
    fake.on({ key: ch.key, respond: { status: 429 } });
    await expect(
      grpc.chatCompletion({ tokenKey: `sk-${user.key}` }, body('grpc-err-m'), ''),
    ).rejects.toMatchObject({ code: 'resource_exhausted' });
  });

  it('invalidateAccounts drops a cached token at once and reloads channels on request', async () => {
    const ch = await channel('inv-token-m');
    await reload(stack);
    const t = await seedToken(stack, user.id, { remainQuota: 1_000_000 });
    await chat('inv-token-m', `sk-${t.key}`);
    await stack.sql(`update tokens set status = 2 where id = ?`, [t.id]);
    // Cached for an hour in this stack: still accepted until the console invalidates it.
    await chat('inv-token-m', `sk-${t.key}`);
    await grpc.invalidateAccounts({ tokenIds: [t.id] });
    await expect(chat('inv-token-m', `sk-${t.key}`)).rejects.toMatchObject({ status: 401 });
    expect(keysSeen()).toEqual([ch.key, ch.key]);

    // A channel written by the console becomes routable on invalidation (no periodic sync within a minute).
    await expect(chat('inv-channel-m')).rejects.toMatchObject({ status: 503 });
    const added = await seedChannel(stack, {
      baseUrl: fake.url,
      models: ['inv-channel-m'],
      key: 'sk-inv-ch',
    });
    await expect(chat('inv-channel-m')).rejects.toMatchObject({ status: 503 });
    await grpc.invalidateAccounts({ channels: true });
    await chat('inv-channel-m');
    expect(fake.requests.at(-1)?.key).toBe('sk-inv-ch');
    expect(added.id).toBeGreaterThan(0);
  });

  it('the account refresh reads every cached token and user again in bulk from PostgreSQL', async () => {
    await channel('refresh-m');
    await reload(stack);
    const other = await seedUser(stack, { quota: 1_000_000 });
    const [a, b] = [
      await seedToken(stack, user.id, { remainQuota: 1_000_000 }),
      await seedToken(stack, other.id, { remainQuota: 1_000_000 }),
    ];
    await chat('refresh-m', `sk-${a.key}`);
    await chat('refresh-m', `sk-${b.key}`);
    // Changed behind the relay's back (no invalidation): still served from the cache until a refresh.
    await stack.sql(`update tokens set status = 2 where id = ?`, [a.id]);
    await stack.sql(`update users set status = 2 where id = ?`, [other.id]);
    await chat('refresh-m', `sk-${b.key}`);
    await stack.relays[0]!.pipeline!.accounts.refresh();
    await expect(chat('refresh-m', `sk-${a.key}`)).rejects.toMatchObject({ status: 401 });
    await expect(chat('refresh-m', `sk-${b.key}`)).rejects.toMatchObject({ status: 403 });
  });
});

describe('Azure channel (type 3)', () => {
  it('the SDK reaches the deployment URL with api-version from channel.other and the api-key header', async () => {
    await seedChannel(stack, {
      type: 3,
      baseUrl: fake.url,
      models: ['gpt-4.1-mini'],
      key: 'azure-secret-key',
      other: '2024-10-21',
    });
    await reload(stack);
    fake.on({ model: 'gpt-41-mini', respond: { usage: { prompt_tokens: 11, completion_tokens: 4 } } });
    const res = await chat('gpt-4.1-mini');
    expect(res.choices[0]?.message.content).toBe('Hello from gpt-4.1-mini');
    const req = fake.requests.at(-1)!;
    expect(req.api).toBe('azure');
    expect(req.path).toBe('/openai/deployments/gpt-41-mini/chat/completions');
    expect(req.query['api-version']).toBe('2024-10-21');
    expect(req.headers['api-key']).toBe('azure-secret-key');
    expect(req.headers.authorization).toBeUndefined();
    const log = await lastLog(`user_id = ? and model_name = 'gpt-4.1-mini'`, [user.id]);
    expect(Number(log?.quota)).toBe(15);

    // Streaming, with Azure's leading prompt_filter_results chunk (no choices).
    const stream = await sdk(`sk-${user.key}`).chat.completions.create({
      model: 'gpt-4.1-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('Hello from gpt-4.1-mini');
    expect(usage?.completion_tokens).toBe(4);
  });

  it('without channel.other the default api-version is used', async () => {
    await seedChannel(stack, { type: 3, baseUrl: fake.url, models: ['gpt-4o-mini-az'], key: 'azure-2' });
    await reload(stack);
    await chat('gpt-4o-mini-az');
    expect(fake.requests.at(-1)?.query['api-version']).toBe('2024-12-01-preview');
    expect(fake.requests.at(-1)?.deployment).toBe('gpt-4o-mini-az');
  });

  it('a channel test of an Azure channel goes to its deployment with api-key', async () => {
    const { id } = await seedChannel(stack, {
      type: 3,
      baseUrl: fake.url,
      models: ['gpt-4.1-mini'],
      key: 'azure-test-key',
      other: '2025-01-01-preview',
    });
    const r = await grpc.testChannel(id, '');
    expect(r).toMatchObject({ success: true, model: 'gpt-4.1-mini' });
    expect(fake.requests.at(-1)).toMatchObject({
      api: 'azure',
      deployment: 'gpt-41-mini',
      query: { 'api-version': '2025-01-01-preview' },
      key: 'azure-test-key',
    });
  });
});
