/**
 * Gemini's embedding endpoints and Gemini's OpenAI-compatible path through the relay:
 * - `@google/genai`'s `ai.models.embedContent` (one and several contents; the SDK calls `:batchEmbedContents`) and a
 *   REST `:embedContent`, natively on a Gemini channel (type 24, passed through, input counted locally since
 *   Gemini reports no usage) and bridged to `/v1/embeddings` on an OpenAI channel (billed by its usage);
 * - the `openai` SDK's embeddings through a Gemini channel, answered WITH `usage` (the local count billed);
 * - the `openai` SDK with baseURL `<relay>/v1beta/openai/`: chat, stream, embeddings and models like `/v1`.
 * Each call's log row is checked: prompt tokens and quota = P · ModelRatio (embeddings have no completion).
 */
import { ApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countTextTokens } from '../../relay-service/src/core/tokenize.ts';
import { type FakeGemini, startFakeGemini } from '../fakes/gemini-upstream.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
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
let geminiFake: FakeGemini;
let openaiFake: FakeOpenAI;
let ai: GoogleGenAI;
let compat: OpenAI;
let openai: OpenAI;
let relayUrl: string;
let apiKey: string;
let userId: number;

const GEMINI_EMBED = 'gemini-embedding-001';
const OPENAI_EMBED = 'text-embedding-3-small';
const CHAT = 'gpt-4o-mini';
const RATIO: Record<string, number> = { [GEMINI_EMBED]: 2.5, [OPENAI_EMBED]: 1.5, [CHAT]: 0.075 };

beforeAll(async () => {
  geminiFake = await startFakeGemini({ keys: ['gemini-channel-key'] });
  openaiFake = await startFakeOpenAI();
  stack = await startStack({ suffix: 'relay_gemini_embed' });
  userId = (await seedUser(stack, { quota: 100_000_000 })).id;
  const token = await seedToken(stack, userId, { remainQuota: 50_000_000 });
  await seedChannel(stack, {
    type: 24,
    baseUrl: geminiFake.url,
    key: 'gemini-channel-key',
    models: [GEMINI_EMBED, 'my-embedder'],
    modelMapping: { 'my-embedder': GEMINI_EMBED },
  });
  await seedChannel(stack, { type: 1, baseUrl: openaiFake.url, models: [OPENAI_EMBED, CHAT] });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ ...RATIO, 'my-embedder': 2.5 }),
    CompletionRatio: JSON.stringify({ [CHAT]: 4 }),
  });
  relayUrl = stack.relays[0]!.httpUrl;
  apiKey = `sk-${token.key}`;
  ai = new GoogleGenAI({ apiKey, apiVersion: 'v1beta', httpOptions: { baseUrl: relayUrl } });
  compat = new OpenAI({ baseURL: `${relayUrl}/v1beta/openai/`, apiKey, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${relayUrl}/v1`, apiKey, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await geminiFake?.close();
  await openaiFake?.close();
});

beforeEach(() => {
  geminiFake.reset();
  openaiFake.reset();
});

const lastLog = (model: string) => lastLogOf(stack, userId, model);
const tokens = async (texts: string[], model: string) => {
  let n = 0;
  for (const t of texts) n += await countTextTokens(t, model);
  return n;
};
/** P · ModelRatio (at least 1, as the relay bills any priced call). */
const quota = (prompt: number, model: string) => Math.max(1, Math.round(prompt * RATIO[model]!));

describe('@google/genai embedContent through the relay', () => {
  it('natively on a Gemini channel: one content, passed through, input counted locally and billed', async () => {
    const res = await ai.models.embedContent({
      model: GEMINI_EMBED,
      contents: 'What is the meaning of life?',
      config: { outputDimensionality: 4, taskType: 'RETRIEVAL_QUERY' },
    });
    expect(res.embeddings).toHaveLength(1);
    expect(res.embeddings?.[0]?.values).toHaveLength(4);
    const sent = geminiFake.requests.at(-1)!;
    expect(sent.path).toBe(`/v1beta/models/${GEMINI_EMBED}:batchEmbedContents`);
    expect(sent.headers['x-goog-api-key']).toBe('gemini-channel-key');
    expect(sent.body).toEqual({
      requests: [
        {
          model: `models/${GEMINI_EMBED}`,
          content: { parts: [{ text: 'What is the meaning of life?' }], role: 'user' },
          taskType: 'RETRIEVAL_QUERY',
          outputDimensionality: 4,
        },
      ],
    });
    const p = await tokens(['What is the meaning of life?'], GEMINI_EMBED);
    expect(p).toBeGreaterThan(0);
    const log = await lastLog(GEMINI_EMBED);
    expect(Number(log.prompt_tokens)).toBe(p);
    expect(Number(log.completion_tokens)).toBe(0);
    expect(Number(log.quota)).toBe(quota(p, GEMINI_EMBED));
  });

  it('natively: several contents in one batch, in order; a mapped model is renamed in every request', async () => {
    const texts = ['first text', 'the second, longer text', 'third'];
    const res = await ai.models.embedContent({ model: 'my-embedder', contents: texts });
    expect(res.embeddings).toHaveLength(3);
    const sent = geminiFake.requests.at(-1)!;
    expect(sent.path).toBe(`/v1beta/models/${GEMINI_EMBED}:batchEmbedContents`);
    const reqs = (sent.body as { requests: { model: string }[] }).requests;
    expect(reqs.map((r) => r.model)).toEqual(Array(3).fill(`models/${GEMINI_EMBED}`));
    const p = await tokens(texts, 'my-embedder');
    const log = await lastLog('my-embedder');
    expect(Number(log.prompt_tokens)).toBe(p);
    expect(Number(log.quota)).toBe(quota(p, GEMINI_EMBED));
  });

  it('REST :embedContent natively: {embedding:{values}} as Google answers', async () => {
    const r = await fetch(`${relayUrl}/v1beta/models/${GEMINI_EMBED}:embedContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ content: { parts: [{ text: 'hello world' }] }, outputDimensionality: 3 }),
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { embedding: { values: number[] } };
    expect(body.embedding.values).toHaveLength(3);
    const sent = geminiFake.requests.at(-1)!;
    expect(sent.path).toBe(`/v1beta/models/${GEMINI_EMBED}:embedContent`);
    expect(sent.body).toEqual({
      content: { parts: [{ text: 'hello world' }] },
      outputDimensionality: 3,
      model: `models/${GEMINI_EMBED}`,
    });
    const log = await lastLog(GEMINI_EMBED);
    expect(Number(log.prompt_tokens)).toBe(await tokens(['hello world'], GEMINI_EMBED));
  });

  it('bridged to an OpenAI channel: /v1/embeddings upstream, Gemini answer back, billed by its usage', async () => {
    openaiFake.on({ respond: { usage: { prompt_tokens: 17 } }, times: 1 });
    const res = await ai.models.embedContent({
      model: OPENAI_EMBED,
      contents: ['alpha', 'beta'],
      config: { outputDimensionality: 5 },
    });
    expect(res.embeddings?.map((e) => e.values?.length)).toEqual([5, 5]);
    const sent = openaiFake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/embeddings');
    expect(sent.body).toEqual({ input: ['alpha', 'beta'], dimensions: 5, model: OPENAI_EMBED });
    const log = await lastLog(OPENAI_EMBED);
    expect(Number(log.prompt_tokens)).toBe(17);
    expect(Number(log.quota)).toBe(quota(17, OPENAI_EMBED));

    openaiFake.on({ respond: { usage: { prompt_tokens: 4 } }, times: 1 });
    const r = await fetch(`${relayUrl}/v1beta/models/${OPENAI_EMBED}:embedContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ content: { parts: [{ text: 'one' }] } }),
    });
    const single = (await r.json()) as { embedding: { values: number[] } };
    expect(single.embedding.values).toHaveLength(8);
    expect(Number((await lastLog(OPENAI_EMBED)).prompt_tokens)).toBe(4);
  });

  it('a request without content is refused in Google’s envelope, before any upstream call', async () => {
    const r = await fetch(`${relayUrl}/v1beta/models/${GEMINI_EMBED}:batchEmbedContents`, {
      method: 'POST',
      headers: { 'x-goog-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ requests: [] }),
    });
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual({
      error: {
        code: 400,
        message: '* BatchEmbedContentsRequest.requests: requests is empty',
        status: 'INVALID_ARGUMENT',
      },
    });
    expect(geminiFake.requests).toHaveLength(0);
    const sdkErr = await ai.models
      .embedContent({ model: 'no-such-embedder', contents: 'x' })
      .catch((e: unknown) => e);
    expect(sdkErr).toBeInstanceOf(ApiError);
    expect((sdkErr as ApiError).status).toBe(503);
  });
});

describe('openai SDK embeddings through a Gemini channel', () => {
  it('answer WITH usage (Gemini reports none: the local count), billed by it', async () => {
    const texts = ['The quick brown fox', 'jumps over the lazy dog'];
    const res = await openai.embeddings.create({ model: GEMINI_EMBED, input: texts });
    expect(res.data).toHaveLength(2);
    const p = await tokens(texts, GEMINI_EMBED);
    expect(res.usage).toEqual({ prompt_tokens: p, total_tokens: p });
    expect(geminiFake.requests.at(-1)?.path).toBe(`/v1beta/models/${GEMINI_EMBED}:batchEmbedContents`);
    const log = await lastLog(GEMINI_EMBED);
    expect(Number(log.prompt_tokens)).toBe(p);
    expect(Number(log.quota)).toBe(quota(p, GEMINI_EMBED));
  });
});

describe("openai SDK with Gemini's OpenAI-compatible base URL <relay>/v1beta/openai/", () => {
  it('chat completions, non-stream and stream, billed like /v1', async () => {
    openaiFake.on({ respond: { usage: { prompt_tokens: 11, completion_tokens: 7 } }, times: 1 });
    const res = await compat.chat.completions.create({
      model: CHAT,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.choices[0]?.message.content).toBeTruthy();
    expect(openaiFake.requests.at(-1)?.path).toBe('/v1/chat/completions');
    let log = await lastLog(CHAT);
    expect(Number(log.prompt_tokens)).toBe(11);
    expect(Number(log.completion_tokens)).toBe(7);
    expect(Number(log.quota)).toBe(Math.round((11 + 7 * 4) * RATIO[CHAT]!));

    openaiFake.on({ respond: { usage: { prompt_tokens: 13, completion_tokens: 5 } }, times: 1 });
    const stream = await compat.chat.completions.create({
      model: CHAT,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).toBeTruthy();
    expect(usage).toMatchObject({ prompt_tokens: 13, completion_tokens: 5 });
    log = await lastLog(CHAT);
    expect(Number(log.prompt_tokens)).toBe(13);
    expect(Number(log.is_stream)).toBe(1);
  });

  it('embeddings (a Gemini channel, with usage) and models, with the Bearer key', async () => {
    const res = await compat.embeddings.create({ model: GEMINI_EMBED, input: 'hello there' });
    const p = await tokens(['hello there'], GEMINI_EMBED);
    expect(res.usage).toEqual({ prompt_tokens: p, total_tokens: p });
    expect(Number((await lastLog(GEMINI_EMBED)).quota)).toBe(quota(p, GEMINI_EMBED));
    const models = [];
    for await (const m of compat.models.list()) models.push(m.id);
    expect(models).toEqual(expect.arrayContaining([GEMINI_EMBED, OPENAI_EMBED, CHAT]));
    expect((await compat.models.retrieve(CHAT)).id).toBe(CHAT);
  });

  it('errors in OpenAI’s envelope (bad key, unknown path)', async () => {
    const bad = new OpenAI({ baseURL: `${relayUrl}/v1beta/openai/`, apiKey: 'sk-nope', maxRetries: 0 });
    const err = await bad.chat.completions
      .create({ model: CHAT, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    const r = await fetch(`${relayUrl}/v1beta/openai/nothing-here`, { method: 'POST' });
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
  });
});
