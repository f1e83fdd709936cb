/**
 * OpenAI Realtime over WebSocket through the relay (ADR 030): a `ws` client (what Node programs and the openai
 * SDK's realtime client use) opens `/v1/realtime?model=...` on the relay, the relay opens the fake realtime
 * upstream with the channel's key, events pass both ways unchanged, and every `response.done` is billed once
 * through the store, the outbox and the Billing gRPC service: one log row per response, priced
 * (textIn + textOut·CR + audioIn·AR + audioOut·AR·ACR)·M·G with `ws: true` and the text/audio split in `other`.
 */
import { countTextTokens } from '@switchyard/relay/core/tokenize.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeRealtime, startFakeRealtime } from '../fakes/openai-realtime-upstream.ts';
import { openRealtime, refusedHandshake } from '../fakes/realtime-client.ts';
import {
  drained,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

let stack: Stack;
let fake: FakeRealtime;
let wsBase: string;
let channelId: number;

const MODEL = 'gpt-realtime';
// M 2, CR 4, AR 16, ACR 2, G 1.
const cost = (u: { textIn: number; audioIn: number; textOut: number; audioOut: number }) =>
  (u.textIn + u.textOut * 4 + u.audioIn * 16 + u.audioOut * 16 * 2) * 2;

beforeAll(async () => {
  fake = await startFakeRealtime({ keys: ['sk-upstream-key', 'azure-key'] });
  stack = await startStack({ suffix: 'relay_realtime' });
  ({ id: channelId } = await seedChannel(stack, { baseUrl: fake.url, models: [MODEL, 'unpriced-realtime'] }));
  await seedChannel(stack, {
    type: 3,
    baseUrl: fake.url,
    key: 'azure-key',
    other: '2024-10-01-preview',
    models: ['gpt-4o-realtime-preview'],
  });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ [MODEL]: 2, 'gpt-4o-realtime-preview': 2.5 }),
    CompletionRatio: JSON.stringify({ [MODEL]: 4, 'gpt-4o-realtime-preview': 4 }),
    AudioRatio: JSON.stringify({ [MODEL]: 16, 'gpt-4o-realtime-preview': 20 }),
    AudioCompletionRatio: JSON.stringify({ [MODEL]: 2, 'gpt-4o-realtime-preview': 2 }),
  });
  wsBase = `${stack.relays[0]!.httpUrl.replace('http', 'ws')}/v1/realtime`;
});
afterAll(async () => {
  await stack?.close();
  await fake?.close();
});
beforeEach(() => fake.reset());

async function account(quota = 10_000_000) {
  const user = await seedUser(stack, { quota });
  const token = await seedToken(stack, user.id, { remainQuota: quota });
  return { user, token, key: `sk-${token.key}` };
}

type LogRow = {
  request_id: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  is_stream: boolean;
  other: string;
  channel_id: number;
};
async function logsOf(userId: number): Promise<LogRow[]> {
  await drained(stack);
  return stack.sql<LogRow>(
    `select request_id, quota::int as quota, prompt_tokens::int as prompt_tokens,
       completion_tokens::int as completion_tokens, is_stream, other, channel_id::int as channel_id from logs
     where user_id = ? and type = 2 order by id`,
    [userId],
  );
}

async function quotaOf(userId: number): Promise<number> {
  await drained(stack);
  const [u] = await stack.sql<{ quota: string }>(`select quota from users where id = ?`, [userId]);
  return Number(u?.quota);
}

describe('/v1/realtime through the relay', () => {
  it('key by header: events pass both ways unchanged and two responses are billed as two exact log rows', async () => {
    const { user, key } = await account();
    const c = await openRealtime(`${wsBase}?model=${MODEL}`, {
      headers: { authorization: `Bearer ${key}` },
      protocols: ['realtime'],
    });
    expect(c.ws.protocol).toBe('realtime');
    const [created] = await c.waitFor('session.created');
    expect(created).toMatchObject({ session: { model: MODEL } });

    c.send({ type: 'session.update', session: { instructions: 'be brief' } });
    await c.waitFor('session.updated');
    const u1 = { textIn: 12, audioIn: 40, textOut: 3, audioOut: 55 };
    const u2 = { textIn: 30, audioIn: 0, cachedIn: 8, textOut: 9, audioOut: 0 };
    fake.next(
      { text: 'Hi there friend', audioChunks: 3, usage: u1 },
      { text: 'Second answer', audioChunks: 0, usage: u2 },
    );
    c.send({ type: 'response.create' });
    const [done1] = await c.waitFor('response.done');
    c.send({ type: 'response.create', response: { modalities: ['text'] } });
    const dones = await c.waitFor('response.done', 2);
    // A binary frame passes unchanged (the fake echoes binary frames).
    c.ws.send(new Uint8Array([0, 1, 2, 255]));
    for (let i = 0; i < 50 && !c.events.some((e) => 'binary' in e); i++)
      await new Promise((r) => setTimeout(r, 20));
    const binary = c.events.find((e) => 'binary' in e) as { binary: Uint8Array } | undefined;
    expect(binary && [...binary.binary]).toEqual([0, 1, 2, 255]);

    // Upstream events reach the client as the upstream sent them.
    const text = c.events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta);
    expect(text.join('')).toBe('Hi there friendSecond answer');
    expect(c.events.filter((e) => e.type === 'response.output_audio.delta')).toHaveLength(3);
    expect(done1).toMatchObject({ response: { usage: { input_tokens: 52, output_tokens: 58 } } });
    // Client events reach the upstream as the client sent them; the channel key went as a header.
    const conn = fake.connections[0]!;
    expect(conn.auth).toBe('header');
    expect(conn.beta).toBe(false);
    expect(conn.query.model).toBe(MODEL);
    expect(conn.received).toContainEqual({ type: 'session.update', session: { instructions: 'be brief' } });
    expect(conn.received).toContainEqual({ type: 'response.create', response: { modalities: ['text'] } });

    c.ws.close();
    await c.closed;
    const rows = await logsOf(user.id);
    expect(rows).toHaveLength(2);
    const ids = (dones as Array<{ response: { id: string } }>).map((d) => d.response.id);
    expect(rows.map((r) => r.request_id.split('-').slice(1).join('-'))).toEqual(ids);
    expect(new Set(rows.map((r) => r.request_id.split('-')[0])).size).toBe(1);
    expect(rows[0]).toMatchObject({
      quota: cost(u1),
      prompt_tokens: 52,
      completion_tokens: 58,
      is_stream: true,
      channel_id: channelId,
    });
    expect(rows[1]).toMatchObject({ quota: cost(u2), prompt_tokens: 30, completion_tokens: 9 });
    expect(JSON.parse(rows[0]!.other)).toMatchObject({
      ws: true,
      audio: true,
      text_input: 12,
      text_output: 3,
      audio_input: 40,
      audio_output: 55,
      model_ratio: 2,
      completion_ratio: 4,
      audio_ratio: 16,
      audio_completion_ratio: 2,
      group_ratio: 1,
    });
    expect(JSON.parse(rows[1]!.other)).toMatchObject({
      ws: true,
      text_input: 30,
      audio_input: 0,
      audio_output: 0,
    });
    expect(await quotaOf(user.id)).toBe(10_000_000 - cost(u1) - cost(u2));
  });

  it('key by subprotocol (browsers): the key item is never selected, beta clients get the beta protocol upstream', async () => {
    const { user, key } = await account();
    const c = await openRealtime(`${wsBase}?model=${MODEL}`, {
      protocols: ['realtime', `openai-insecure-api-key.${key}`, 'openai-beta.realtime-v1'],
    });
    expect(c.ws.protocol).toBe('realtime');
    await c.waitFor('session.created');
    c.send({ type: 'response.create' });
    await c.waitFor('response.done');
    expect(c.events.some((e) => e.type === 'response.text.delta')).toBe(true);
    expect(fake.connections[0]).toMatchObject({ auth: 'header', beta: true });
    c.ws.close();
    const rows = await logsOf(user.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.quota).toBe(cost({ textIn: 10, audioIn: 20, textOut: 2, audioOut: 30 }));
  });

  it('refuses before the switch, in OpenAI error envelope: bad key, unknown model, unpriced model, no model', async () => {
    const { key } = await account();
    const bad = await refusedHandshake(`${wsBase}?model=${MODEL}`, {
      headers: { authorization: 'Bearer sk-nope' },
    });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key' });
    const badProtocol = await refusedHandshake(`${wsBase}?model=${MODEL}`, {
      protocols: ['realtime', 'openai-insecure-api-key.sk-nope'],
    });
    expect(badProtocol.status).toBe(401);
    const unknown = await refusedHandshake(`${wsBase}?model=no-such-model`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(unknown.status).toBe(503);
    expect(unknown.body.error?.code).toBe('model_not_found');
    const unpriced = await refusedHandshake(`${wsBase}?model=unpriced-realtime`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(unpriced.status).toBe(403);
    expect(unpriced.body.error?.code).toBe('model_price_not_set');
    const noModel = await refusedHandshake(wsBase, { headers: { authorization: `Bearer ${key}` } });
    expect(noModel.status).toBe(400);
    const plain = await fetch(`${stack.relays[0]!.httpUrl}/v1/realtime?model=${MODEL}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(plain.status).toBe(426);
    expect(((await plain.json()) as { error: { code: string } }).error.code).toBe('websocket_required');
    // Nothing reached the upstream.
    expect(fake.connections).toHaveLength(0);
  });

  it('an upstream that refuses the channel key: the next channel serves, and with none left the client gets 502', async () => {
    await seedChannel(stack, {
      baseUrl: fake.url,
      key: 'sk-revoked',
      priority: 10,
      models: ['rt-a', 'rt-b'],
    });
    await seedChannel(stack, { baseUrl: fake.url, priority: 0, models: ['rt-a'] });
    await setOptions(stack, {
      ModelRatio: JSON.stringify({ [MODEL]: 2, 'gpt-4o-realtime-preview': 2.5, 'rt-a': 1, 'rt-b': 1 }),
      RetryTimes: '1',
    });
    const { key } = await account();
    const c = await openRealtime(`${wsBase}?model=rt-a`, { headers: { authorization: `Bearer ${key}` } });
    await c.waitFor('session.created');
    c.ws.close();
    const refused = await refusedHandshake(`${wsBase}?model=rt-b`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(refused.status).toBe(502);
    expect(refused.body.error?.message).toContain('HTTP 401');
    // The upstream's message (which quotes the channel key, masked) never reaches the client.
    expect(JSON.stringify(refused.body)).not.toContain('sk-rev');

    // With AutomaticDisableChannelEnabled, the 401 disables the channel (status 3), as on HTTP calls.
    await setOptions(stack, { AutomaticDisableChannelEnabled: 'true' });
    try {
      await refusedHandshake(`${wsBase}?model=rt-b`, { headers: { authorization: `Bearer ${key}` } });
      const [ch] = await stack.sql<{ status: number }>(
        `select status::int as status from channels where key = 'sk-revoked'`,
      );
      expect(ch?.status).toBe(3);
    } finally {
      await setOptions(stack, { AutomaticDisableChannelEnabled: 'false' });
    }
  });

  it('the upstream closing ends the client session and bills the open response from what it streamed', async () => {
    const { user, key } = await account();
    const c = await openRealtime(`${wsBase}?model=${MODEL}`, { headers: { authorization: `Bearer ${key}` } });
    await c.waitFor('session.created');
    fake.next({ text: 'cut off here', audioChunks: 1, closeWith: 4000 });
    c.send({ type: 'response.create' });
    const closed = await c.closed;
    expect(closed.code).toBe(4000);
    const rows = await logsOf(user.id);
    expect(rows).toHaveLength(1);
    const completion = await countTextTokens('cut off here', MODEL);
    expect(rows[0]).toMatchObject({
      prompt_tokens: 0,
      completion_tokens: completion,
      quota: completion * 4 * 2,
    });
    expect(JSON.parse(rows[0]!.other)).toMatchObject({ ws: true, usage_estimated: true });
    expect(await quotaOf(user.id)).toBe(10_000_000 - completion * 8);
  });

  it('the client closing mid-response: the relay cancels upstream and bills the usage the cancel reports', async () => {
    const { user, key } = await account();
    const c = await openRealtime(`${wsBase}?model=${MODEL}`, { headers: { authorization: `Bearer ${key}` } });
    await c.waitFor('session.created');
    const full = { textIn: 8, audioIn: 100, textOut: 10, audioOut: 60 };
    fake.next({ hold: true, usage: full });
    c.send({ type: 'response.create' });
    await c.waitFor('response.output_audio.delta');
    c.ws.close();
    await c.closed;
    const conn = fake.connections[0]!;
    expect((await conn.closed).code).toBe(1000);
    expect(conn.received.some((e) => (e as { type?: string }).type === 'response.cancel')).toBe(true);
    const rows = await logsOf(user.id);
    expect(rows).toHaveLength(1);
    // The fake's cancelled response reports the input and half the output.
    const sent = { textIn: 8, audioIn: 100, textOut: 5, audioOut: 30 };
    expect(rows[0]).toMatchObject({ quota: cost(sent), prompt_tokens: 108, completion_tokens: 35 });
  });

  it('ends the session when the balance cannot hold the next response, after billing the last one', async () => {
    // Hold per response: (500·16 + 500·32)·2 = 48,000. One response of 1,000 audio-out tokens costs 64,000.
    const { user, key } = await account(100_000);
    const c = await openRealtime(`${wsBase}?model=${MODEL}`, { headers: { authorization: `Bearer ${key}` } });
    await c.waitFor('session.created');
    fake.next({ audioChunks: 1, usage: { textIn: 0, audioIn: 0, textOut: 0, audioOut: 1000 } });
    c.send({ type: 'response.create' });
    await c.waitFor('response.done');
    const [err] = await c.waitFor('error');
    expect(err).toMatchObject({ error: { type: 'insufficient_user_quota' } });
    expect((await c.closed).code).toBe(4003);
    const rows = await logsOf(user.id);
    expect(rows.map((r) => r.quota)).toEqual([64_000]);
    expect(await quotaOf(user.id)).toBe(36_000);
    // A new session is refused at the handshake: 36,000 cannot hold a response.
    const again = await refusedHandshake(`${wsBase}?model=${MODEL}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(again.status).toBe(403);
  });

  it('serves an Azure channel on its realtime route with deployment= and api-version, key in api-key', async () => {
    const { user, key } = await account();
    const c = await openRealtime(`${wsBase}?model=gpt-4o-realtime-preview`, {
      headers: { authorization: `Bearer ${key}` },
    });
    await c.waitFor('session.created');
    c.send({ type: 'response.create' });
    await c.waitFor('response.done');
    c.ws.close();
    expect(fake.connections[0]).toMatchObject({
      path: '/openai/realtime',
      auth: 'api-key',
      query: { 'api-version': '2024-10-01-preview', deployment: 'gpt-4o-realtime-preview' },
    });
    const rows = await logsOf(user.id);
    // (10 + 2·4 + 20·20 + 30·20·2)·2.5
    expect(rows.map((r) => r.quota)).toEqual([(10 + 8 + 400 + 1200) * 2.5]);
  });

  it('a stopping relay cancels open responses, bills what they report, then closes the session', async () => {
    const relay = await stack.addRelay();
    const { user, key } = await account();
    const c = await openRealtime(`${relay.httpUrl.replace('http', 'ws')}/v1/realtime?model=${MODEL}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    await c.waitFor('session.created');
    fake.next({ hold: true, usage: { textIn: 6, audioIn: 0, textOut: 4, audioOut: 10 } });
    c.send({ type: 'response.create' });
    await c.waitFor('response.output_audio.delta');
    await relay.stop();
    stack.relays.splice(stack.relays.indexOf(relay), 1);
    await c.closed;
    await drained(stack);
    const rows = await stack.sql<{ quota: number }>(
      `select quota::int as quota from logs where user_id = ? and type = 2`,
      [user.id],
    );
    // Half the output was sent when the cancel came: (6 + 2·4 + 5·32)·2.
    expect(rows.map((r) => r.quota)).toEqual([cost({ textIn: 6, audioIn: 0, textOut: 2, audioOut: 5 })]);
  });

  it('the rate limit applies to the session start (429 in OpenAI envelope)', async () => {
    await setOptions(stack, {
      ModelRequestRateLimitEnabled: 'true',
      ModelRequestRateLimitDurationMinutes: '1',
      ModelRequestRateLimitCount: '1',
      ModelRequestRateLimitSuccessCount: '0',
    });
    try {
      const { key } = await account();
      const c = await openRealtime(`${wsBase}?model=${MODEL}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      await c.waitFor('session.created');
      c.send({ type: 'response.create' });
      await c.waitFor('response.done');
      const limited = await refusedHandshake(`${wsBase}?model=${MODEL}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(limited.status).toBe(429);
      expect(limited.body.error?.code).toBe('rate_limit_exceeded');
      c.ws.close();
    } finally {
      await setOptions(stack, { ModelRequestRateLimitEnabled: 'false' });
    }
  });

  it('a session with no message either way for the idle bound is closed on both sides', async () => {
    const relay = await stack.addRelay({ RELAY_UPSTREAM_TIMEOUT_MS: '400' });
    try {
      const { user, key } = await account();
      const c = await openRealtime(`${relay.httpUrl.replace('http', 'ws')}/v1/realtime?model=${MODEL}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      await c.waitFor('session.created');
      const started = Date.now();
      expect((await c.closed).code).toBe(1000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect((await fake.connections[0]!.closed).code).toBe(1000);
      expect(await logsOf(user.id)).toEqual([]);
    } finally {
      await relay.stop();
      stack.relays.splice(stack.relays.indexOf(relay), 1);
    }
  });
});
