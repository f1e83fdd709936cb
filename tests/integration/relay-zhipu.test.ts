/**
 * The official `openai` SDK against the relay in front of the fake Zhipu v3 upstream (channel type 16): every
 * call carries a JWT signed from the `id.secret` key that the fake verifies with jose; chat non-stream and
 * stream (Zhipu's add/finish events with the meta usage), text_embedding, billed exactly; Zhipu's HTTP-200
 * refusal and a broken key reach the client in OpenAI's error envelope.
 */
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeZhipu, startFakeZhipu } from '../fakes/zhipu-upstream.ts';
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
let fake: FakeZhipu;
let client: OpenAI;
let userId: number;

beforeAll(async () => {
  fake = await startFakeZhipu({ keys: ['relayid.relaysecret'] });
  stack = await startStack({ suffix: 'relay_zhipu' });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  const token = await seedToken(stack, userId, { unlimited: true });
  await seedChannel(stack, {
    type: 16,
    baseUrl: fake.url,
    key: 'relayid.relaysecret',
    models: ['chatglm_turbo', 'chatglm_pro', 'text_embedding'],
    autoBan: false,
  });
  await seedChannel(stack, {
    type: 16,
    baseUrl: fake.url,
    key: 'a-key-without-a-dot',
    models: ['chatglm_lite'],
  });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ chatglm_turbo: 1, chatglm_pro: 5, text_embedding: 2, chatglm_lite: 1 }),
    CompletionRatio: JSON.stringify({ chatglm_turbo: 2, chatglm_pro: 1 }),
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

describe('openai SDK → relay → Zhipu v3', () => {
  it('chat: signed token verified by the fake, content unquoted, usage back, billed', async () => {
    const res = await client.chat.completions.create({
      model: 'chatglm_turbo',
      messages: [
        { role: 'user', content: 'hello zhipu friend' },
        { role: 'assistant', content: 'hi' },
        { role: 'user', content: 'tell me more' },
      ],
      temperature: 0.2,
    });
    expect(res.choices[0]?.message.content).toBe('Hello from chatglm_turbo');
    expect(res.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    const sent = fake.requests.at(-1)!;
    expect(sent.method).toBe('invoke');
    expect(sent.claims).toMatchObject({ api_key: 'relayid' });
    expect(sent.headers.authorization?.startsWith('Bearer')).toBe(false);
    expect(sent.body).toEqual({
      prompt: [
        { role: 'user', content: 'hello zhipu friend' },
        { role: 'assistant', content: 'hi' },
        { role: 'user', content: 'tell me more' },
      ],
      temperature: 0.2,
    });
    const log = await lastLog('chatglm_turbo');
    // (7 + 3·2)·1 = 13
    expect(Number(log.quota)).toBe(13);
    expect(Number(log.prompt_tokens)).toBe(7);
    expect(Number(log.completion_tokens)).toBe(3);
  });

  it('chat billing is exact: (P + C·CR)·MR from Zhipu’s usage', async () => {
    fake.on({ model: 'chatglm_pro', respond: { usage: { prompt_tokens: 30, completion_tokens: 12 } } });
    await client.chat.completions.create({
      model: 'chatglm_pro',
      messages: [{ role: 'user', content: 'x' }],
    });
    const log = await lastLog('chatglm_pro');
    // (30 + 12·1)·5 = 210
    expect(Number(log.quota)).toBe(210);
  });

  it('stream: sse-invoke with incremental, multi-line text intact, finish and usage chunk, billed', async () => {
    fake.on({
      model: 'chatglm_turbo',
      respond: { content: 'first line\nsecond line', usage: { prompt_tokens: 20, completion_tokens: 5 } },
    });
    const stream = await client.chat.completions.create({
      model: 'chatglm_turbo',
      messages: [{ role: 'user', content: 'two lines please' }],
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
    expect(text).toBe('first line\nsecond line');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 5 });
    expect(fake.requests.at(-1)).toMatchObject({ method: 'sse-invoke', body: { incremental: true } });
    const log = await lastLog('chatglm_turbo');
    // (20 + 5·2)·1 = 30
    expect(Number(log.quota)).toBe(30);
    expect(log.is_stream).toBe(true);
  });

  it('embeddings through text_embedding, billed on prompt tokens', async () => {
    const res = await client.embeddings.create({ model: 'text_embedding', input: 'three little words' });
    expect(res.data[0]?.embedding).toEqual([3, 0.5, -0.5]);
    expect(fake.requests.at(-1)).toMatchObject({
      model: 'text_embedding',
      body: { prompt: 'three little words' },
    });
    const log = await lastLog('text_embedding');
    // 3·2 = 6
    expect(Number(log.quota)).toBe(6);
  });

  it('a Zhipu refusal (1301, HTTP 200) reaches the client as a 400 in OpenAI’s envelope', async () => {
    fake.on({ respond: { error: { code: 1301, msg: '系统检测到输入或生成内容可能包含不安全或敏感内容' } } });
    const err = await client.chat.completions
      .create({ model: 'chatglm_turbo', messages: [{ role: 'user', content: 'bad' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).error).toMatchObject({ code: '1301' });
  });

  it('a key that is not id.secret is a clear channel error, the upstream never called', async () => {
    const err = await client.chat.completions
      .create({ model: 'chatglm_lite', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).error).toMatchObject({ code: 'channel_key_invalid' });
    expect(JSON.stringify((err as APIError).error)).not.toContain('a-key-without-a-dot');
    expect(fake.requests).toHaveLength(0);
  });
});
