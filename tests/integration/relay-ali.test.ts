/**
 * The official `openai` SDK through the relay to an Alibaba Qwen channel (type 17, DashScope's native API) in
 * front of the fake DashScope upstream: chat, streaming with usage and tool calls, embeddings, each billed
 * exactly; an upstream error reaching the client in OpenAI's envelope.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHAT_PATH,
  EMBEDDINGS_PATH,
  FAKE_ALI_IMAGE_TOKENS,
  type FakeAli,
  MULTIMODAL_PATH,
  startFakeAli,
} from '../fakes/ali-upstream.ts';
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
let fake: FakeAli;
let client: OpenAI;
let userId: number;

beforeAll(async () => {
  fake = await startFakeAli({ keys: ['sk-dashscope-good'] });
  stack = await startStack({ suffix: 'relay_ali' });
  const user = await seedUser(stack, { quota: 10_000_000 });
  userId = user.id;
  const token = await seedToken(stack, userId, { remainQuota: 5_000_000 });
  await seedChannel(stack, {
    type: 17,
    key: 'sk-dashscope-good',
    baseUrl: fake.url,
    other: 'plugin-config',
    models: ['qwen-plus', 'qwen-max', 'qwen-vl-plus', 'text-embedding-v3'],
  });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({
      'qwen-plus': 0.4,
      'qwen-max': 1.2,
      'qwen-vl-plus': 0.75,
      'text-embedding-v3': 0.05,
    }),
    ImageRatio: JSON.stringify({ 'qwen-vl-plus': 1.5 }),
    CompletionRatio: JSON.stringify({ 'qwen-plus': 3, 'qwen-max': 4 }),
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

const lastLog = (model: string) => lastLogOf(stack, userId, model);

describe('openai SDK through the relay to Alibaba Qwen (DashScope)', () => {
  it('chat: native request, OpenAI answer, billed from the reported usage', async () => {
    fake.on({ respond: { usage: { input_tokens: 120, output_tokens: 45 } }, times: 1 });
    const res = await client.chat.completions.create({
      model: 'qwen-plus',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello there' },
      ],
      temperature: 0.5,
      max_tokens: 64,
    });
    expect(res.choices[0]?.message.content).toBe('Hello from qwen-plus');
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 120, completion_tokens: 45, total_tokens: 165 });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe(CHAT_PATH);
    expect(sent.headers.authorization).toBe('Bearer sk-dashscope-good');
    expect(sent.headers['x-dashscope-plugin']).toBe('plugin-config');
    expect(sent.headers['x-dashscope-sse']).toBeUndefined();
    expect(sent.body).toEqual({
      model: 'qwen-plus',
      input: {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hello there' },
        ],
      },
      parameters: { result_format: 'message', temperature: 0.5, max_tokens: 64 },
    });
    const log = await lastLog('qwen-plus');
    expect(Number(log.prompt_tokens)).toBe(120);
    expect(Number(log.completion_tokens)).toBe(45);
    expect(Number(log.quota)).toBe(Math.round((120 + 45 * 3) * 0.4));
    expect(log.is_stream).toBe(false);
  });

  it('stream: incremental SSE to OpenAI chunks with the usage chunk, billed exactly', async () => {
    fake.on({
      respond: { content: 'one two three four', usage: { input_tokens: 300, output_tokens: 80 } },
      times: 1,
    });
    const stream = await client.chat.completions.create({
      model: 'qwen-max',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'count please' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      if (c.choices[0]?.finish_reason) finish = c.choices[0].finish_reason;
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('one two three four');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 300, completion_tokens: 80, total_tokens: 380 });
    const sent = fake.requests.at(-1)!;
    expect(sent.headers['x-dashscope-sse']).toBe('enable');
    expect(sent.body?.parameters).toEqual({ result_format: 'message', incremental_output: true });
    const log = await lastLog('qwen-max');
    expect(Number(log.prompt_tokens)).toBe(300);
    expect(Number(log.completion_tokens)).toBe(80);
    expect(Number(log.quota)).toBe(Math.round((300 + 80 * 4) * 1.2));
    expect(log.is_stream).toBe(true);
  });

  it('stream: tool calls arrive as OpenAI tool-call deltas', async () => {
    const stream = await client.chat.completions.create({
      model: 'qwen-plus',
      stream: true,
      messages: [{ role: 'user', content: 'weather in Hangzhou?' }],
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
    const calls: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    let finish: string | null | undefined;
    for await (const c of stream) {
      calls.push(...(c.choices[0]?.delta.tool_calls ?? []));
      if (c.choices[0]?.finish_reason) finish = c.choices[0].finish_reason;
    }
    expect(calls).toEqual([
      expect.objectContaining({
        index: 0,
        type: 'function',
        function: { name: 'get_weather', arguments: '{"location":"Hangzhou"}' },
      }),
    ]);
    expect(finish).toBe('tool_calls');
    const log = await lastLog('qwen-plus');
    // The fake's count: words of the messages (3) in, one token per tool call out.
    expect(Number(log.prompt_tokens)).toBe(3);
    expect(Number(log.completion_tokens)).toBe(1);
    expect(Number(log.quota)).toBe(Math.round((3 + 1 * 3) * 0.4));
  });

  it('vision: image parts go to the multimodal service, image tokens billed at the image ratio', async () => {
    const res = await client.chat.completions.create({
      model: 'qwen-vl-plus',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'https://example.com/dog.jpg' } },
            { type: 'text', text: 'what is this' },
          ],
        },
      ],
    });
    expect(res.choices[0]?.message.content).toBe('Hello from qwen-vl-plus');
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe(MULTIMODAL_PATH);
    expect(sent.body?.input).toEqual({
      messages: [
        { role: 'user', content: [{ image: 'https://example.com/dog.jpg' }, { text: 'what is this' }] },
      ],
    });
    const log = await lastLog('qwen-vl-plus');
    expect(Number(log.prompt_tokens)).toBe(3 + FAKE_ALI_IMAGE_TOKENS);
    expect(Number(log.completion_tokens)).toBe(3);
    // No CompletionRatio for qwen-vl-plus (1): (3 text + 334 image · 1.5 + 3) · 0.75
    expect(Number(log.quota)).toBe(Math.round((3 + FAKE_ALI_IMAGE_TOKENS * 1.5 + 3) * 0.75));
  });

  it('embeddings: text-embedding service, floats back in order, billed by total_tokens', async () => {
    const res = await client.embeddings.create({
      model: 'text-embedding-v3',
      input: ['the quick brown fox', 'jumps'],
      dimensions: 3,
      encoding_format: 'float',
    });
    expect(res.data.map((d) => d.index)).toEqual([0, 1]);
    expect(res.data[0]?.embedding).toEqual([19 / 8, 20 / 8, 21 / 8]);
    expect(res.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe(EMBEDDINGS_PATH);
    expect(sent.body).toEqual({
      model: 'text-embedding-v3',
      input: { texts: ['the quick brown fox', 'jumps'] },
      parameters: { text_type: 'query', dimension: 3 },
    });
    const log = await lastLog('text-embedding-v3');
    expect(Number(log.prompt_tokens)).toBe(5);
    expect(Number(log.completion_tokens)).toBe(0);
    // 5 × 0.05 = 0.25 rounds to 0, and a priced call with tokens costs at least 1.
    expect(Number(log.quota)).toBe(1);
  });

  it('embeddings with the SDK default (base64) decode to the same floats', async () => {
    const res = await client.embeddings.create({ model: 'text-embedding-v3', input: 'abc', dimensions: 2 });
    expect(res.data[0]?.embedding).toEqual([3 / 8, 4 / 8]);
  });

  it('an upstream error reaches the client in OpenAI envelope with its status', async () => {
    fake.on({
      respond: {
        status: 400,
        error: { code: 'DataInspectionFailed', message: 'Input data may contain inappropriate content.' },
      },
      times: 1,
    });
    const err = await client.chat.completions
      .create({ model: 'qwen-plus', messages: [{ role: 'user', content: 'bad words' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const api = err as InstanceType<typeof OpenAI.APIError>;
    expect(api.status).toBe(400);
    expect(api.message).toContain('Input data may contain inappropriate content.');
    expect((api.error as { type?: string }).type).toBe('invalid_request_error');
  });
});
