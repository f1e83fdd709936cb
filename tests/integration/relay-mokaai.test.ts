/**
 * The official openai SDK against the relay in front of a MokaAI M3E channel (type 44), an embeddings-only
 * OpenAI-compatible server: embeddings billed on the usage it reports (counted locally when it reports none), its
 * errors in OpenAI's envelope, and a chat call on an M3E-only model answered with a clear error, never a crash
 * and never a request upstream.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRelayClient } from '#app/grpc/relay-client.server.ts';
import { type FakeM3e, startFakeM3e } from '../fakes/m3e-upstream.ts';
import {
  drained,
  lastLogOf,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

const SECRET = 'relay-internal-secret-0123456789abcdef';
let stack: Stack;
let fake: FakeM3e;
let client: OpenAI;
let userId: number;
let channelId: number;

beforeAll(async () => {
  fake = await startFakeM3e({ keys: ['m3e-channel-key'] });
  stack = await startStack({ suffix: 'relay_mokaai', env: { INTERNAL_API_SECRET: SECRET } });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  const token = await seedToken(stack, userId, { unlimited: true });
  channelId = (
    await seedChannel(stack, {
      type: 44,
      baseUrl: fake.url,
      key: 'm3e-channel-key',
      models: ['m3e-base', 'm3e-large'],
    })
  ).id;
  await setOptions(stack, { ModelRatio: JSON.stringify({ 'm3e-base': 2, 'm3e-large': 3 }) });
  client = new OpenAI({
    baseURL: `${stack.relays[0]!.httpUrl}/v1`,
    apiKey: `sk-${token.key}`,
    maxRetries: 0,
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
});

beforeEach(async () => {
  fake.reset();
  await drained(stack);
});

describe('openai SDK through the relay to a MokaAI M3E channel', () => {
  it('embeddings reach {base}/embeddings as {model, input[]} and are billed on the reported tokens', async () => {
    const res = await client.embeddings.create({
      model: 'm3e-base',
      input: 'hello world again',
      encoding_format: 'float',
    });
    expect(res.data[0]?.embedding).toEqual([17 / 256, 3 / 256, 0.125]);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/embeddings');
    expect(sent.headers.authorization).toBe('Bearer m3e-channel-key');
    expect(sent.body).toEqual({ input: ['hello world again'], model: 'm3e-base' });
    const log = await lastLogOf(stack, userId, 'm3e-base');
    expect(Number(log.prompt_tokens)).toBe(3);
    expect(Number(log.completion_tokens)).toBe(0);
    expect(Number(log.quota)).toBe(6);
    expect(Number(log.channel_id)).toBe(channelId);
  });

  it('the SDK default (base64) works too: the vector decodes to what the server sent', async () => {
    const res = await client.embeddings.create({ model: 'm3e-large', input: ['a b', 'c'] });
    expect(res.data.map((d) => d.embedding)).toEqual([
      [3 / 256, 2 / 256, 0.125],
      [1 / 256, 1 / 256, 0.125],
    ]);
    expect(Number((await lastLogOf(stack, userId, 'm3e-large')).quota)).toBe(9);
  });

  it("the server's error reaches the client in OpenAI's envelope", async () => {
    fake.failNext(400, 'input is too long for m3e-base');
    const err = await client.embeddings.create({ model: 'm3e-base', input: 'x' }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/input is too long/);
  });

  it('a chat call on an M3E-only model is a clear error and nothing is sent upstream', async () => {
    const err = await client.chat.completions
      .create({ model: 'm3e-base', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'unsupported_endpoint',
      message: 'no channel for model m3e-base in group default can serve /v1/chat/completions requests',
    });
    expect(fake.requests).toHaveLength(0);
    // Streaming and the Claude-format route are refused the same way.
    const streamed = await client.chat.completions
      .create({ model: 'm3e-base', stream: true, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(streamed.status).toBe(400);
    expect(fake.requests).toHaveLength(0);
  });

  it('the channel test sends embeddings and succeeds', async () => {
    const grpc = createRelayClient(stack.relays[0]!.grpcAddress, {
      internalSecret: SECRET,
      timeoutMs: 20_000,
    });
    try {
      expect(await grpc.testChannel(channelId, '')).toMatchObject({ success: true, model: 'm3e-base' });
      expect(fake.requests.at(-1)).toMatchObject({
        path: '/v1/embeddings',
        body: { input: ['hello world'] },
      });
    } finally {
      grpc.close();
    }
  });
});
