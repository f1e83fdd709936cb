/**
 * The official `openai` SDK against the relay in front of the fake Baidu Wenxin upstream (channel type 15): the
 * `APIKey|SecretKey` key exchanged once for an access token that core caches and renews after Baidu drops it,
 * chat non-stream and stream, embeddings, billed exactly from Wenxin's usage; Wenxin's HTTP-200 error_code and a
 * broken key reach the client in OpenAI's error envelope.
 */
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeBaidu, startFakeBaidu } from '../fakes/baidu-upstream.ts';
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

let stack: Stack;
let fake: FakeBaidu;
let client: OpenAI;
let userId: number;

beforeAll(async () => {
  fake = await startFakeBaidu({ keys: [['ak-relay', 'sk-relay']] });
  stack = await startStack({ suffix: 'relay_baidu' });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  const token = await seedToken(stack, userId, { unlimited: true });
  await seedChannel(stack, {
    type: 15,
    baseUrl: fake.url,
    key: 'ak-relay|sk-relay',
    models: ['ERNIE-4.0-8K', 'ERNIE-Speed-8K', 'Embedding-V1'],
    autoBan: false,
  });
  await seedChannel(stack, {
    type: 15,
    baseUrl: fake.url,
    key: 'no-pipe-in-this-key',
    models: ['ERNIE-Tiny-8K'],
  });
  await seedChannel(stack, {
    type: 15,
    baseUrl: fake.url,
    key: 'ak-relay|sk-wrong',
    models: ['ERNIE-Lite-8K'],
  });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({
      'ERNIE-4.0-8K': 2,
      'ERNIE-Speed-8K': 0.5,
      'Embedding-V1': 0.25,
      'ERNIE-Tiny-8K': 1,
      'ERNIE-Lite-8K': 1,
    }),
    CompletionRatio: JSON.stringify({ 'ERNIE-4.0-8K': 3, 'ERNIE-Speed-8K': 2 }),
  });
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

const lastLog = (model: string) => lastLogOf(stack, userId, model);

describe('openai SDK → relay → Baidu Wenxin', () => {
  it('chat: one token exchange, system lifted, answer and usage back, billed (P + C·CR)·MR', async () => {
    const res = await client.chat.completions.create({
      model: 'ERNIE-4.0-8K',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello there' },
      ],
      temperature: 0.4,
      max_tokens: 100,
    });
    expect(res.choices[0]?.message.content).toBe('Hello from completions_pro');
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });
    expect(res.model).toBe('ERNIE-4.0-8K');

    const chat = fake.requests.at(-1)!;
    expect(chat.path).toBe('/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions_pro');
    expect(chat.query.access_token).toMatch(/^24\.fake/);
    expect(chat.body).toEqual({
      system: 'be brief',
      messages: [{ role: 'user', content: 'hello there' }],
      stream: false,
      temperature: 0.4,
      max_output_tokens: 100,
    });
    const log = await lastLog('ERNIE-4.0-8K');
    // (4 + 3·3)·2 = 26
    expect(Number(log.quota)).toBe(26);
    expect(Number(log.prompt_tokens)).toBe(4);
    expect(Number(log.completion_tokens)).toBe(3);

    // The token is cached: a second call exchanges nothing.
    await client.chat.completions.create({
      model: 'ERNIE-4.0-8K',
      messages: [{ role: 'user', content: 'again' }],
    });
    expect(fake.tokensIssued()).toBe(1);
    expect(fake.requests.filter((r) => r.path === '/oauth/2.0/token')).toHaveLength(1);
  });

  it('stream: chunks, the finish and the usage chunk; billed from the last frame’s usage', async () => {
    fake.on({ endpoint: 'ernie_speed', respond: { usage: { prompt_tokens: 40, completion_tokens: 6 } } });
    const stream = await client.chat.completions.create({
      model: 'ERNIE-Speed-8K',
      messages: [{ role: 'user', content: 'stream please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish ??= chunk.choices[0]?.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello from ernie_speed');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 6 });
    expect(fake.requests.at(-1)?.body?.stream).toBe(true);
    const log = await lastLog('ERNIE-Speed-8K');
    // (40 + 6·2)·0.5 = 26
    expect(Number(log.quota)).toBe(26);
    expect(log.is_stream).toBe(true);
  });

  it('embeddings (the SDK asks for base64): vectors decoded by the SDK, billed on prompt tokens', async () => {
    const res = await client.embeddings.create({ model: 'Embedding-V1', input: ['one two', 'three'] });
    expect(res.data.map((d) => d.embedding)).toEqual([
      [2, 0, 0.5],
      [1, 1, 0.5],
    ]);
    expect(fake.requests.at(-1)).toMatchObject({
      path: '/rpc/2.0/ai_custom/v1/wenxinworkshop/embeddings/embedding-v1',
      body: { input: ['one two', 'three'] },
    });
    const log = await lastLog('Embedding-V1');
    // 3 prompt tokens · 0.25 = 0.75 → 1 (a call costs at least 1)
    expect(Number(log.prompt_tokens)).toBe(3);
    expect(Number(log.quota)).toBe(1);
  });

  it('an access token Baidu dropped (error_code 110) fails that call as 401, the next one exchanges again', async () => {
    await client.chat.completions.create({
      model: 'ERNIE-4.0-8K',
      messages: [{ role: 'user', content: 'warm' }],
    });
    const issued = fake.tokensIssued();
    fake.revokeTokens();
    // 110 is a 401: the client is told (without Baidu's words) and core forgets the cached token.
    const err = await client.chat.completions
      .create({ model: 'ERNIE-4.0-8K', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e as APIError);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(401);
    expect(fake.tokensIssued()).toBe(issued);
    const res = await client.chat.completions.create({
      model: 'ERNIE-4.0-8K',
      messages: [{ role: 'user', content: 'y' }],
    });
    expect(res.choices[0]?.message.content).toBe('Hello from completions_pro');
    expect(fake.tokensIssued()).toBe(issued + 1);
  });

  it('an upstream error_code reaches the client in OpenAI’s envelope and bills nothing', async () => {
    fake.on({ respond: { error: { code: 336003, message: 'the content of message is too long' } } });
    const err = await client.chat.completions
      .create({ model: 'ERNIE-4.0-8K', messages: [{ role: 'user', content: 'long' }] })
      .catch((e: unknown) => e as APIError);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).error).toMatchObject({
      message: expect.stringContaining('the content of message is too long'),
      code: '336003',
    });
  });

  it('a key pair Baidu does not know: the exchange is refused (invalid_client), the client gets a 401', async () => {
    const err = await client.chat.completions
      .create({ model: 'ERNIE-Lite-8K', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e as APIError);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(401);
    expect(JSON.stringify((err as APIError).error)).not.toContain('sk-wrong');
    expect(fake.requests.map((r) => r.path)).toEqual(['/oauth/2.0/token']);
  });

  it('a key without "|" is a clear channel error, the key never shown', async () => {
    const err = await client.chat.completions
      .create({ model: 'ERNIE-Tiny-8K', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e as APIError);
    expect(err).toBeInstanceOf(APIError);
    const apiErr = err as APIError;
    expect(JSON.stringify(apiErr.error)).not.toContain('no-pipe-in-this-key');
    expect(apiErr.error).toMatchObject({ code: 'channel_key_invalid' });
    expect(fake.requests).toHaveLength(0);
  });
});
