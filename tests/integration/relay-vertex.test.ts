/**
 * Vertex AI channels (type 41) through the real relay. The channel key is a service-account JSON credential made
 * for this run (fresh RSA key pair); the relay signs a JWT assertion, exchanges it at the credential's token_uri
 * (the fake checks the signature with the account's public key), caches the token and sends it as a Bearer on
 * every call. Claude on Vertex: the openai SDK (chat, plain and streamed) and the Anthropic SDK (/v1/messages,
 * native). Gemini on Vertex: the openai SDK and @google/genai (native generateContent, plain and streamed).
 * Each call is billed exactly from the provider's usage. Errors: a Google error envelope, a revoked token (401,
 * healed by a new exchange), a credential the token endpoint refuses (retried on another channel, or a clear
 * error), and a key that is not a service-account credential.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeVertex, startFakeVertex } from '../fakes/vertex-upstream.ts';
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

const CLAUDE = 'claude-sonnet-4-20250514';
const GEMINI = 'gemini-2.5-flash';
const RETRY_MODEL = 'claude-3-7-sonnet-20250219';
const REFUSED_MODEL = 'claude-opus-4-20250514';
const BROKEN_MODEL = 'gemini-2.0-flash';
const PROJECT = 'switchyard-relay-test';

let stack: Stack;
let fake: FakeVertex;
let client: OpenAI;
let claude: Anthropic;
let genai: GoogleGenAI;
let userId: number;
let goodRetry: number;
let badRetry: number;
let mainKey: string;

beforeAll(async () => {
  fake = await startFakeVertex();
  stack = await startStack({ suffix: 'relay_vertex' });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  const token = await seedToken(stack, userId, { unlimited: true });
  mainKey = fake.serviceAccount(PROJECT);
  await seedChannel(stack, {
    type: 41,
    baseUrl: fake.url,
    key: mainKey,
    other: JSON.stringify({ default: 'us-east5', [GEMINI]: 'global' }),
    models: [CLAUDE, GEMINI],
  });
  badRetry = (
    await seedChannel(stack, {
      type: 41,
      baseUrl: fake.url,
      key: fake.serviceAccount(PROJECT, { registered: false }),
      other: 'europe-west1',
      models: [RETRY_MODEL],
      priority: 10,
    })
  ).id;
  goodRetry = (
    await seedChannel(stack, {
      type: 41,
      baseUrl: fake.url,
      key: fake.serviceAccount(PROJECT),
      other: 'europe-west1',
      models: [RETRY_MODEL],
      priority: 0,
    })
  ).id;
  await seedChannel(stack, {
    type: 41,
    baseUrl: fake.url,
    key: fake.serviceAccount(PROJECT, { registered: false }),
    other: 'us-east5',
    models: [REFUSED_MODEL],
  });
  await seedChannel(stack, {
    type: 41,
    baseUrl: fake.url,
    key: JSON.stringify({ type: 'service_account', project_id: PROJECT }),
    other: 'us-central1',
    models: [BROKEN_MODEL],
  });
  const all = [CLAUDE, GEMINI, RETRY_MODEL, REFUSED_MODEL, BROKEN_MODEL];
  const ratio = (v: number, over: Record<string, number> = {}) =>
    JSON.stringify({ ...Object.fromEntries(all.map((m) => [m, v])), ...over });
  await setOptions(stack, {
    ModelRatio: ratio(1.5, { [GEMINI]: 0.5 }),
    CompletionRatio: ratio(5, { [GEMINI]: 8 }),
    CacheRatio: ratio(0.1, { [GEMINI]: 0.25 }),
    CreateCacheRatio: ratio(1.25),
    RetryTimes: '1',
    AutomaticDisableChannelEnabled: 'false',
  });
  const relay = stack.relays[0]!.httpUrl;
  client = new OpenAI({ baseURL: `${relay}/v1`, apiKey: `sk-${token.key}`, maxRetries: 0 });
  claude = new Anthropic({ baseURL: relay, apiKey: `sk-${token.key}`, maxRetries: 0 });
  genai = new GoogleGenAI({
    apiKey: `sk-${token.key}`,
    apiVersion: 'v1beta',
    httpOptions: { baseUrl: relay },
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
const CLAUDE_PATH = `/v1/projects/${PROJECT}/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514`;
const GEMINI_PATH = `/v1/projects/${PROJECT}/locations/global/publishers/google/models/${GEMINI}`;

describe('Claude on Vertex', () => {
  it('openai chat: token exchanged once, Bearer sent, rawPredict with vertex-2023-10-16, billed with cache', async () => {
    fake.claude.on({
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
      model: CLAUDE,
      messages: [
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'Hello' },
      ],
    });
    expect(res.choices[0]?.message.content).toBe('Bonjour');
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe(`${CLAUDE_PATH}:rawPredict`);
    expect(sent.headers.authorization).toMatch(/^Bearer ya29\.fake-/);
    expect(sent.headers['x-goog-user-project']).toBe(PROJECT);
    expect(sent.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', system: 'Answer in French.' });
    expect(sent.body).not.toHaveProperty('model');
    expect(JSON.stringify(sent.headers)).not.toContain('PRIVATE KEY');
    const log = await lastLog(CLAUDE);
    expect(Number(log.prompt_tokens)).toBe(1300);
    expect(Number(log.completion_tokens)).toBe(50);
    // (100 + 1000·0.1 + 200·1.25 + 50·5)·1.5 = 1050
    expect(Number(log.quota)).toBe(1050);
    expect(JSON.parse(String(log.other))).toMatchObject({ cache_tokens: 1000, cache_creation_tokens: 200 });

    // The cached token serves the next calls: no second exchange.
    const exchanges = fake.tokenExchanges;
    await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'again' }] });
    expect(fake.tokenExchanges).toBe(exchanges);
  });

  it('openai chat stream: streamRawPredict with stream:true, Claude events converted, usage billed', async () => {
    fake.claude.on({ respond: { content: 'one two three', usage: { input_tokens: 20, output_tokens: 8 } } });
    const stream = await client.chat.completions.create({
      model: CLAUDE,
      messages: [{ role: 'user', content: 'count' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('one two three');
    expect(usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 8 });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe(`${CLAUDE_PATH}:streamRawPredict`);
    expect(sent.body?.stream).toBe(true);
    const log = await lastLog(CLAUDE);
    expect(log.is_stream).toBe(true);
    // (20 + 8·5)·1.5 = 90
    expect(Number(log.quota)).toBe(90);
  });

  it('Anthropic SDK: the Messages body passes through (cache_control, anthropic-beta kept), billed', async () => {
    fake.claude.on({
      respond: { usage: { input_tokens: 10, cache_read_input_tokens: 500, output_tokens: 4 } },
    });
    const msg = await claude.messages.create(
      {
        model: CLAUDE,
        max_tokens: 128,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'Hello' }],
      },
      { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31' } },
    );
    expect(msg.content).toEqual([{ type: 'text', text: 'Hello from claude-sonnet-4@20250514' }]);
    expect(msg.usage.cache_read_input_tokens).toBe(500);
    const sent = fake.requests.at(-1)!;
    expect(sent.body).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 128,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(sent.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
    const log = await lastLog(CLAUDE);
    expect(Number(log.prompt_tokens)).toBe(510);
    // (10 + 500·0.1 + 4·5)·1.5 = 120
    expect(Number(log.quota)).toBe(120);
  });

  it('Anthropic SDK stream: Claude’s events pass through, tools intact, billed', async () => {
    fake.claude.on({ respond: { usage: { input_tokens: 30, output_tokens: 6 } } });
    const final = await claude.messages
      .stream({
        model: CLAUDE,
        max_tokens: 256,
        tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
        messages: [{ role: 'user', content: 'weather in Rome' }],
      })
      .finalMessage();
    const use = final.content.find((b) => b.type === 'tool_use');
    expect(use?.type === 'tool_use' && use.input).toEqual({ location: 'Rome' });
    expect(fake.requests.at(-1)?.path).toBe(`${CLAUDE_PATH}:streamRawPredict`);
    const log = await lastLog(CLAUDE);
    expect(log.is_stream).toBe(true);
    // (30 + 6·5)·1.5 = 90
    expect(Number(log.quota)).toBe(90);
  });

  it('a Google error envelope reaches the OpenAI client with its status and message', async () => {
    fake.on({
      error: {
        status: 400,
        googleStatus: 'FAILED_PRECONDITION',
        message: 'Project is not allowlisted for this model',
      },
    });
    const err = await client.chat.completions
      .create({ model: CLAUDE, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/not allowlisted/);
  });
});

describe('Gemini on Vertex', () => {
  it('openai chat on the global endpoint: generateContent, Gemini usage with cached tokens billed', async () => {
    fake.gemini.on({
      model: GEMINI,
      respond: {
        content: 'Hi',
        usage: { promptTokenCount: 100, cachedContentTokenCount: 40, candidatesTokenCount: 20 },
      },
    });
    const res = await client.chat.completions.create({
      model: GEMINI,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(res.choices[0]?.message.content).toBe('Hi');
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe(`${GEMINI_PATH}:generateContent`);
    expect(sent.headers.authorization).toMatch(/^Bearer ya29\.fake-/);
    expect(sent.body?.contents).toEqual([{ role: 'user', parts: [{ text: 'Hello' }] }]);
    const log = await lastLog(GEMINI);
    expect(Number(log.prompt_tokens)).toBe(100);
    expect(Number(log.completion_tokens)).toBe(20);
    // (60 + 40·0.25 + 20·8)·0.5 = 115
    expect(Number(log.quota)).toBe(115);
  });

  it('openai chat stream: streamGenerateContent?alt=sse converted to chunks, billed', async () => {
    fake.gemini.on({ model: GEMINI, respond: { usage: { promptTokenCount: 12, candidatesTokenCount: 3 } } });
    const stream = await client.chat.completions.create({
      model: GEMINI,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe(`Hello from ${GEMINI}`);
    const sent = fake.requests.at(-1)!;
    expect(`${sent.path}${sent.search}`).toBe(`${GEMINI_PATH}:streamGenerateContent?alt=sse`);
    const log = await lastLog(GEMINI);
    expect(log.is_stream).toBe(true);
    // (12 + 3·8)·0.5 = 18
    expect(Number(log.quota)).toBe(18);
  });

  it('@google/genai natively: generateContent and generateContentStream pass through, billed', async () => {
    fake.gemini.on({
      model: GEMINI,
      respond: { usage: { promptTokenCount: 50, candidatesTokenCount: 10 } },
      times: 1,
    });
    const res = await genai.models.generateContent({
      model: GEMINI,
      contents: 'Hello',
      config: { systemInstruction: 'Answer briefly.', temperature: 0.3 },
    });
    expect(res.text).toBe(`Hello from ${GEMINI}`);
    expect(res.usageMetadata?.promptTokenCount).toBe(50);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe(`${GEMINI_PATH}:generateContent`);
    expect(sent.body).toMatchObject({
      systemInstruction: { parts: [{ text: 'Answer briefly.' }] },
      generationConfig: { temperature: 0.3 },
    });
    // (50 + 10·8)·0.5 = 65
    expect(Number((await lastLog(GEMINI)).quota)).toBe(65);

    fake.gemini.on({ model: GEMINI, respond: { usage: { promptTokenCount: 8, candidatesTokenCount: 4 } } });
    let text = '';
    for await (const chunk of await genai.models.generateContentStream({ model: GEMINI, contents: 'stream' }))
      text += chunk.text ?? '';
    expect(text).toBe(`Hello from ${GEMINI}`);
    expect(`${fake.requests.at(-1)!.path}${fake.requests.at(-1)!.search}`).toBe(
      `${GEMINI_PATH}:streamGenerateContent?alt=sse`,
    );
    const log = await lastLog(GEMINI);
    expect(log.is_stream).toBe(true);
    // (8 + 4·8)·0.5 = 20
    expect(Number(log.quota)).toBe(20);
  });
});

describe('Vertex credentials', () => {
  it('a revoked token is refused (401), dropped, and the next call exchanges a new one', async () => {
    await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'warm' }] });
    fake.revokeTokens();
    const before = fake.tokenExchanges;
    const err = await client.chat.completions
      .create({ model: CLAUDE, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(401);
    expect(err.message).not.toMatch(/ya29|PRIVATE KEY/);
    const res = await client.chat.completions.create({
      model: CLAUDE,
      messages: [{ role: 'user', content: 'y' }],
    });
    expect(res.choices[0]?.message.content).toBe('Hello from claude-sonnet-4@20250514');
    expect(fake.tokenExchanges).toBe(before + 1);
  });

  it('a credential the token endpoint refuses fails that channel; the call is retried on the next one', async () => {
    const res = await client.chat.completions.create({
      model: RETRY_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.choices[0]?.message.content).toBe('Hello from claude-3-7-sonnet@20250219');
    expect(fake.requests.at(-1)?.path).toBe(
      `/v1/projects/${PROJECT}/locations/europe-west1/publishers/anthropic/models/claude-3-7-sonnet@20250219:rawPredict`,
    );
    const log = await lastLog(RETRY_MODEL);
    expect(Number(log.channel_id)).toBe(goodRetry);
    expect(JSON.parse(String(log.other)).admin_info.use_channel).toEqual([
      String(badRetry),
      String(goodRetry),
    ]);
  });

  it('with no other channel the refusal is a clear error and no model call is made', async () => {
    const err = await claude.messages
      .create({ model: REFUSED_MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBe(401);
    expect(JSON.stringify(err.error)).toMatch(/credential/i);
    expect(JSON.stringify(err.error)).not.toContain('PRIVATE KEY');
    expect(fake.requests).toHaveLength(0);
  });

  it('a key that is not a service-account credential is a clear error naming what is missing', async () => {
    const err = await client.chat.completions
      .create({ model: BROKEN_MODEL, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.message).toMatch(/service-account JSON credential/);
    expect(err.message).toMatch(/private_key, client_email missing/);
    expect(fake.tokenExchanges).toBe(0);
  });
});
