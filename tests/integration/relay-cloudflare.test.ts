/**
 * The official openai SDK against the relay in front of a Cloudflare Workers AI channel (type 39): chat whole and
 * streamed and embeddings on the account's OpenAI-compatible endpoints, the account id from the channel's `other`
 * field, billed on the usage Workers AI reports and counted locally when a stream carries none; Cloudflare's error
 * envelope reaches the client in OpenAI's, and a channel without an account id is a clear configuration error.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRelayClient } from '#app/grpc/relay-client.server.ts';
import { countPromptTokens, countTextTokens } from '../../relay-service/src/core/tokenize.ts';
import { type FakeCloudflare, startFakeCloudflare } from '../fakes/cloudflare-upstream.ts';
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

const ACCOUNT = '023e105f4ecef8ad9ca31a8372d0c353';
const CHAT = '@cf/meta/llama-3.1-8b-instruct';
const EMBED = '@cf/baai/bge-large-en-v1.5';
const ORPHAN = '@cf/qwen/qwq-32b';

const SECRET = 'relay-internal-secret-0123456789abcdef';
let stack: Stack;
let fake: FakeCloudflare;
let client: OpenAI;
let userId: number;

beforeAll(async () => {
  fake = await startFakeCloudflare({ accountId: ACCOUNT, tokens: ['cf-channel-token'] });
  stack = await startStack({ suffix: 'relay_cloudflare', env: { INTERNAL_API_SECRET: SECRET } });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  const token = await seedToken(stack, userId, { unlimited: true });
  await seedChannel(stack, {
    type: 39,
    baseUrl: fake.url,
    key: 'cf-channel-token',
    other: ACCOUNT,
    models: [CHAT, EMBED],
  });
  // Misconfigured: no account id.
  await seedChannel(stack, { type: 39, baseUrl: fake.url, key: 'cf-channel-token', models: [ORPHAN] });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ [CHAT]: 2, [EMBED]: 5, [ORPHAN]: 1 }),
    CompletionRatio: JSON.stringify({ [CHAT]: 3 }),
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

describe('openai SDK through the relay to a Cloudflare Workers AI channel', () => {
  it('chat reaches /client/v4/accounts/{other}/ai/v1/chat/completions and is billed on its usage', async () => {
    const res = await client.chat.completions.create({
      model: CHAT,
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(res.choices[0]?.message.content).toBe(`Hello from ${CHAT}`);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe(`/client/v4/accounts/${ACCOUNT}/ai/v1/chat/completions`);
    expect(sent.headers.authorization).toBe('Bearer cf-channel-token');
    const log = await lastLog(CHAT);
    expect(Number(log.prompt_tokens)).toBe(2);
    expect(Number(log.completion_tokens)).toBe(3);
    // (2 + 3·3)·2 = 22
    expect(Number(log.quota)).toBe(22);
  });

  it('streams with the usage Workers AI reports', async () => {
    const stream = await client.chat.completions.create({
      model: CHAT,
      messages: [{ role: 'user', content: 'one two three' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe(`Hello from ${CHAT}`);
    expect(usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 3 });
    const log = await lastLog(CHAT);
    expect(log.is_stream).toBe(true);
    // (3 + 3·3)·2 = 24
    expect(Number(log.quota)).toBe(24);
  });

  it('a stream without usage is counted locally', async () => {
    fake.on({ respond: { omitUsage: true, content: 'Carve, sand and oil it.' }, times: 1 });
    const body = { model: CHAT, messages: [{ role: 'user' as const, content: 'How to make a spoon?' }] };
    let text = '';
    for await (const c of await client.chat.completions.create({ ...body, stream: true }))
      text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('Carve, sand and oil it.');
    const prompt = await countPromptTokens('chat', body, CHAT);
    const completion = await countTextTokens(text, CHAT);
    const log = await lastLog(CHAT);
    expect(Number(log.prompt_tokens)).toBe(prompt);
    expect(Number(log.completion_tokens)).toBe(completion);
    expect(Number(log.quota)).toBe((prompt + completion * 3) * 2);
  });

  it('embeddings go to /ai/v1/embeddings and are billed on the reported prompt tokens', async () => {
    const res = await client.embeddings.create({ model: EMBED, input: ['I love matcha', 'tea'] });
    expect(res.data).toHaveLength(2);
    expect(fake.requests.at(-1)?.path).toBe(`/client/v4/accounts/${ACCOUNT}/ai/v1/embeddings`);
    const log = await lastLog(EMBED);
    expect(Number(log.prompt_tokens)).toBe(4);
    expect(Number(log.quota)).toBe(20);
  });

  it("Cloudflare's error envelope reaches the client in OpenAI's; no account id is a configuration error", async () => {
    fake.on({
      respond: { status: 400, error: { message: 'Bad input', type: 'invalid_request_error' } },
      times: 1,
    });
    const err = await client.chat.completions
      .create({ model: CHAT, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/AiError: Bad input/);
    expect(err.error).toMatchObject({ code: '5006' });

    const before = fake.requests.length;
    const orphan = await client.chat.completions
      .create({ model: ORPHAN, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(orphan).toBeInstanceOf(OpenAI.APIError);
    expect(orphan.status).toBe(500);
    expect(orphan.message).toMatch(/account id in the "other" field/);
    expect(orphan.error).toMatchObject({ code: 'channel_config_invalid' });
    expect(fake.requests.length).toBe(before);
  });

  it('the channel test passes through the adaptor; without an account id it fails with the reason', async () => {
    const grpc = createRelayClient(stack.relays[0]!.grpcAddress, {
      internalSecret: SECRET,
      timeoutMs: 20_000,
    });
    try {
      const rows = await stack.sql<{ id: number; other: string }>(
        'select id, other from channels where type = 39',
      );
      const good = rows.find((r) => r.other === ACCOUNT)!;
      const orphan = rows.find((r) => r.other === '')!;
      expect(await grpc.testChannel(Number(good.id), '')).toMatchObject({ success: true, model: CHAT });
      const failed = await grpc.testChannel(Number(orphan.id), '');
      expect(failed.success).toBe(false);
      expect(failed.message).toMatch(/account id/);
    } finally {
      grpc.close();
    }
  });
});
