/**
 * The official openai SDK against the relay in front of a Cohere channel (type 34): chat converted to Cohere v2
 * and back (whole, streamed, with a tool call round trip), embeddings through /v2/embed, rerank (plain fetch: the
 * SDK has none) through /v2/rerank in new-api's answer shape, each billed exactly; Cohere's errors reach the client
 * in OpenAI's envelope.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRelayClient } from '#app/grpc/relay-client.server.ts';
import { tokenCounter } from '../../relay-service/src/core/tokenize.ts';
import { type FakeCohere, PREAMBLE_TOKENS, startFakeCohere } from '../fakes/cohere-upstream.ts';
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
let fake: FakeCohere;
let client: OpenAI;
let userId: number;
let key: string;
const CHAT = 'command-a-03-2025';
const EMBED = 'embed-v4.0';
const RERANK = 'rerank-v3.5';

beforeAll(async () => {
  fake = await startFakeCohere({ keys: ['co-channel-key'] });
  stack = await startStack({ suffix: 'relay_cohere', env: { INTERNAL_API_SECRET: SECRET } });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  key = (await seedToken(stack, userId, { unlimited: true })).key;
  await seedChannel(stack, {
    type: 34,
    baseUrl: fake.url,
    key: 'co-channel-key',
    models: [CHAT, EMBED, RERANK],
  });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ [CHAT]: 2, [EMBED]: 3, [RERANK]: 1 }),
    CompletionRatio: JSON.stringify({ [CHAT]: 4 }),
  });
  client = new OpenAI({ baseURL: `${stack.relays[0]!.httpUrl}/v1`, apiKey: `sk-${key}`, maxRetries: 0 });
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

describe('openai SDK through the relay to a Cohere channel', () => {
  it('chat: converted to v2, answered in OpenAI shape, billed on usage.tokens', async () => {
    const res = await client.chat.completions.create({
      model: CHAT,
      temperature: 0.2,
      top_p: 0.5,
      stop: ['END'],
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello there' },
      ],
    });
    expect(res.choices[0]?.message.content).toBe(`Hello from ${CHAT}`);
    expect(res.choices[0]?.finish_reason).toBe('stop');
    // 4 words billed by Cohere, 4 + the preamble read by the model; 3 word deltas out.
    expect(res.usage).toMatchObject({ prompt_tokens: 4 + PREAMBLE_TOKENS, completion_tokens: 3 });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v2/chat');
    expect(sent.headers.authorization).toBe('Bearer co-channel-key');
    expect(sent.body).toEqual({
      model: CHAT,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello there' },
      ],
      temperature: 0.2,
      p: 0.5,
      stop_sequences: ['END'],
    });
    const log = await lastLog(CHAT);
    expect(Number(log.prompt_tokens)).toBe(68);
    expect(Number(log.completion_tokens)).toBe(3);
    // (68 + 3·4)·2 = 160
    expect(Number(log.quota)).toBe(160);
    expect(log.is_stream).toBe(false);
  });

  it('chat stream: SSE events become chunks with a usage chunk; billed the same way', async () => {
    const stream = await client.chat.completions.create({
      model: CHAT,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe(`Hello from ${CHAT}`);
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 1 + PREAMBLE_TOKENS, completion_tokens: 3 });
    expect(fake.requests.at(-1)?.body?.stream).toBe(true);
    const log = await lastLog(CHAT);
    expect(log.is_stream).toBe(true);
    expect(Number(log.prompt_tokens)).toBe(65);
    // (65 + 3·4)·2 = 154
    expect(Number(log.quota)).toBe(154);
  });

  it('a streamed tool call and its result round-trip as Cohere tool_plan, tool_calls and tool messages', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } },
    ];
    const first = await client.chat.completions
      .stream({ model: CHAT, messages: [{ role: 'user', content: 'weather in Lyon' }], tools })
      .finalChatCompletion();
    const msg = first.choices[0]!.message;
    const call = msg.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(msg.content).toBe('I will check the weather.');
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ location: 'Lyon' });
    // Two argument fragments out; 3 words + the preamble in: (67 + 2·4)·2 = 150.
    expect(Number((await lastLog(CHAT)).quota)).toBe(150);

    await client.chat.completions.create({
      model: CHAT,
      messages: [
        { role: 'user', content: 'weather in Lyon' },
        msg as OpenAI.ChatCompletionMessageParam,
        { role: 'tool', tool_call_id: call!.id, content: '21°C' },
      ],
      tools,
    });
    const messages = fake.requests.at(-1)?.body?.messages as Record<string, unknown>[];
    expect(messages[1]).toEqual({
      role: 'assistant',
      tool_plan: 'I will check the weather.',
      tool_calls: [
        {
          id: call!.id,
          type: 'function',
          function: { name: 'get_weather', arguments: '{"location":"Lyon"}' },
        },
      ],
    });
    expect(messages[2]).toEqual({
      role: 'tool',
      tool_call_id: call!.id,
      content: [{ type: 'text', text: '21°C' }],
    });
  });

  it('embeddings through /v2/embed (base64 as the SDK asks), billed on billed_units.input_tokens', async () => {
    const res = await client.embeddings.create({ model: EMBED, input: ['hello world', 'bye'] });
    expect(res.data).toHaveLength(2);
    // The fake's vector for "hello world": [11/256, 2/256, 0.5, -0.25], exact in float32.
    expect(res.data[0]?.embedding).toEqual([11 / 256, 2 / 256, 0.5, -0.25]);
    expect(fake.requests.at(-1)?.body).toEqual({
      model: EMBED,
      texts: ['hello world', 'bye'],
      input_type: 'search_document',
      embedding_types: ['float'],
    });
    const log = await lastLog(EMBED);
    expect(Number(log.prompt_tokens)).toBe(3);
    expect(Number(log.completion_tokens)).toBe(0);
    expect(Number(log.quota)).toBe(9);
  });

  it('rerank through /v2/rerank answers results with documents; tokens counted locally (search units only)', async () => {
    const body = {
      model: RERANK,
      query: 'capital city',
      documents: ['a city by the sea', 'the capital city of France', 'nothing here'],
      top_n: 2,
    };
    const res = await fetch(`${stack.relays[0]!.httpUrl}/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      id: expect.any(String),
      results: [
        { index: 1, relevance_score: 1, document: { text: 'the capital city of France' } },
        { index: 0, relevance_score: 0.5, document: { text: 'a city by the sea' } },
      ],
      usage: { search_units: 1 },
    });
    expect(fake.requests.at(-1)?.body).toEqual(body);
    const counter = await tokenCounter(RERANK);
    const tokens = [body.query, ...body.documents].reduce((n, t) => n + counter.count(t), 0);
    const log = await lastLog(RERANK);
    expect(Number(log.prompt_tokens)).toBe(tokens);
    expect(Number(log.quota)).toBe(tokens);
  });

  it("Cohere's errors reach the OpenAI client in OpenAI's envelope with the status", async () => {
    fake.on({
      respond: { status: 400, message: 'invalid request: message must be at least 1 token long' },
      times: 1,
    });
    const err = await client.chat.completions
      .create({ model: CHAT, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/at least 1 token long/);
    expect(err.error).toMatchObject({ type: 'invalid_request_error' });

    // A rate limit keeps its status; the relay words the message itself (core/upstream.ts clientMessage).
    fake.on({ respond: { status: 429, message: 'You are using a Trial key' }, times: 1 });
    const limited = await client.embeddings.create({ model: EMBED, input: 'x' }).catch((e) => e);
    expect(limited.status).toBe(429);
    expect(limited.error).toMatchObject({ type: 'rate_limit_error' });
  });

  it('the channel test (chat, then an embedding model) and the upstream model list go through the adaptor', async () => {
    const grpc = createRelayClient(stack.relays[0]!.grpcAddress, {
      internalSecret: SECRET,
      timeoutMs: 20_000,
    });
    try {
      const [ch] = await stack.sql<{ id: number }>('select id from channels where type = 34');
      const chat = await grpc.testChannel(Number(ch!.id), '');
      expect(chat).toMatchObject({ success: true, model: CHAT });
      expect(fake.requests.at(-1)?.path).toBe('/v2/chat');
      expect((await grpc.testChannel(Number(ch!.id), EMBED)).success).toBe(true);
      expect(fake.requests.at(-1)?.path).toBe('/v2/embed');
      const models = await grpc.fetchUpstreamModels({ channelId: Number(ch!.id) });
      expect(models).toEqual(['command-a-03-2025', 'command-r-plus-08-2024', 'embed-v4.0', 'rerank-v3.5']);
      expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/models' });
    } finally {
      grpc.close();
    }
  });
});
