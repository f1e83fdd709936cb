/**
 * The official `openai` SDK against the relay in front of the fake Tencent Hunyuan upstream (channel type 23):
 * every call signed with TC3-HMAC-SHA256 from `AppId|SecretId|SecretKey`, the fake recomputing the signature;
 * chat non-stream and stream billed exactly from Hunyuan's Usage; a signature Tencent refuses (AuthFailure, HTTP
 * 200) and a broken key reach the client in OpenAI's error envelope.
 */
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeTencent, startFakeTencent } from '../fakes/tencent-upstream.ts';
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
let fake: FakeTencent;
let client: OpenAI;
let userId: number;

beforeAll(async () => {
  fake = await startFakeTencent({ keys: [['AKIDrelay', 'relaySecretKey']] });
  stack = await startStack({ suffix: 'relay_tencent' });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  const token = await seedToken(stack, userId, { unlimited: true });
  await seedChannel(stack, {
    type: 23,
    baseUrl: fake.url,
    key: '1300000000|AKIDrelay|relaySecretKey',
    models: ['hunyuan-lite', 'hunyuan-pro'],
    other: 'ap-guangzhou',
  });
  // Right format, wrong secret: Tencent refuses the signature.
  await seedChannel(stack, {
    type: 23,
    baseUrl: fake.url,
    key: '1300000000|AKIDrelay|notTheSecret',
    models: ['hunyuan-standard'],
    autoBan: false,
  });
  await seedChannel(stack, {
    type: 23,
    baseUrl: fake.url,
    key: 'AKIDrelay|relaySecretKey',
    models: ['hunyuan-turbo'],
  });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({
      'hunyuan-lite': 1,
      'hunyuan-pro': 15,
      'hunyuan-standard': 2,
      'hunyuan-turbo': 3,
    }),
    CompletionRatio: JSON.stringify({ 'hunyuan-lite': 2, 'hunyuan-pro': 3 }),
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

describe('openai SDK → relay → Tencent Hunyuan', () => {
  it('chat: signed request accepted, Messages/options converted, answer and usage back, billed', async () => {
    const res = await client.chat.completions.create({
      model: 'hunyuan-lite',
      messages: [
        { role: 'system', content: 'answer briefly' },
        { role: 'user', content: 'hello from the sdk' },
      ],
      temperature: 0.7,
      top_p: 0.9,
    });
    expect(res.choices[0]?.message.content).toBe('Hello from hunyuan-lite');
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 3, total_tokens: 9 });
    const sent = fake.requests.at(-1)!;
    expect(sent.secretId).toBe('AKIDrelay');
    expect(sent.headers).toMatchObject({
      'x-tc-action': 'ChatCompletions',
      'x-tc-version': '2023-09-01',
      'x-tc-region': 'ap-guangzhou',
    });
    expect(sent.body).toEqual({
      Model: 'hunyuan-lite',
      Messages: [
        { Role: 'system', Content: 'answer briefly' },
        { Role: 'user', Content: 'hello from the sdk' },
      ],
      Stream: false,
      TopP: 0.9,
      Temperature: 0.7,
    });
    const log = await lastLog('hunyuan-lite');
    // (6 + 3·2)·1 = 12
    expect(Number(log.quota)).toBe(12);
    expect(Number(log.prompt_tokens)).toBe(6);
    expect(Number(log.completion_tokens)).toBe(3);
  });

  it('stream: Delta frames, the finish and the usage chunk; billed from the last Usage', async () => {
    fake.on({ model: 'hunyuan-pro', respond: { usage: { PromptTokens: 12, CompletionTokens: 4 } } });
    const stream = await client.chat.completions.create({
      model: 'hunyuan-pro',
      messages: [{ role: 'user', content: 'stream it' }],
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
    expect(text).toBe('Hello from hunyuan-pro');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 4 });
    expect(fake.requests.at(-1)?.body).toMatchObject({ Stream: true });
    const log = await lastLog('hunyuan-pro');
    // (12 + 4·3)·15 = 360
    expect(Number(log.quota)).toBe(360);
    expect(log.is_stream).toBe(true);
  });

  it('an upstream error (LimitExceeded, HTTP 200) reaches the client as a 429 in OpenAI’s envelope', async () => {
    fake.on({
      model: 'hunyuan-lite',
      respond: { error: { Code: 'LimitExceeded', Message: '超过配额限制。' } },
    });
    const err = await client.chat.completions
      .create({ model: 'hunyuan-lite', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(429);
    expect((err as APIError).error).toMatchObject({ code: 'LimitExceeded' });
  });

  it('a signature Tencent refuses (AuthFailure.SignatureFailure) is a 401 for the client, the secret never shown', async () => {
    const err = await client.chat.completions
      .create({ model: 'hunyuan-standard', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(401);
    expect(JSON.stringify((err as APIError).error)).not.toContain('notTheSecret');
    expect(fake.requests.at(-1)?.secretId).toBe('AKIDrelay');
  });

  it('a refused stream (Response.Error instead of SSE) ends in an error the SDK throws, and is not billed', async () => {
    const stream = await client.chat.completions.create({
      model: 'hunyuan-standard',
      messages: [{ role: 'user', content: 'stream to a wrong secret' }],
      stream: true,
    });
    const err = await (async () => {
      for await (const _ of stream) {
        // the refusal arrives as the stream's error event
      }
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).message).toContain('The provided credentials could not be validated');
    const log = await lastLog('hunyuan-standard');
    expect(Number(log.quota)).toBe(0);
    expect(Number(log.prompt_tokens)).toBe(0);
  });

  it('a key that is not AppId|SecretId|SecretKey is a clear channel error, the upstream never called', async () => {
    const err = await client.chat.completions
      .create({ model: 'hunyuan-turbo', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).error).toMatchObject({ code: 'channel_key_invalid' });
    expect(JSON.stringify((err as APIError).error)).not.toContain('relaySecretKey');
    expect(fake.requests).toHaveLength(0);
  });
});
