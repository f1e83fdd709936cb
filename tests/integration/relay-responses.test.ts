/**
 * The Responses API (`POST /v1/responses`) bridged to chat: the official `openai` SDK's `responses.create` and
 * `responses.stream` through the relay to a Claude channel (14), a Gemini channel (24) and a DeepSeek channel
 * (43, OpenAI-compatible without a Responses API of its own), each against the fake of its documented wire
 * format: plain, with reasoning, with a function-call round trip, streamed (the SDK's stream helper validates
 * the event order), billed exactly from the upstream's usage. An OpenAI channel (1) still gets /v1/responses
 * natively.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { type FakeGemini, startFakeGemini } from '../fakes/gemini-upstream.ts';
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

type Obj = Record<string, unknown>;

let stack: Stack;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let openai: FakeOpenAI;
let client: OpenAI;
let token: string;
let userId: number;
let claudeChannelId: number;

const CLAUDE = 'claude-sonnet-4-20250514';
const GEMINI = 'gemini-2.5-flash';
const DEEPSEEK = 'deepseek-chat';
const GPT = 'gpt-4o';

/** Model and completion ratios; every quota below is (P + C·CR)·MR. */
const RATIOS: Record<string, { mr: number; cr: number }> = {
  [CLAUDE]: { mr: 1.5, cr: 5 },
  [GEMINI]: { mr: 0.5, cr: 4 },
  [DEEPSEEK]: { mr: 0.25, cr: 2 },
  [GPT]: { mr: 1.25, cr: 4 },
};
const quotaOf = (model: string, p: number, c: number) =>
  Math.round((p + c * RATIOS[model]!.cr) * RATIOS[model]!.mr);

/** One bridged channel: how to make its fake report usage, and what the relay sent it. */
type Channel = {
  model: string;
  /** The next answer reports these prompt/completion (reasoning included) tokens, `reasoning` of them thinking. */
  usage(p: number, c: number, reasoning?: number): void;
  /** The body of the last request that reached the upstream, and its path. */
  last(): { path: string; body: Obj };
  /** Turns on the upstream's thinking output for the next answer where the fake needs a rule for it. */
  thinking(): void;
};

let deepseekThinks = false;

const channels: Channel[] = [
  {
    model: CLAUDE,
    usage: (p, c) => anthropic.on({ respond: { usage: { input_tokens: p, output_tokens: c } }, times: 1 }),
    last: () => {
      const r = anthropic.requests.at(-1)!;
      return { path: r.path, body: r.body ?? {} };
    },
    // reasoning.effort → reasoning_effort → Claude extended thinking: the fake answers a thinking block.
    thinking: () => {},
  },
  {
    model: GEMINI,
    usage: (p, c, reasoning = 0) =>
      gemini.on({
        respond: {
          usage: {
            promptTokenCount: p,
            candidatesTokenCount: c - reasoning,
            thoughtsTokenCount: reasoning,
          },
        },
        times: 1,
      }),
    last: () => {
      const r = gemini.requests.at(-1)!;
      return { path: r.path, body: r.body ?? {} };
    },
    thinking: () => {},
  },
  {
    model: DEEPSEEK,
    usage: (p, c, reasoning = 0) => {
      openai.on({
        model: DEEPSEEK,
        respond: {
          usage: { prompt_tokens: p, completion_tokens: c, reasoning_tokens: reasoning },
          ...(deepseekThinks ? { reasoningContent: 'Let me think.' } : {}),
        },
        times: 1,
      });
      deepseekThinks = false;
    },
    last: () => {
      const r = openai.requests.at(-1)!;
      return { path: r.path, body: r.body ?? {} };
    },
    // DeepSeek answers its thinking as reasoning_content (the reasoner models): part of the next usage rule.
    thinking: () => {
      deepseekThinks = true;
    },
  },
];

beforeAll(async () => {
  anthropic = await startFakeAnthropic({ keys: ['sk-ant-channel'] });
  gemini = await startFakeGemini({ keys: ['AIza-good'] });
  openai = await startFakeOpenAI();
  stack = await startStack({ suffix: 'relay_responses' });
  userId = (await seedUser(stack, { quota: 50_000_000 })).id;
  token = (await seedToken(stack, userId, { remainQuota: 20_000_000 })).key;
  claudeChannelId = (
    await seedChannel(stack, { type: 14, baseUrl: anthropic.url, key: 'sk-ant-channel', models: [CLAUDE] })
  ).id;
  await seedChannel(stack, { type: 24, baseUrl: gemini.url, key: 'AIza-good', models: [GEMINI] });
  await seedChannel(stack, { type: 43, baseUrl: openai.url, key: 'sk-deepseek', models: [DEEPSEEK] });
  await seedChannel(stack, { type: 1, baseUrl: openai.url, key: 'sk-openai', models: [GPT] });
  await setOptions(stack, {
    ModelRatio: JSON.stringify(Object.fromEntries(Object.entries(RATIOS).map(([m, r]) => [m, r.mr]))),
    CompletionRatio: JSON.stringify(Object.fromEntries(Object.entries(RATIOS).map(([m, r]) => [m, r.cr]))),
  });
  client = new OpenAI({ baseURL: `${stack.relays[0]!.httpUrl}/v1`, apiKey: `sk-${token}`, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await anthropic?.close();
  await gemini?.close();
  await openai?.close();
});

beforeEach(async () => {
  anthropic.reset();
  gemini.reset();
  openai.reset();
  await drained(stack);
});

const lastLog = (model: string) => lastLogOf(stack, userId, model);

async function expectBilled(model: string, p: number, c: number, stream: boolean) {
  const log = await lastLog(model);
  expect(Number(log.prompt_tokens)).toBe(p);
  expect(Number(log.completion_tokens)).toBe(c);
  expect(Number(log.quota)).toBe(quotaOf(model, p, c));
  expect(log.is_stream).toBe(stream);
}

/** The system text and the user turns as each upstream received them (its own wire format). */
function upstreamPrompt(model: string, body: Obj): { system: string; lastUser: string } {
  if (model === CLAUDE) {
    const msgs = body.messages as { role: string; content: { type: string; text?: string }[] }[];
    const user = msgs.filter((m) => m.role === 'user').at(-1)!;
    return { system: String(body.system), lastUser: user.content.map((b) => b.text ?? '').join('') };
  }
  if (model === GEMINI) {
    const sys = body.systemInstruction as { parts: { text: string }[] };
    const contents = body.contents as { role: string; parts: { text?: string }[] }[];
    const user = contents.filter((c) => c.role === 'user').at(-1)!;
    return { system: sys.parts[0]!.text, lastUser: user.parts.map((p) => p.text ?? '').join('') };
  }
  const msgs = body.messages as { role: string; content: string }[];
  return {
    system: msgs.find((m) => m.role === 'system')!.content,
    lastUser: msgs.filter((m) => m.role === 'user').at(-1)!.content,
  };
}

const WEATHER_TOOL: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: {
    type: 'object',
    properties: { location: { type: 'string' } },
    required: ['location'],
    additionalProperties: false,
  },
  strict: true,
};

describe.each(channels)('responses.create through the chat bridge: $model', (ch) => {
  it('answers a Response object the SDK parses (output_text), billed from the upstream usage', async () => {
    ch.usage(40, 8);
    const res = await client.responses.create({
      model: ch.model,
      instructions: 'Be brief.',
      input: 'Say hello',
      max_output_tokens: 300,
      temperature: 0.5,
    });
    expect(res.object).toBe('response');
    expect(res.id).toMatch(/^resp_/);
    expect(res.status).toBe('completed');
    expect(res.model).toBe(ch.model);
    expect(res.output_text).toBe(`Hello from ${ch.model}`);
    expect(res.output).toHaveLength(1);
    expect(res.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(res.usage).toMatchObject({ input_tokens: 40, output_tokens: 8, total_tokens: 48 });
    expect(res.instructions).toBe('Be brief.');
    expect(res.max_output_tokens).toBe(300);

    const { path, body } = ch.last();
    // The upstream got its own format, never a /responses path.
    expect(path).not.toContain('responses');
    expect(upstreamPrompt(ch.model, body)).toEqual({ system: 'Be brief.', lastUser: 'Say hello' });
    if (ch.model === CLAUDE) expect(body.max_tokens).toBe(300);
    if (ch.model === GEMINI)
      expect(body.generationConfig).toMatchObject({ maxOutputTokens: 300, temperature: 0.5 });
    if (ch.model === DEEPSEEK) {
      expect(path).toBe('/v1/chat/completions');
      expect(body).toMatchObject({ max_tokens: 300, temperature: 0.5 });
    }
    await expectBilled(ch.model, 40, 8, false);
  });

  it('returns the upstream thinking as a reasoning item with a summary, reasoning tokens billed', async () => {
    ch.thinking();
    ch.usage(30, 12, 5);
    const res = await client.responses.create({
      model: ch.model,
      input: 'Think, then say hello',
      reasoning: { effort: 'low' },
    });
    expect(res.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    const reasoning = res.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: 'Let me think.' }]);
    expect(res.output_text).toBe(`Hello from ${ch.model}`);
    expect(res.usage?.output_tokens).toBe(12);
    if (ch.model !== CLAUDE) expect(res.usage?.output_tokens_details.reasoning_tokens).toBe(5);
    const { body } = ch.last();
    // reasoning.effort reached the upstream in its own terms.
    if (ch.model === CLAUDE) expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    if (ch.model === GEMINI)
      expect((body.generationConfig as Obj).thinkingConfig).toEqual({
        includeThoughts: true,
        thinkingBudget: 1024,
      });
    if (ch.model === DEEPSEEK) expect(body.reasoning_effort).toBe('low');
    await expectBilled(ch.model, 30, 12, false);
  });

  it('calls a function and takes its output back (call_id kept across the round trip)', async () => {
    ch.usage(25, 2);
    const first = await client.responses.create({
      model: ch.model,
      input: 'What is the weather in Lyon?',
      tools: [WEATHER_TOOL],
      tool_choice: 'auto',
    });
    const call = first.output.find(
      (o) => o.type === 'function_call',
    ) as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toBeDefined();
    expect(call.name).toBe('get_weather');
    expect(JSON.parse(call.arguments)).toEqual({ location: 'Lyon' });
    expect(call.call_id).toBeTruthy();
    expect(first.output_text).toBe('');
    await expectBilled(ch.model, 25, 2, false);
    const sentTools = ch.last().body.tools as Obj[];
    expect(JSON.stringify(sentTools)).toContain('get_weather');

    if (ch.model === DEEPSEEK)
      openai.on({ model: DEEPSEEK, respond: { content: 'It is 21°C in Lyon.' }, times: 1 });
    if (ch.model === CLAUDE) anthropic.on({ respond: { content: 'It is 21°C in Lyon.' }, times: 1 });
    if (ch.model === GEMINI) gemini.on({ respond: { content: 'It is 21°C in Lyon.' }, times: 1 });
    const second = await client.responses.create({
      model: ch.model,
      input: [
        { role: 'user', content: 'What is the weather in Lyon?' },
        call,
        { type: 'function_call_output', call_id: call.call_id, output: '21°C' },
      ],
      tools: [WEATHER_TOOL],
      tool_choice: 'none',
    });
    expect(second.output_text).toBe('It is 21°C in Lyon.');
    const { body } = ch.last();
    if (ch.model === CLAUDE) {
      const msgs = body.messages as { role: string; content: Obj[] }[];
      expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(msgs[1]!.content[0]).toMatchObject({
        type: 'tool_use',
        id: call.call_id,
        input: { location: 'Lyon' },
      });
      expect(msgs[2]!.content[0]).toMatchObject({
        type: 'tool_result',
        tool_use_id: call.call_id,
        content: '21°C',
      });
      expect(body.tool_choice).toEqual({ type: 'none' });
    }
    if (ch.model === GEMINI) {
      const contents = body.contents as { role: string; parts: Obj[] }[];
      expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
      expect(contents[1]!.parts[0]).toMatchObject({
        functionCall: { name: 'get_weather', args: { location: 'Lyon' } },
      });
      expect(contents[2]!.parts[0]).toMatchObject({ functionResponse: { name: 'get_weather' } });
      expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    }
    if (ch.model === DEEPSEEK) {
      const msgs = body.messages as Obj[];
      expect(msgs[1]).toMatchObject({
        role: 'assistant',
        tool_calls: [{ id: call.call_id, type: 'function', function: { name: 'get_weather' } }],
      });
      expect(msgs[2]).toEqual({ role: 'tool', tool_call_id: call.call_id, content: '21°C' });
      expect(body.tool_choice).toBe('none');
    }
  });

  it('streams the Responses event sequence the SDK stream helper accepts, with usage, billed', async () => {
    ch.thinking();
    ch.usage(20, 9, 4);
    const stream = client.responses.stream({
      model: ch.model,
      input: 'Stream a hello',
      reasoning: { effort: 'low' },
    });
    const types: string[] = [];
    const seqs: number[] = [];
    let text = '';
    let summary = '';
    for await (const ev of stream) {
      types.push(ev.type);
      seqs.push(ev.sequence_number);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.reasoning_summary_text.delta') summary += ev.delta;
    }
    const final = await stream.finalResponse();
    expect(text).toBe(`Hello from ${ch.model}`);
    expect(summary).toBe('Let me think.');
    expect(final.output_text).toBe(`Hello from ${ch.model}`);
    expect(final.status).toBe('completed');
    expect(final.usage).toMatchObject({ input_tokens: 20, output_tokens: 9, total_tokens: 29 });
    expect(seqs).toEqual(seqs.map((_, i) => i));
    const compact = types.filter((t, i) => t !== types[i - 1]);
    expect(compact).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    await expectBilled(ch.model, 20, 9, true);
  });

  it('streams a function call (arguments deltas, then done) the SDK assembles', async () => {
    ch.usage(15, 2);
    const stream = client.responses.stream({
      model: ch.model,
      input: 'What is the weather in Paris?',
      tools: [WEATHER_TOOL],
    });
    let args = '';
    stream.on('response.function_call_arguments.delta', (e) => {
      args += e.delta;
    });
    const final = await stream.finalResponse();
    const call = final.output.find(
      (o) => o.type === 'function_call',
    ) as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ name: 'get_weather', status: 'completed' });
    expect(JSON.parse(call.arguments)).toEqual({ location: 'Paris' });
    expect(args).toBe(call.arguments);
    await expectBilled(ch.model, 15, 2, true);
  });
});

describe('responses on chat-only channels: the edges', () => {
  it('ends the stream without [DONE], as OpenAI does', async () => {
    const res = await fetch(`${stack.relays[0]!.httpUrl}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: DEEPSEEK, input: 'hi', stream: true }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    expect(text).not.toContain('[DONE]');
    const last = text.trim().split('\n\n').at(-1)!;
    expect(last).toMatch(/^event: response\.completed\ndata: /);
  });

  it('carries text.format json_schema as response_format, and a forced function as a named tool choice', async () => {
    const schema = {
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
      additionalProperties: false,
    };
    const res = await client.responses.create({
      model: DEEPSEEK,
      input: 'Answer as JSON',
      text: { format: { type: 'json_schema', name: 'reply', schema, strict: true } },
    });
    expect(JSON.parse(res.output_text)).toEqual({ message: `Hello from ${DEEPSEEK}` });
    expect(res.text?.format).toMatchObject({ type: 'json_schema', name: 'reply' });
    expect(openai.requests.at(-1)!.body!.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'reply', schema, strict: true },
    });
    // On a Claude channel the same format becomes Claude's structured output.
    const structured = await client.responses.parse({
      model: CLAUDE,
      input: 'Answer as JSON',
      text: { format: { type: 'json_schema', name: 'reply', schema, strict: true } },
    });
    expect(structured.output_parsed).toEqual({ message: `Hello from ${CLAUDE}` });
    expect(anthropic.requests.at(-1)!.body!.output_config).toEqual({
      format: { type: 'json_schema', schema },
    });
    await client.responses.create({
      model: CLAUDE,
      input: 'What is the weather in Rome?',
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false,
    });
    expect(anthropic.requests.at(-1)!.body!.tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
  });

  it('refuses previous_response_id with a clear 400 (nothing is stored), and passes upstream errors in OpenAI envelope', async () => {
    await expect(
      client.responses.create({ model: CLAUDE, input: 'and then?', previous_response_id: 'resp_abc' }),
    ).rejects.toMatchObject({
      status: 400,
      param: 'previous_response_id',
      message: expect.stringContaining('previous_response_id is not supported on this channel'),
    });
    expect(anthropic.requests).toHaveLength(0);

    anthropic.on({
      respond: { status: 400, error: { type: 'invalid_request_error', message: 'prompt is too long' } },
      times: 1,
    });
    await expect(client.responses.create({ model: CLAUDE, input: 'x' })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('prompt is too long'),
    });
  });

  it('still sends /v1/responses natively to an OpenAI channel', async () => {
    const res = await client.responses.create({ model: GPT, input: 'hi' });
    expect(res.output_text).toBe(`Hello from ${GPT}`);
    expect(openai.requests.at(-1)!.path).toBe('/v1/responses');
  });

  it('names the endpoint when the model has channels but none can serve it', async () => {
    // A Claude channel has no embeddings and no bridge for them.
    await expect(client.embeddings.create({ model: CLAUDE, input: 'x' })).rejects.toMatchObject({
      status: 400,
      code: 'unsupported_endpoint',
      message: expect.stringContaining(
        `no channel for model ${CLAUDE} in group default can serve /v1/embeddings`,
      ),
    });
    // An administrator's key pinned to the Claude channel: the same, said of that channel; Responses pass.
    const admin = await seedUser(stack, { quota: 1_000_000, role: 10 });
    const adminToken = await seedToken(stack, admin.id, { unlimited: true });
    const pinned = new OpenAI({
      baseURL: `${stack.relays[0]!.httpUrl}/v1`,
      apiKey: `sk-${adminToken.key}-${claudeChannelId}`,
      maxRetries: 0,
    });
    await expect(pinned.embeddings.create({ model: CLAUDE, input: 'x' })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('the pinned channel cannot serve /v1/embeddings requests'),
    });
    expect((await pinned.responses.create({ model: CLAUDE, input: 'hi' })).output_text).toBe(
      `Hello from ${CLAUDE}`,
    );
  });
});
