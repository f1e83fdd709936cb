/**
 * The official `openai` SDK through the relay to a Gemini channel (type 24) in front of the fake Gemini upstream:
 * chat (thoughts billed), streaming with usage, tool calls, an invalid key auto-disabling the channel.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGemini, startFakeGemini } from '../fakes/gemini-upstream.ts';
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
let fake: FakeGemini;
let client: OpenAI;
let userId: number;

beforeAll(async () => {
  fake = await startFakeGemini({ keys: ['AIza-good'] });
  stack = await startStack({ suffix: 'relay_gemini_chat' });
  const user = await seedUser(stack, { quota: 10_000_000 });
  userId = user.id;
  const token = await seedToken(stack, userId, { remainQuota: 5_000_000 });
  await seedChannel(stack, {
    type: 24,
    key: 'AIza-good',
    baseUrl: fake.url,
    models: ['gemini-2.5-flash', 'gemini-2.5-flash-thinking'],
  });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ 'gemini-2.5-flash': 0.15, 'gemini-2.5-flash-thinking': 0.15 }),
    CompletionRatio: JSON.stringify({ 'gemini-2.5-flash': 4, 'gemini-2.5-flash-thinking': 4 }),
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

describe('openai SDK through the relay to Gemini', () => {
  it('chat: thoughts billed as completion', async () => {
    fake.on({
      respond: { usage: { promptTokenCount: 1000, candidatesTokenCount: 100, thoughtsTokenCount: 400 } },
      times: 1,
    });
    const res = await client.chat.completions.create({
      model: 'gemini-2.5-flash-thinking',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(res.choices[0]?.message.content).toBe('Hello from gemini-2.5-flash');
    expect(res.usage?.completion_tokens).toBe(500);
    expect(fake.requests.at(-1)?.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    const log = await lastLog('gemini-2.5-flash-thinking');
    expect(Number(log.completion_tokens)).toBe(500);
    expect(Number(log.quota)).toBe(Math.round((1000 + 500 * 4) * 0.15));
  });

  it('gemini.version_settings picks the API version per model; gemini.safety_settings the thresholds', async () => {
    await setOptions(stack, {
      'gemini.version_settings': JSON.stringify({ default: 'v1beta', 'gemini-2.5-flash': 'v1' }),
      'gemini.safety_settings': JSON.stringify({ default: 'BLOCK_ONLY_HIGH' }),
    });
    try {
      fake.on({ respond: { usage: { promptTokenCount: 10, candidatesTokenCount: 5 } }, times: 1 });
      await client.chat.completions.create({
        model: 'gemini-2.5-flash',
        messages: [{ role: 'user', content: 'hello' }],
      });
      const sent = fake.requests.at(-1);
      expect(sent?.path).toBe('/v1/models/gemini-2.5-flash:generateContent');
      const safety = sent?.body?.safetySettings as Array<{ category: string; threshold: string }>;
      expect(safety.length).toBeGreaterThan(0);
      for (const s of safety) expect(s.threshold).toBe('BLOCK_ONLY_HIGH');
    } finally {
      await setOptions(stack, {
        'gemini.version_settings': '{"default":"v1beta"}',
        'gemini.safety_settings': '{"default":"OFF"}',
      });
    }
  });

  it('stream with usage and tool calls', async () => {
    const stream = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'weather in Rome?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            parameters: {
              type: 'object',
              properties: { location: { type: 'string' } },
              additionalProperties: false,
            },
          },
        },
      ],
    });
    const calls: unknown[] = [];
    let usage: unknown;
    let finish: string | null | undefined;
    for await (const c of stream) {
      if (c.choices[0]?.delta.tool_calls) calls.push(...c.choices[0].delta.tool_calls);
      if (c.choices[0]?.finish_reason) finish = c.choices[0].finish_reason;
      if (c.usage) usage = c.usage;
    }
    expect(calls).toEqual([
      expect.objectContaining({
        index: 0,
        function: { name: 'get_weather', arguments: '{"location":"Rome"}' },
      }),
    ]);
    expect(finish).toBe('tool_calls');
    expect(usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 1 });
    const log = await lastLog('gemini-2.5-flash');
    expect(Number(log.prompt_tokens)).toBe(3);
  });
});
