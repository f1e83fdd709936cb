/**
 * POST /pg/chat/completions in the console, against a real relay (in-process, real gRPC) in front of the fake
 * OpenAI upstream, with Billing writing the log rows to a real PostgreSQL database. Also: a redeem tells the relay,
 * so a user refused for lack of quota can call again at once.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRelayClient, type RelayClient } from '#app/grpc/relay-client.server.ts';
import { action as topupAction } from '#app/routes/api.user.topup.ts';
import { action as pgAction, loader as pgLoader } from '#app/routes/pg.chat.completions.ts';
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
  drained,
  type Stack,
  seedChannel,
  setOptions,
  startStack,
} from '../../../tests/integration/relay-stack.ts';

const SECRET = 'playground-internal-secret-0123456789abcdef';

let stack: Stack;
let fake: FakeOpenAI;
let relay: RelayClient;
let services: ConsoleServices;
let user: Who;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  // A long account TTL: only an invalidation makes the relay see a console change before the test ends.
  stack = await startStack({
    suffix: 'playground',
    env: { INTERNAL_API_SECRET: SECRET, RELAY_ACCOUNT_TTL_MS: '3600000' },
  });
  await seedChannel(stack, { baseUrl: fake.url, models: ['pg-m'], groups: ['default', 'vip'] });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ 'pg-m': 1, 'pg-orphan': 1 }),
    GroupRatio: JSON.stringify({ default: 1, vip: 1, svip: 1 }),
    UserUsableGroups: JSON.stringify({ default: 'Default', vip: 'VIP' }),
  });
  relay = createRelayClient(stack.relays[0]!.grpcAddress, { internalSecret: SECRET, timeoutMs: 20_000 });
  services = consoleServices(stack, relay);
  user = await signedInUser(stack, { quota: 10_000_000, accessToken: true });
}, 60_000);

afterAll(async () => {
  relay?.close();
  await stack?.close();
  await fake?.close();
});

beforeEach(() => fake.reset());

const BODY = {
  model: 'pg-m',
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'hi there' },
  ],
  group: 'default',
  max_tokens: 0,
  temperature: 0.5,
};

function pg(
  who: Who | null,
  body: unknown,
  opts: { via?: 'session' | 'access_token'; s?: ConsoleServices } = {},
) {
  return callRoute(
    pgAction,
    opts.s ?? services,
    apiRequest(who, '/pg/chat/completions', { method: 'POST', body, via: opts.via }),
  );
}

async function errorOf(res: Response) {
  expect(res.headers.get('Content-Type')).toMatch(/application\/json/);
  return { status: res.status, error: ((await res.json()) as { error: Record<string, unknown> }).error };
}

async function logsOf(userId: number) {
  await drained(stack);
  return stack.sql<{ token_name: string; token_id: number; model_name: string; quota: number }>(
    `select * from logs where user_id = ? and type = 2 order by id`,
    [userId],
  );
}

describe('POST /pg/chat/completions', () => {
  it('streams the relay chunks as an event stream ending in [DONE] and logs playground-<group>', async () => {
    const res = await pg(user, { ...BODY, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toMatch(/^text\/event-stream/);
    const text = await res.text();
    const events = text.split('\n\n').filter(Boolean);
    expect(events.every((e) => e.startsWith('data: '))).toBe(true);
    expect(events.at(-1)).toBe('data: [DONE]');
    const content = events
      .slice(0, -1)
      .map((e) => JSON.parse(e.slice(6)).choices?.[0]?.delta?.content ?? '')
      .join('');
    expect(content).toBe('Hello from pg-m');
    // What reached the upstream: stream on, the temperature, no group and no max_tokens (0 = no limit).
    const sent = fake.requests.at(-1)?.body ?? {};
    expect(sent).toMatchObject({ model: 'pg-m', stream: true, temperature: 0.5, messages: BODY.messages });
    expect(sent).not.toHaveProperty('group');
    expect(sent).not.toHaveProperty('max_tokens');
    const logs = await logsOf(user.id);
    expect(logs.map((l) => [l.token_name, Number(l.token_id), l.model_name])).toEqual([
      ['playground-default', 0, 'pg-m'],
    ]);
  });

  it('answers the completion JSON when stream is false, in a usable group other than the own one', async () => {
    const res = await pg(user, { ...BODY, stream: false, group: 'vip', max_tokens: 50 });
    expect(res.status).toBe(200);
    const json = (await res.json()) as { choices: { message: { content: string } }[]; usage: unknown };
    expect(json.choices[0]?.message.content).toBe('Hello from pg-m');
    expect(json.usage).toBeTruthy();
    expect(fake.requests.at(-1)?.body).toMatchObject({ max_tokens: 50 });
    expect((await logsOf(user.id)).at(-1)?.token_name).toBe('playground-vip');
  });

  it('refuses an access-token caller, a missing login, and a group the user may not use', async () => {
    const viaToken = await errorOf(await pg(user, BODY, { via: 'access_token' }));
    expect(viaToken).toMatchObject({ status: 403, error: { code: 'access_token_not_supported' } });
    const anon = await errorOf(await pg(null, BODY));
    expect(anon.status).toBe(401);
    expect(anon.error.message).toEqual(expect.any(String));
    const svip = await errorOf(await pg(user, { ...BODY, group: 'svip' }));
    expect(svip).toMatchObject({
      status: 403,
      error: { message: 'group svip is not usable by this user', type: 'invalid_request_error' },
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('rejects a malformed body with 400 and GET with 405', async () => {
    for (const body of [
      { ...BODY, messages: [] },
      { ...BODY, model: '' },
      { ...BODY, temperature: 'hot' },
    ]) {
      const res = await errorOf(await pg(user, body));
      expect(res).toMatchObject({ status: 400, error: { type: 'invalid_request_error' } });
    }
    const get = await callRoute(pgLoader, services, apiRequest(user, '/pg/chat/completions'));
    expect(get.status).toBe(405);
    expect(fake.requests).toHaveLength(0);
  });

  it('relays the relay refusal (unknown model) with its status, and a down relay as 503', async () => {
    const unknown = await errorOf(await pg(user, { ...BODY, model: 'no-such-model' }));
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(unknown.status).toBeLessThan(600);
    expect(unknown.error.message).toMatch(/no-such-model/);

    const down = createRelayClient('127.0.0.1:1', { timeoutMs: 2_000, internalSecret: SECRET });
    try {
      for (const stream of [true, false]) {
        const res = await errorOf(await pg(user, { ...BODY, stream }, { s: consoleServices(stack, down) }));
        expect(res).toMatchObject({
          status: 503,
          error: { message: 'The relay service is unavailable, try again later', type: 'server_error' },
        });
      }
    } finally {
      down.close();
    }
  });

  it('answers a model without a channel in the group as an error, streamed or not', async () => {
    // The built product has two copies of the relay client module (the Remix bundle's and server/console.ts's):
    // the services' client throws RelayErrors of the other copy. Made here with a second copy of the module.
    vi.resetModules();
    const copy = await import('#app/grpc/relay-client.server.ts');
    const other = copy.createRelayClient(stack.relays[0]!.grpcAddress, {
      internalSecret: SECRET,
      timeoutMs: 20_000,
    });
    try {
      for (const stream of [false, true]) {
        const res = await pg(
          user,
          { ...BODY, model: 'pg-orphan', stream },
          { s: consoleServices(stack, other) },
        );
        const got = await errorOf(res);
        expect(got.status).toBe(502);
        expect(got.error).toMatchObject({
          message: 'no available channel for model pg-orphan in group default',
          type: 'server_error',
        });
      }
    } finally {
      other.close();
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('answers an unexpected failure of the relay client as a JSON 500, streamed or not', async () => {
    const broken = {
      address: 'x',
      chatCompletion: async () => {
        throw new TypeError('boom');
      },
      streamChatCompletion: () => ({
        [Symbol.asyncIterator]: () => ({
          next: async () => {
            throw new TypeError('boom');
          },
        }),
      }),
    } as unknown as RelayClient;
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      for (const stream of [false, true]) {
        const res = await errorOf(await pg(user, { ...BODY, stream }, { s: consoleServices(stack, broken) }));
        expect(res).toMatchObject({
          status: 500,
          error: { message: 'internal error', type: 'server_error' },
        });
      }
      expect(quiet).toHaveBeenCalledTimes(2);
    } finally {
      quiet.mockRestore();
    }
  });

  it('a redeem invalidates the relay cache: a user refused for lack of quota can call at once', async () => {
    const poor = await signedInUser(stack, { quota: 0 });
    const refused = await errorOf(await pg(poor, BODY));
    expect(refused.status).toBe(403);
    // Changing the database alone does not reach the relay (its cached balance is still 0) ...
    await stack.sql(`update users set quota = 1000000 where id = ?`, [poor.id]);
    expect((await pg(poor, BODY)).status).toBe(403);
    await stack.sql(`update users set quota = 0 where id = ?`, [poor.id]);
    // ... redeeming through the console does.
    const key = crypto.randomUUID().replaceAll('-', '');
    await stack.sql(
      `insert into redemptions (key, name, quota, status, created_time) values (?, 'pg', 2000000, 1, 0)`,
      [key],
    );
    const redeemed = await envelopeOf(
      await callRoute(
        topupAction,
        services,
        apiRequest(poor, '/api/user/topup', { method: 'POST', body: { key } }),
      ),
    );
    expect(redeemed.body).toMatchObject({ success: true, data: 2_000_000 });
    const res = await pg(poor, BODY);
    expect(res.status).toBe(200);
    expect(
      ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content,
    ).toBe('Hello from pg-m');
  });
});
