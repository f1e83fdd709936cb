/**
 * The official openai SDK against the relay in front of a Claude channel (type 14): the relay converts OpenAI
 * chat to Anthropic Messages and back, streamed and not, with tools and the -thinking suffix, and bills with
 * Claude's semantics (input excludes cache reads and writes, each billed at its own ratio).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
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
let fake: FakeAnthropic;
let client: OpenAI;
let claude: Anthropic;
let openaiFake: FakeOpenAI;
let userId: number;
const MODEL = 'claude-sonnet-4-20250514';

beforeAll(async () => {
  fake = await startFakeAnthropic({ keys: ['sk-ant-channel'] });
  openaiFake = await startFakeOpenAI();
  stack = await startStack({ suffix: 'relay_claude' });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  const token = await seedToken(stack, userId, { unlimited: true });
  await seedChannel(stack, {
    type: 14,
    baseUrl: fake.url,
    key: 'sk-ant-channel',
    models: [MODEL, `${MODEL}-thinking`],
  });
  await seedChannel(stack, { type: 1, baseUrl: openaiFake.url, models: ['gpt-4o'] });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ [MODEL]: 1.5, [`${MODEL}-thinking`]: 1.5, 'gpt-4o': 1.25 }),
    CompletionRatio: JSON.stringify({ [MODEL]: 5, [`${MODEL}-thinking`]: 5, 'gpt-4o': 4 }),
    CacheRatio: JSON.stringify({ [MODEL]: 0.1 }),
    CreateCacheRatio: JSON.stringify({ [MODEL]: 1.25 }),
  });
  client = new OpenAI({
    baseURL: `${stack.relays[0]!.httpUrl}/v1`,
    apiKey: `sk-${token.key}`,
    maxRetries: 0,
  });
  claude = new Anthropic({ baseURL: stack.relays[0]!.httpUrl, apiKey: `sk-${token.key}`, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
  await openaiFake?.close();
});

beforeEach(async () => {
  fake.reset();
  openaiFake.reset();
  // Earlier tests' last calls are billed before this test looks at "the newest log row".
  await drained(stack);
});

const lastLog = (model: string) => lastLogOf(stack, userId, model);

describe('openai SDK through the relay to a Claude channel', () => {
  it('converts a chat call and bills cache reads and writes at their own ratios', async () => {
    fake.on({
      respond: {
        content: 'Bonjour',
        usage: {
          input_tokens: 100,
          cache_read_input_tokens: 1000,
          cache_creation_input_tokens: 200,
          output_tokens: 50,
        },
      },
    });
    const res = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'Hello' },
      ],
    });
    expect(res.choices[0]?.message.content).toBe('Bonjour');
    expect(res.usage?.prompt_tokens).toBe(1300);
    const sent = fake.requests.at(-1)!;
    expect(sent.headers['x-api-key']).toBe('sk-ant-channel');
    expect(sent.body?.system).toBe('Answer in French.');
    expect(sent.body?.max_tokens).toBe(8192);
    const log = await lastLog(MODEL);
    // (100 + 1000·0.1 + 200·1.25 + 50·5)·1.5 = (100 + 100 + 250 + 250)·1.5 = 1050
    expect(Number(log.quota)).toBe(1050);
    expect(Number(log.prompt_tokens)).toBe(1300);
    const other = JSON.parse(String(log.other));
    expect(other.cache_tokens).toBe(1000);
    expect(other.cache_creation_tokens).toBe(200);
  });

  it('streams with usage, and a tool call round trip keeps ids and arguments', async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
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
    expect(text).toBe(`Hello from ${MODEL}`);
    expect(usage?.completion_tokens).toBe(3);
    expect((await lastLog(MODEL)).is_stream).toBe(true);

    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } },
    ];
    const first = await client.chat.completions
      .stream({ model: MODEL, messages: [{ role: 'user', content: 'weather in Lyon' }], tools })
      .finalChatCompletion();
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ location: 'Lyon' });
    // Send the tool result back: Claude receives tool_use and tool_result blocks with the same id.
    await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'user', content: 'weather in Lyon' },
        first.choices[0]!.message as OpenAI.ChatCompletionMessageParam,
        { role: 'tool', tool_call_id: call!.id, content: '21°C' },
      ],
      tools,
    });
    const turns = fake.requests.at(-1)?.body?.messages as {
      role: string;
      content: { type: string; id?: string; tool_use_id?: string }[];
    }[];
    expect(turns.map((t) => t.role)).toEqual(['user', 'assistant', 'user']);
    expect(turns[1]?.content.find((b) => b.type === 'tool_use')?.id).toBe(call!.id);
    expect(turns[2]?.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: call!.id });
  });

  it('the -thinking model enables extended thinking upstream and returns reasoning_content', async () => {
    const res = await client.chat.completions.create({
      model: `${MODEL}-thinking`,
      max_tokens: 4000,
      messages: [{ role: 'user', content: 'think' }],
    });
    const sent = fake.requests.at(-1)!.body!;
    expect(sent.model).toBe(MODEL);
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 3200 });
    expect((res.choices[0]?.message as { reasoning_content?: string } | undefined)?.reasoning_content).toBe(
      'Let me think.',
    );
  });

  it('an upstream Claude error reaches the OpenAI client in OpenAI shape', async () => {
    fake.on({ respond: { status: 529, error: { type: 'overloaded_error', message: 'Overloaded' } } });
    const err = await client.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(529);
    expect(err.message).toMatch(/Overloaded/);
  });
});

describe('the Anthropic SDK through the relay (/v1/messages)', () => {
  it('reaches a Claude channel natively: body and answer pass through, cache usage billed the Claude way', async () => {
    fake.on({
      respond: {
        usage: {
          input_tokens: 100,
          cache_read_input_tokens: 1000,
          cache_creation_input_tokens: 200,
          output_tokens: 50,
        },
      },
    });
    const msg = await claude.messages.create({
      model: MODEL,
      max_tokens: 256,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(msg.content).toEqual([{ type: 'text', text: `Hello from ${MODEL}` }]);
    expect(msg.usage.cache_read_input_tokens).toBe(1000);
    // Passed through untouched: cache_control survives, the channel key replaces the client's.
    const sent = fake.requests.at(-1)!;
    expect(sent.body?.system).toEqual([
      { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(sent.headers['x-api-key']).toBe('sk-ant-channel');
    expect(sent.headers.authorization).toBeUndefined();
    expect(Number((await lastLog(MODEL)).quota)).toBe(1050);
  });

  it('streams natively with thinking and tools intact', async () => {
    const stream = claude.messages.stream({
      model: MODEL,
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
      messages: [{ role: 'user', content: 'weather in Rome' }],
    });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'thinking', signature: 'sig_fake' });
    const use = final.content.find((b) => b.type === 'tool_use');
    expect(use?.type === 'tool_use' && use.input).toEqual({ location: 'Rome' });
    const log = await lastLog(MODEL);
    expect(log.is_stream).toBe(true);
  });

  it('StopOnSensitiveEnabled off: a Claude answer has its words masked, body and stream, native and bridged', async () => {
    await setOptions(stack, {
      CheckSensitiveEnabled: 'true',
      CheckSensitiveOnPromptEnabled: 'false',
      CheckSensitiveOnCompletionEnabled: 'true',
      StopOnSensitiveEnabled: 'false',
      SensitiveWords: 'forbidden fruit',
    });
    try {
      const content = 'a forbidden fruit here';
      const masked = 'a *************** here';
      for (const model of [MODEL, 'gpt-4o']) {
        fake.on({ respond: { content } });
        openaiFake.on({ model: 'gpt-4o', respond: { content } });
        const msg = await claude.messages.create({
          model,
          max_tokens: 100,
          messages: [{ role: 'user', content: 'hi' }],
        });
        expect(msg.content).toEqual([{ type: 'text', text: masked }]);
        // " forbidden" and " fruit" are separate deltas: both are masked, nothing leaks.
        const deltas: string[] = [];
        const stream = claude.messages.stream({
          model,
          max_tokens: 100,
          messages: [{ role: 'user', content: 'hi' }],
        });
        stream.on('text', (t) => {
          deltas.push(t);
        });
        const final = await stream.finalMessage();
        expect(deltas.join('')).toBe(masked);
        expect(deltas.some((d) => /forbidden|fruit/.test(d))).toBe(false);
        expect(final.stop_reason).toBe('end_turn');
        fake.reset();
        openaiFake.reset();
      }
    } finally {
      await setOptions(stack, {
        CheckSensitiveOnPromptEnabled: 'true',
        CheckSensitiveOnCompletionEnabled: 'false',
        StopOnSensitiveEnabled: 'true',
        SensitiveWords: 'test_sensitive',
      });
    }
  });

  it('reaches an OpenAI channel through the bridge, plain and streamed, with tools', async () => {
    openaiFake.on({ model: 'gpt-4o', respond: { usage: { prompt_tokens: 100, completion_tokens: 10 } } });
    const msg = await claude.messages.create({
      model: 'gpt-4o',
      max_tokens: 100,
      system: 'sys',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(msg.type).toBe('message');
    expect(msg.content).toEqual([{ type: 'text', text: 'Hello from gpt-4o' }]);
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.usage.input_tokens).toBe(100);
    const chat = openaiFake.requests.at(-1)!.body!;
    expect(chat.messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'hi' },
    ]);
    // (100 + 10·4)·1.25 = 175
    expect(Number((await lastLog('gpt-4o')).quota)).toBe(175);

    let text = '';
    const stream = claude.messages.stream({
      model: 'gpt-4o',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    stream.on('text', (t) => {
      text += t;
    });
    const final = await stream.finalMessage();
    expect(text).toBe('Hello from gpt-4o');
    expect(final.usage.output_tokens).toBe(10);

    const tools: Anthropic.Tool[] = [
      { name: 'get_weather', input_schema: { type: 'object', properties: {} } },
    ];
    const withTool = await claude.messages
      .stream({
        model: 'gpt-4o',
        max_tokens: 100,
        tools,
        messages: [{ role: 'user', content: 'weather in Nice' }],
      })
      .finalMessage();
    expect(withTool.stop_reason).toBe('tool_use');
    const use = withTool.content.find((b) => b.type === 'tool_use');
    expect(use?.type === 'tool_use' && use.input).toEqual({ location: 'Nice' });
  });

  it('answers errors in Claude shape, counts tokens, and lists models for Claude clients', async () => {
    const bad = new Anthropic({ baseURL: stack.relays[0]!.httpUrl, apiKey: 'sk-wrong', maxRetries: 0 });
    await expect(
      bad.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    fake.on({ respond: { status: 529, error: { type: 'overloaded_error', message: 'Overloaded' } } });
    const err = await claude.messages
      .create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err.status).toBe(529);
    expect(err.error?.error?.type).toBe('overloaded_error');

    const count = await claude.messages.countTokens({
      model: MODEL,
      messages: [{ role: 'user', content: 'hello world' }],
    });
    expect(count.input_tokens).toBeGreaterThan(0);
    const models = await claude.models.list();
    expect(models.data.map((m) => m.id)).toContain(MODEL);
  });
});
