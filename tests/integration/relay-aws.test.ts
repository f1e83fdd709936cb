/**
 * AWS Bedrock Claude channels (type 33) through the real relay: the official openai SDK (chat, plain and
 * streamed) and the Anthropic SDK (/v1/messages, native passthrough, plain and streamed) reach a fake Bedrock
 * Runtime that checks the SigV4 signature as AWS does and streams AWS event-stream messages; every call is
 * billed from Claude's usage (cache reads and writes at their own ratios). Errors: a Bedrock ValidationException,
 * an exception inside the event stream, a wrong secret (403, retried on the next channel) and a malformed key.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeBedrock, startFakeBedrock } from '../fakes/aws-bedrock-upstream.ts';
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

const AK = 'AKIAIOSFODNN7EXAMPLE';
const SK = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const MODEL = 'claude-3-7-sonnet-20250219';
/** No eu. inference profile for this one: called by its plain id from eu-west-1. */
const EU_MODEL = 'claude-3-5-haiku-20241022';
const RETRY_MODEL = 'claude-sonnet-4-20250514';
const BROKEN_MODEL = 'claude-3-haiku-20240307';
const API_KEY_MODEL = 'claude-opus-4-1-20250805';
const BEDROCK_API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl';

let stack: Stack;
let fake: FakeBedrock;
let client: OpenAI;
let claude: Anthropic;
let userId: number;
let goodRetry: number;
let badRetry: number;

beforeAll(async () => {
  fake = await startFakeBedrock({ credentials: { [AK]: SK }, apiKeys: [BEDROCK_API_KEY] });
  stack = await startStack({ suffix: 'relay_aws' });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  const token = await seedToken(stack, userId, { unlimited: true });
  await seedChannel(stack, { type: 33, baseUrl: fake.url, key: `${AK}|${SK}|us-east-1`, models: [MODEL] });
  await seedChannel(stack, { type: 33, baseUrl: fake.url, key: `${AK}|${SK}|eu-west-1`, models: [EU_MODEL] });
  badRetry = (
    await seedChannel(stack, {
      type: 33,
      baseUrl: fake.url,
      key: `${AK}|not-the-secret|us-west-2`,
      models: [RETRY_MODEL],
      priority: 10,
    })
  ).id;
  goodRetry = (
    await seedChannel(stack, {
      type: 33,
      baseUrl: fake.url,
      key: `${AK}|${SK}|us-west-2`,
      models: [RETRY_MODEL],
      priority: 0,
    })
  ).id;
  await seedChannel(stack, { type: 33, baseUrl: fake.url, key: `${AK}:${SK}`, models: [BROKEN_MODEL] });
  await seedChannel(stack, {
    type: 33,
    baseUrl: fake.url,
    key: `${BEDROCK_API_KEY}|us-east-2`,
    models: [API_KEY_MODEL],
  });
  const ratios = (v: number) =>
    JSON.stringify(
      Object.fromEntries([MODEL, EU_MODEL, RETRY_MODEL, BROKEN_MODEL, API_KEY_MODEL].map((m) => [m, v])),
    );
  await setOptions(stack, {
    ModelRatio: ratios(1.5),
    CompletionRatio: ratios(5),
    CacheRatio: ratios(0.1),
    CreateCacheRatio: ratios(1.25),
    RetryTimes: '1',
    AutomaticDisableChannelEnabled: 'false',
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
});

beforeEach(async () => {
  fake.reset();
  await drained(stack);
});

const lastLog = (model: string) => lastLogOf(stack, userId, model);
const CACHED_USAGE = {
  input_tokens: 100,
  cache_read_input_tokens: 1000,
  cache_creation_input_tokens: 200,
  output_tokens: 50,
};
// (100 + 1000·0.1 + 200·1.25 + 50·5)·1.5 = 1050
const CACHED_QUOTA = 1050;

describe('openai SDK → relay → Bedrock (type 33)', () => {
  it('chat: SigV4-signed InvokeModel on the inference profile, Claude body, billed with cache tokens', async () => {
    fake.on({ respond: { content: 'Bonjour', usage: CACHED_USAGE } });
    const res = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'Hello' },
      ],
    });
    expect(res.choices[0]?.message.content).toBe('Bonjour');
    expect(res.usage?.prompt_tokens).toBe(1300);
    expect(res.usage?.completion_tokens).toBe(50);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/invoke');
    expect(sent.scope).toEqual({ region: 'us-east-1', service: 'bedrock', accessKeyId: AK });
    expect(sent.body).toMatchObject({
      anthropic_version: 'bedrock-2023-05-31',
      system: 'Answer in French.',
      max_tokens: 8192,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
    });
    expect(sent.body).not.toHaveProperty('model');
    expect(JSON.stringify(sent.headers)).not.toContain(SK);
    const log = await lastLog(MODEL);
    expect(Number(log.prompt_tokens)).toBe(1300);
    expect(Number(log.completion_tokens)).toBe(50);
    expect(Number(log.quota)).toBe(CACHED_QUOTA);
    const other = JSON.parse(String(log.other));
    expect(other.cache_tokens).toBe(1000);
    expect(other.cache_creation_tokens).toBe(200);
  });

  it('chat stream: event-stream chunks become OpenAI chunks with usage; plain model id outside a profile', async () => {
    fake.on({ respond: { content: 'one two three four', usage: { input_tokens: 20, output_tokens: 8 } } });
    const stream = await client.chat.completions.create({
      model: EU_MODEL,
      messages: [{ role: 'user', content: 'count' }],
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
    expect(text).toBe('one two three four');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 8 });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke-with-response-stream');
    expect(sent.scope?.region).toBe('eu-west-1');
    expect(sent.body).not.toHaveProperty('stream');
    const log = await lastLog(EU_MODEL);
    expect(log.is_stream).toBe(true);
    expect(Number(log.prompt_tokens)).toBe(20);
    expect(Number(log.completion_tokens)).toBe(8);
    // (20 + 8·5)·1.5 = 90
    expect(Number(log.quota)).toBe(90);
  });

  it('a Bedrock ValidationException reaches the client as an OpenAI error with its status and message', async () => {
    fake.on({
      error: {
        status: 400,
        type: 'ValidationException',
        message: 'messages: text content blocks must be non-empty',
      },
    });
    const err = await client.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/text content blocks must be non-empty/);
  });

  it('an exception inside the event stream ends the stream with an error, the text before it billed', async () => {
    fake.on({
      respond: { content: 'partial answer here', usage: { input_tokens: 10, output_tokens: 4 } },
      streamException: {
        type: 'throttlingException',
        message: 'Too many tokens, please wait before trying again.',
      },
    });
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'go' }],
      stream: true,
    });
    const err = await (async () => {
      for await (const _ of stream) {
        // drain
      }
    })().catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String(err.message)).toMatch(/Too many tokens/);
    const log = await lastLog(MODEL);
    expect(log.is_stream).toBe(true);
    expect(Number(log.prompt_tokens)).toBe(10);
  });
});

describe('Anthropic SDK → relay /v1/messages → Bedrock natively', () => {
  it('passes the Messages body through (cache_control kept) and returns Claude’s message, billed', async () => {
    fake.on({ respond: { usage: CACHED_USAGE } });
    const msg = await claude.messages.create(
      {
        model: MODEL,
        max_tokens: 256,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'Hello' }],
      },
      { headers: { 'anthropic-beta': 'token-efficient-tools-2025-02-19' } },
    );
    expect(msg.type).toBe('message');
    expect(msg.content).toEqual([
      { type: 'text', text: 'Hello from us.anthropic.claude-3-7-sonnet-20250219-v1:0' },
    ]);
    expect(msg.usage.cache_read_input_tokens).toBe(1000);
    const sent = fake.requests.at(-1)!;
    expect(sent.operation).toBe('invoke');
    expect(sent.body).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['token-efficient-tools-2025-02-19'],
      max_tokens: 256,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Hello' }],
    });
    const log = await lastLog(MODEL);
    expect(Number(log.prompt_tokens)).toBe(1300);
    expect(Number(log.quota)).toBe(CACHED_QUOTA);
  });

  it('streams Claude’s events out of the event stream, tools intact, billed from message_start/delta', async () => {
    fake.on({ respond: { usage: { input_tokens: 30, cache_read_input_tokens: 100, output_tokens: 6 } } });
    const stream = claude.messages.stream({
      model: MODEL,
      max_tokens: 512,
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
      messages: [{ role: 'user', content: 'weather in Rome' }],
    });
    const final = await stream.finalMessage();
    const use = final.content.find((b) => b.type === 'tool_use');
    expect(use?.type === 'tool_use' && use.input).toEqual({ location: 'Rome' });
    expect(final.stop_reason).toBe('tool_use');
    expect(fake.requests.at(-1)?.operation).toBe('invoke-with-response-stream');
    const log = await lastLog(MODEL);
    expect(log.is_stream).toBe(true);
    expect(Number(log.prompt_tokens)).toBe(130);
    expect(Number(log.completion_tokens)).toBe(6);
    // (30 + 100·0.1 + 6·5)·1.5 = 105
    expect(Number(log.quota)).toBe(105);
  });
});

describe('Bedrock credentials', () => {
  it('a wrong secret is refused by the signature check (403) and the call is retried on the next channel', async () => {
    const res = await client.chat.completions.create({
      model: RETRY_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.choices[0]?.message.content).toBe('Hello from us.anthropic.claude-sonnet-4-20250514-v1:0');
    expect(fake.requests).toHaveLength(2);
    const log = await lastLog(RETRY_MODEL);
    expect(Number(log.channel_id)).toBe(goodRetry);
    expect(JSON.parse(String(log.other)).admin_info.use_channel).toEqual([
      String(badRetry),
      String(goodRetry),
    ]);
  });

  it('a Bedrock API key (ApiKey|Region) is sent as a Bearer token', async () => {
    fake.on({ respond: { usage: { input_tokens: 4, output_tokens: 2 } } });
    const res = await client.chat.completions.create({
      model: API_KEY_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.choices[0]?.message.content).toBe('Hello from us.anthropic.claude-opus-4-1-20250805-v1:0');
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${BEDROCK_API_KEY}`);
    // (4 + 2·5)·1.5 = 21
    expect(Number((await lastLog(API_KEY_MODEL)).quota)).toBe(21);
  });

  it('a key that is not AccessKeyId|SecretAccessKey|Region is a clear error, nothing sent upstream', async () => {
    const err = await client.chat.completions
      .create({ model: BROKEN_MODEL, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.message).toMatch(/AccessKeyId\|SecretAccessKey\|Region/);
    expect(err.message).not.toContain(SK);
    expect(fake.requests).toHaveLength(0);
  });
});
