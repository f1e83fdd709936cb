/**
 * The official `openai` SDK through the relay to Xunfei Spark channels (type 18) in front of the fake Spark
 * WebSocket upstream: the signed URL, the version from `other` or the model suffix, non-stream and stream billed
 * from Spark's usage, error frames and refused handshakes reaching the client in OpenAI's envelope.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayClient, type RelayClient } from '#app/grpc/relay-client.server.ts';
import { type FakeSpark, startFakeSpark } from '../fakes/xunfei-upstream.ts';
import {
  lastLogOf,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

let stack: Stack;
let fake: FakeSpark;
let client: OpenAI;
let userId: number;
let clockSkewMs = 0;
let grpc: RelayClient;
let goodChannel: number;
let badSigChannel: number;
const SECRET = 'relay-xunfei-internal-secret-0123456789abcdef';

const MODEL_RATIO = 0.5;
const COMPLETION_RATIO = 2;
const quota = (p: number, c: number) => Math.round((p + c * COMPLETION_RATIO) * MODEL_RATIO);

beforeAll(async () => {
  fake = await startFakeSpark({
    accounts: [{ appId: 'app1', apiSecret: 'secret1', apiKey: 'key1' }],
    now: () => Date.now() + clockSkewMs,
  });
  stack = await startStack({ suffix: 'relay_xunfei', env: { INTERNAL_API_SECRET: SECRET } });
  // The channel-test log is written for user 1 (root): the first user of this fresh database.
  await seedUser(stack, { quota: 1_000_000, role: 100 });
  const user = await seedUser(stack, { quota: 10_000_000 });
  userId = user.id;
  const token = await seedToken(stack, userId, { remainQuota: 5_000_000 });
  goodChannel = (
    await seedChannel(stack, {
      type: 18,
      key: 'app1|secret1|key1',
      baseUrl: fake.url,
      other: 'v3.5',
      models: ['SparkDesk', 'SparkDesk-v4.0', 'spark-lite'],
      modelMapping: { 'spark-lite': 'SparkDesk-v1.1' },
    })
  ).id;
  badSigChannel = (
    await seedChannel(stack, {
      type: 18,
      key: 'app1|wrong-secret|key1',
      baseUrl: fake.url,
      models: ['spark-badsig'],
      autoBan: false,
    })
  ).id;
  await seedChannel(stack, { type: 18, key: 'not-a-spark-key', baseUrl: fake.url, models: ['spark-badkey'] });
  const models = ['SparkDesk', 'SparkDesk-v4.0', 'spark-lite', 'spark-badsig', 'spark-badkey'];
  await setOptions(stack, {
    ModelRatio: JSON.stringify(Object.fromEntries(models.map((m) => [m, MODEL_RATIO]))),
    CompletionRatio: JSON.stringify(Object.fromEntries(models.map((m) => [m, COMPLETION_RATIO]))),
  });
  client = new OpenAI({
    baseURL: `${stack.relays[0]!.httpUrl}/v1`,
    apiKey: `sk-${token.key}`,
    maxRetries: 0,
  });
  grpc = createRelayClient(stack.relays[0]!.grpcAddress, { internalSecret: SECRET, timeoutMs: 20_000 });
}, 60_000);

afterAll(async () => {
  grpc?.close();
  await stack?.close();
  await fake?.close();
});

const lastLog = (model: string) => lastLogOf(stack, userId, model);
/**
 * A stream's row: the client has [DONE] as soon as Spark's last frame came, and the relay settles once the
 * socket has closed after it, a moment later.
 */
async function streamLog(model: string, after: unknown): Promise<Record<string, unknown>> {
  let row: Record<string, unknown> | null = null;
  await expect
    .poll(async () => {
      row = await lastLog(model).catch(() => null);
      return row !== null && row.id !== after;
    })
    .toBe(true);
  return row!;
}

describe('openai SDK through the relay to Xunfei Spark', () => {
  it('non-stream: signed handshake, version from other (v3.5 → generalv3.5), all frames, billed by Spark usage', async () => {
    fake.reset();
    fake.on({
      respond: { texts: ['你好，', '我是', '星火。'], usage: { prompt_tokens: 120, completion_tokens: 30 } },
      times: 1,
    });
    const res = await client.chat.completions.create({
      model: 'SparkDesk',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello' },
      ],
      temperature: 0.5,
      max_tokens: 256,
    });
    expect(res.choices[0]?.message.content).toBe('你好，我是星火。');
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v3.5/chat');
    expect(Object.keys(sent.query)).toEqual(['authorization', 'date', 'host']);
    expect(sent.frame).toEqual({
      header: { app_id: 'app1' },
      parameter: { chat: { domain: 'generalv3.5', temperature: 0.5, max_tokens: 256 } },
      payload: {
        message: {
          text: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'hello' },
          ],
        },
      },
    });
    const log = await lastLog('SparkDesk');
    expect(Number(log.prompt_tokens)).toBe(120);
    expect(Number(log.completion_tokens)).toBe(30);
    expect(Number(log.quota)).toBe(quota(120, 30));
    expect(Number(log.is_stream)).toBe(0);
  });

  it('stream: version from the model suffix (v4.0 → 4.0Ultra), deltas as they come, usage chunk, billed exactly', async () => {
    fake.reset();
    fake.on({
      respond: { texts: ['One ', 'two ', 'three'], usage: { prompt_tokens: 40, completion_tokens: 3 } },
      times: 1,
    });
    const stream = await client.chat.completions.create({
      model: 'SparkDesk-v4.0',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'count' }],
    });
    const deltas: string[] = [];
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const c of stream) {
      const d = c.choices[0]?.delta.content;
      if (d) deltas.push(d);
      if (c.choices[0]?.finish_reason) finish = c.choices[0].finish_reason;
      if (c.usage) usage = c.usage;
    }
    expect(deltas).toEqual(['One ', 'two ', 'three']);
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 3, total_tokens: 43 });
    expect(fake.requests.at(-1)).toMatchObject({
      path: '/v4.0/chat',
      frame: { parameter: { chat: { domain: '4.0Ultra' } } },
    });
    const log = await streamLog('SparkDesk-v4.0', null);
    expect(Number(log.prompt_tokens)).toBe(40);
    expect(Number(log.completion_tokens)).toBe(3);
    expect(Number(log.quota)).toBe(quota(40, 3));
    expect(Number(log.is_stream)).toBe(1);
  });

  it('a mapped model: the system message of Lite becomes a user turn; tool calls come back as tool_calls', async () => {
    fake.reset();
    const res = await client.chat.completions.create({
      model: 'spark-lite',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'weather in Hefei?' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            parameters: { type: 'object', properties: { location: { type: 'string' } } },
          },
        },
      ],
    });
    expect(res.choices[0]?.finish_reason).toBe('tool_calls');
    expect(res.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      type: 'function',
      function: { name: 'get_weather', arguments: '{"location":"Hefei"}' },
    });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1.1/chat');
    expect(sent.frame).toMatchObject({
      parameter: { chat: { domain: 'lite' } },
      payload: {
        message: {
          text: [
            { role: 'user', content: 'Be brief.' },
            { role: 'assistant', content: 'Okay' },
            { role: 'user', content: 'weather in Hefei?' },
          ],
        },
        functions: { text: [{ name: 'get_weather' }] },
      },
    });
    // The fake's usage: prompt = characters of the messages (9 + 4 + 17), completion = 3 frames.
    const log = await lastLog('spark-lite');
    expect(Number(log.prompt_tokens)).toBe(30);
    expect(Number(log.quota)).toBe(quota(30, 3));
  });

  it('an error frame (header.code ≠ 0): non-stream gets the OpenAI error envelope, nothing billed', async () => {
    fake.reset();
    fake.on({ respond: { error: { code: 10013, message: 'input content audit failed' } }, times: 1 });
    const before = await lastLog('SparkDesk').catch(() => null);
    const err = await client.chat.completions
      .create({ model: 'SparkDesk', messages: [{ role: 'user', content: 'hello' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.status).toBe(400);
    expect(e.message).toContain('input content audit failed (code 10013');
    expect(e.code).toBe('10013');
    const after = await lastLog('SparkDesk');
    expect(after.id).toBe(before?.id);
  });

  it('an error frame mid-stream reaches the client as an error the SDK throws', async () => {
    fake.reset();
    fake.on({ respond: { error: { code: 11202, message: 'qps limit' }, errorAfter: 1 }, times: 1 });
    const stream = await client.chat.completions.create({
      model: 'SparkDesk',
      stream: true,
      messages: [{ role: 'user', content: 'hello' }],
    });
    const deltas: string[] = [];
    const err = await (async () => {
      for await (const c of stream) {
        const d = c.choices[0]?.delta.content;
        if (d) deltas.push(d);
      }
    })().catch((e: unknown) => e);
    expect(deltas).toEqual(['Hello ']);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toContain('qps limit (code 11202');
  });

  it('a socket dropped mid-stream ends with an error the client sees; billed for what came', async () => {
    fake.reset();
    fake.on({ respond: { dropAfter: 2 }, times: 1 });
    const before = (await lastLog('SparkDesk')).id;
    const stream = await client.chat.completions.create({
      model: 'SparkDesk',
      stream: true,
      messages: [{ role: 'user', content: 'hello' }],
    });
    const err = await (async () => {
      for await (const _ of stream) {
        // read on
      }
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toContain('closed the connection before the answer ended');
    const log = await streamLog('SparkDesk', before);
    expect(Number(log.is_stream)).toBe(1);
    expect(Number(log.completion_tokens)).toBeGreaterThan(0);
  });

  it('a wrong APISecret is refused at the handshake (401) and reaches the client as 401; a stale date as 403', async () => {
    fake.reset();
    const err = await client.chat.completions
      .create({ model: 'spark-badsig', messages: [{ role: 'user', content: 'hello' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(fake.refusals.map((r) => [r.status, r.message])).toContainEqual([
      401,
      'HMAC signature does not match',
    ]);
    // The channel key never reaches the client.
    expect(JSON.stringify((err as InstanceType<typeof OpenAI.APIError>).error)).not.toContain('wrong-secret');

    fake.reset();
    clockSkewMs = 400_000;
    try {
      const stale = await client.chat.completions
        .create({ model: 'SparkDesk', messages: [{ role: 'user', content: 'hello' }] })
        .catch((e: unknown) => e);
      expect(stale).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect((stale as Error).message).toContain('a valid date or x-date header is required');
    } finally {
      clockSkewMs = 0;
    }
  });

  it('a channel key that is not APPID|APISecret|APIKey is a clear error, never a crash', async () => {
    const err = await client.chat.completions
      .create({ model: 'spark-badkey', messages: [{ role: 'user', content: 'hello' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toContain('must be APPID|APISecret|APIKey');
    expect((err as Error).message).not.toContain('not-a-spark-key');
  });

  it("the console's channel test reaches Spark over the WebSocket: usage means success; a bad signature says so", async () => {
    fake.reset();
    const ok = await grpc.testChannel(goodChannel, 'SparkDesk');
    expect(ok).toMatchObject({ success: true, model: 'SparkDesk' });
    expect(fake.requests.at(-1)?.path).toBe('/v3.5/chat');
    const bad = await grpc.testChannel(badSigChannel, '');
    expect(bad).toMatchObject({ success: false, message: 'status 401: HMAC signature does not match' });
  });
});
