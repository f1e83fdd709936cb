/**
 * The channel routes that need the relay, called as loaders/actions with a real relay (in-process, real gRPC) in
 * front of the fake OpenAI upstream, on a real PostgreSQL database.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testAllSettled } from '#app/domain/channels/relay-ops.server.ts';
import { createRelayClient, type RelayClient } from '#app/grpc/relay-client.server.ts';
import {
  action as fetchModelsAction,
  loader as fetchModelsLoader,
} from '#app/routes/api.channel.fetch_models._index.ts';
import { loader as fetchModelsByIdLoader } from '#app/routes/api.channel.fetch_models.$id.ts';
import { loader as testAllLoader } from '#app/routes/api.channel.test._index.ts';
import { loader as testOneLoader } from '#app/routes/api.channel.test.$id.ts';
import { loader as balanceAllLoader } from '#app/routes/api.channel.update_balance._index.ts';
import { loader as balanceOneLoader } from '#app/routes/api.channel.update_balance.$id.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../../../tests/fakes/openai-upstream.ts';
import {
  apiRequest,
  callRoute,
  consoleServices,
  envelopeOf,
  signedInUser,
  type Who,
} from '../../../tests/integration/console-harness.ts';
import {
  reload,
  type Stack,
  seedChannel,
  seedUser,
  setOptions,
  startStack,
} from '../../../tests/integration/relay-stack.ts';

const SECRET = 'relay-ops-internal-secret-0123456789abcdef';
const CHANNEL_KEY = 'sk-ops-channel-secret-0001';
const BAD_KEY = 'sk-ops-rejected-secret-0002';

let stack: Stack;
let fake: FakeOpenAI;
let relay: RelayClient;
let downRelay: RelayClient;
let services: ConsoleServices;
let admin: Who;
let plain: Who;
let channelId: number;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  stack = await startStack({ suffix: 'relay_ops', env: { INTERNAL_API_SECRET: SECRET } });
  // Channel-test log rows are written for user 1 (root).
  await seedUser(stack, { quota: 0, role: 100 });
  admin = await signedInUser(stack, { quota: 0, role: 10 });
  plain = await signedInUser(stack, { quota: 0 });
  channelId = (await seedChannel(stack, { baseUrl: fake.url, models: ['ops-m'], key: CHANNEL_KEY })).id;
  await setOptions(stack, { ModelRatio: JSON.stringify({ 'ops-m': 1 }) });
  relay = createRelayClient(stack.relays[0]!.grpcAddress, { internalSecret: SECRET, timeoutMs: 20_000 });
  // Nothing listens on port 1: the relay is down.
  downRelay = createRelayClient('127.0.0.1:1', { internalSecret: SECRET, timeoutMs: 2_000 });
  services = consoleServices(stack, relay);
}, 60_000);

afterAll(async () => {
  await testAllSettled();
  relay?.close();
  downRelay?.close();
  await stack?.close();
  await fake?.close();
});

beforeEach(() => fake.reset());

const get = (fn: (args: never) => unknown, who: Who | null, path: string, params = {}, s = services) =>
  callRoute(fn, s, apiRequest(who, path), params).then(envelopeOf);

async function audits(action: string) {
  return stack.sql<{ actor_id: number; target_id: string; after: string; ip: string }>(
    `select * from audit_entries where action = ? order by id`,
    [action],
  );
}

async function channelRow(id: number) {
  const [row] = await stack.sql<Record<string, unknown>>(`select * from channels where id = ?`, [id]);
  return row!;
}

describe('channel relay operations', () => {
  it('401 without a login and 403 for an ordinary user, on every route', async () => {
    const id = String(channelId);
    const routes: [(args: never) => unknown, string, string, unknown?][] = [
      [testAllLoader, 'GET', '/api/channel/test'],
      [testOneLoader, 'GET', `/api/channel/test/${id}?model=ops-m`],
      [balanceAllLoader, 'GET', '/api/channel/update_balance'],
      [balanceOneLoader, 'GET', `/api/channel/update_balance/${id}/`],
      [fetchModelsByIdLoader, 'GET', `/api/channel/fetch_models/${id}`],
      [fetchModelsAction, 'POST', '/api/channel/fetch_models', { type: 1, key: 'sk-x', base_url: fake.url }],
    ];
    for (const [fn, method, path, body] of routes) {
      const anon = await envelopeOf(
        await callRoute(fn, services, apiRequest(null, path, { method, body }), { id }),
      );
      expect(anon.status, path).toBe(401);
      expect(anon.body.success).toBe(false);
      const user = await envelopeOf(
        await callRoute(fn, services, apiRequest(plain, path, { method, body }), { id }),
      );
      expect(user.status, path).toBe(403);
      expect(user.body.success).toBe(false);
    }
    expect(fake.requests).toHaveLength(0);
    expect(await stack.sql(`select * from audit_entries where target_type = 'channel'`)).toEqual([]);
  });

  it('tests one channel: data is the response time in seconds, recorded on the channel and audited', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await get(testOneLoader, admin, `/api/channel/test/${channelId}?model=ops-m`, {
      id: String(channelId),
    });
    expect(res).toMatchObject({ status: 200, body: { success: true, message: '' } });
    expect(typeof res.body.data).toBe('number');
    expect(res.body.data).toBeGreaterThanOrEqual(0);
    expect(res.body.data).toBeLessThan(20);
    // new-api's client reads the seconds from `time`.
    expect((res.body as { time?: unknown }).time).toBe(res.body.data);
    expect(fake.requests.map((r) => [r.path, r.key, r.body?.model])).toEqual([
      ['/v1/chat/completions', CHANNEL_KEY, 'ops-m'],
    ]);
    expect(Number((await channelRow(channelId)).test_time)).toBeGreaterThanOrEqual(before);
    const [entry] = await audits('channel.test');
    expect(entry).toMatchObject({ actor_id: admin.id, target_id: String(channelId) });
    expect(JSON.parse(entry!.after)).toMatchObject({ model: 'ops-m', tested_model: 'ops-m', success: true });
  });

  it('a failing test answers success false with the upstream message, the time, and never the key', async () => {
    const bad = await seedChannel(stack, {
      baseUrl: fake.url,
      models: ['ops-m'],
      key: BAD_KEY,
      autoBan: false,
    });
    await reload(stack);
    fake.on({
      key: BAD_KEY,
      respond: {
        status: 400,
        error: { message: `key ${BAD_KEY} is not allowed here`, type: 'invalid_request_error' },
      },
    });
    const res = await get(testOneLoader, admin, `/api/channel/test/${bad.id}`, { id: String(bad.id) });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(false);
    expect(res.body.message).toContain('is not allowed here');
    expect(res.body.message).toContain('***');
    expect(typeof res.body.data).toBe('number');
    expect((res.body as { time?: unknown }).time).toBe(res.body.data);
    const rows = await stack.sql(`select * from audit_entries where target_id = ?`, [String(bad.id)]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(BAD_KEY);
    expect(JSON.stringify(res.body)).not.toContain(BAD_KEY);
  });

  it('an unknown channel is success false (not found), without asking the upstream', async () => {
    for (const [fn, path] of [
      [testOneLoader, '/api/channel/test/999999'],
      [balanceOneLoader, '/api/channel/update_balance/999999/'],
      [fetchModelsByIdLoader, '/api/channel/fetch_models/999999'],
    ] as const) {
      const res = await get(fn, admin, path, { id: '999999' });
      expect(res, path).toMatchObject({
        status: 200,
        body: { success: false, message: 'channel 999999 does not exist' },
      });
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('updates one balance (data: USD) and all enabled ones (data: a summary)', async () => {
    fake.billing.hardLimitUsd = 120;
    fake.billing.totalUsageCents = 2550;
    const res = await get(balanceOneLoader, admin, `/api/channel/update_balance/${channelId}/`, {
      id: String(channelId),
    });
    // new-api's client reads the balance from `balance`.
    expect(res).toMatchObject({ status: 200, body: { success: true, data: 94.5, balance: 94.5 } });
    expect(Number((await channelRow(channelId)).balance)).toBe(94.5);
    expect(JSON.parse((await audits('channel.update_balance'))[0]!.after)).toMatchObject({
      success: true,
      balance: 94.5,
    });

    const azure = await seedChannel(stack, {
      baseUrl: fake.url,
      models: ['ops-m'],
      type: 3,
      key: 'azure-ops',
    });
    await reload(stack);
    const unsupported = await get(balanceOneLoader, admin, `/api/channel/update_balance/${azure.id}/`, {
      id: String(azure.id),
    });
    expect(unsupported.body).toMatchObject({
      success: false,
      message: expect.stringMatching(/not supported/),
    });

    const enabled = await stack.sql<{ id: number }>(`select id from channels where status = 1`);
    const all = await get(balanceAllLoader, admin, '/api/channel/update_balance');
    expect(all.body.success).toBe(true);
    expect(all.body.data.total).toBe(enabled.length);
    expect(all.body.data.succeeded).toBeGreaterThanOrEqual(1);
    expect(all.body.data.failed).toContainEqual({
      id: azure.id,
      message: expect.stringMatching(/not supported/),
    });
    expect(await audits('channel.update_balance_all')).toHaveLength(1);
  });

  it('fetches the models of a saved channel and of unsaved form values; the form key is never recorded', async () => {
    const saved = await get(fetchModelsByIdLoader, admin, `/api/channel/fetch_models/${channelId}`, {
      id: String(channelId),
    });
    expect(saved.body.success).toBe(true);
    expect(saved.body.data).toContain('gpt-4o');
    expect(fake.requests.at(-1)).toMatchObject({ path: '/v1/models', key: CHANNEL_KEY });

    const formKey = 'sk-form-only-secret-0003';
    const form = await envelopeOf(
      await callRoute(
        fetchModelsAction,
        services,
        apiRequest(admin, '/api/channel/fetch_models', {
          method: 'POST',
          body: { type: 1, key: formKey, base_url: `${fake.url}/`, other: '', setting: '' },
        }),
      ),
    );
    expect(form.body).toMatchObject({ success: true, data: saved.body.data });
    expect(fake.requests.at(-1)).toMatchObject({ path: '/v1/models', key: formKey });

    const missing = await envelopeOf(
      await callRoute(
        fetchModelsAction,
        services,
        apiRequest(admin, '/api/channel/fetch_models', {
          method: 'POST',
          body: { type: 1, base_url: fake.url },
        }),
      ),
    );
    expect(missing).toMatchObject({
      status: 200,
      body: { success: false, data: { fieldErrors: { key: [] } } },
    });

    const rejected = await envelopeOf(
      await callRoute(
        fetchModelsAction,
        services,
        apiRequest(admin, '/api/channel/fetch_models', {
          method: 'POST',
          body: { type: 1, key: formKey, base_url: 'http://127.0.0.1:1' },
        }),
      ),
    );
    expect(rejected.body.success).toBe(false);
    expect(rejected.body.message).toMatch(/^the upstream could not be reached/);

    const rows = await stack.sql(`select * from audit_entries where action = 'channel.fetch_models'`);
    expect(rows).toHaveLength(3);
    expect(JSON.stringify(rows)).not.toContain(formKey);
    expect(JSON.stringify(rows)).not.toContain(CHANNEL_KEY);

    const wrongMethod = await callRoute(
      fetchModelsLoader,
      services,
      apiRequest(admin, '/api/channel/fetch_models'),
    );
    expect(wrongMethod.status).toBe(405);
  });

  it('test all starts in the background, refuses a second run meanwhile, and tests every channel', async () => {
    fake.on({ respond: { delayMs: 300 } });
    const started = Math.floor(Date.now() / 1000);
    const res = await get(testAllLoader, admin, '/api/channel/test');
    expect(res.body).toMatchObject({ success: true, message: expect.stringMatching(/started/) });
    const again = await get(testAllLoader, admin, '/api/channel/test');
    expect(again.body).toMatchObject({ success: false, message: expect.stringMatching(/already running/) });
    await testAllSettled();
    const channels = await stack.sql<{ id: number; test_time: string; type: number }>(
      `select id, test_time, type from channels where status in (1, 3)`,
    );
    expect(channels.length).toBeGreaterThanOrEqual(2);
    for (const c of channels) expect(Number(c.test_time), `channel ${c.id}`).toBeGreaterThanOrEqual(started);
    const after = await get(testAllLoader, admin, '/api/channel/test');
    expect(after.body.success).toBe(true);
    await testAllSettled();
  });

  it('relay down or not configured: success false with a clear message on every route, never a 500', async () => {
    const down = consoleServices(stack, downRelay);
    const none = consoleServices(stack, null);
    const id = String(channelId);
    const routes: [(args: never) => unknown, string, string, unknown?][] = [
      [testAllLoader, 'GET', '/api/channel/test'],
      [testOneLoader, 'GET', `/api/channel/test/${id}`],
      [balanceAllLoader, 'GET', '/api/channel/update_balance'],
      [balanceOneLoader, 'GET', `/api/channel/update_balance/${id}/`],
      [fetchModelsByIdLoader, 'GET', `/api/channel/fetch_models/${id}`],
      [fetchModelsAction, 'POST', '/api/channel/fetch_models', { type: 1, key: 'sk-x', base_url: fake.url }],
    ];
    for (const [fn, method, path, body] of routes) {
      const res = await envelopeOf(
        await callRoute(fn, down, apiRequest(admin, path, { method, body }), { id }),
      );
      expect(res, path).toMatchObject({
        status: 200,
        body: { success: false, message: 'The relay service is unavailable, try again later' },
      });
      const off = await envelopeOf(
        await callRoute(fn, none, apiRequest(admin, path, { method, body }), { id }),
      );
      expect(off, path).toMatchObject({
        status: 200,
        body: { success: false, message: 'The relay service is not configured' },
      });
    }
    expect(fake.requests).toHaveLength(0);
  });
});
