/**
 * Issue 13, item 7 (relay half): fields of the wrong type, and a count `n` no upstream serves, are refused at the
 * front with 400 in the route's envelope (OpenAI, Claude, Gemini), before a hold is computed from them or the
 * upstream chokes on them; nothing is billed. Found by tests/fuzz/relay.fuzz.test.ts (503 store_unavailable for
 * images with n: 2^40, upstream 500s for rerank documents that are text).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import {
  drained,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

let stack: Stack;
let fake: FakeOpenAI;
let key: string;
let userId: number;
let base: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  stack = await startStack({ suffix: 'relay_bad_input' });
  userId = (await seedUser(stack, { quota: 100_000_000 })).id;
  key = (await seedToken(stack, userId, { unlimited: true })).key;
  await seedChannel(stack, {
    baseUrl: fake.url,
    models: ['gpt-4o-mini', 'dall-e-3', 'rerank-1', 'text-embedding-3-small', 'tts-1'],
  });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({
      'gpt-4o-mini': 0.075,
      'rerank-1': 1,
      'text-embedding-3-small': 0.01,
      'tts-1': 7.5,
    }),
    ModelPrice: JSON.stringify({ 'dall-e-3': 0.04 }),
  });
  base = stack.relays[0]!.httpUrl;
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer sk-${key}`, 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  type ErrorBody = { type?: string; error: { type?: string; param?: string | null; status?: string } };
  return { status: res.status, json: (await res.json()) as ErrorBody };
}

async function consumeLogs(): Promise<number> {
  await drained(stack);
  const [row] = await stack.sql<{ n: string }>(
    `select count(*) as n from logs where user_id = ? and type = 2`,
    [userId],
  );
  return Number(row?.n);
}

describe('OpenAI format', () => {
  for (const [what, path, body, param] of [
    ['images n: 2^40', '/v1/images/generations', { model: 'dall-e-3', prompt: 'a cat', n: 2 ** 40 }, 'n'],
    ['images n: 1.5', '/v1/images/generations', { model: 'dall-e-3', prompt: 'a cat', n: 1.5 }, 'n'],
    ['images n: "two"', '/v1/images/generations', { model: 'dall-e-3', prompt: 'a cat', n: 'two' }, 'n'],
    [
      'images prompt: {}',
      '/v1/images/generations',
      { model: 'dall-e-3', prompt: { toString: 'x' } },
      'prompt',
    ],
    [
      'chat n: 0',
      '/v1/chat/completions',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], n: 0 },
      'n',
    ],
    ['chat messages: "hi"', '/v1/chat/completions', { model: 'gpt-4o-mini', messages: 'hi' }, 'messages'],
    [
      'chat temperature: "hot"',
      '/v1/chat/completions',
      { model: 'gpt-4o-mini', messages: [], temperature: 'hot' },
      'temperature',
    ],
    ['rerank query: ["q"]', '/v1/rerank', { model: 'rerank-1', query: ['q'], documents: ['a'] }, 'query'],
    ['rerank documents: "a"', '/v1/rerank', { model: 'rerank-1', query: 'q', documents: 'a' }, 'documents'],
    ['embeddings input: 5', '/v1/embeddings', { model: 'text-embedding-3-small', input: 5 }, 'input'],
    [
      'speech voice: {}',
      '/v1/audio/speech',
      { model: 'tts-1', input: 'hi', voice: { toString: 'x' } },
      'voice',
    ],
  ] as const)
    it(`${what} is a 400 naming the field`, async () => {
      const before = await consumeLogs();
      const { status, json } = await post(path, body);
      expect(status, JSON.stringify(json)).toBe(400);
      expect(json.error.type).toBe('invalid_request_error');
      expect(json.error.param).toBe(param);
      expect(await consumeLogs()).toBe(before);
    });

  it('the valid neighbours are served', async () => {
    expect((await post('/v1/images/generations', { model: 'dall-e-3', prompt: 'a cat', n: 1 })).status).toBe(
      200,
    );
    expect(
      (await post('/v1/rerank', { model: 'rerank-1', query: 'q', documents: ['a', 'b'], top_n: 1 })).status,
    ).toBe(200);
  });
});

describe('Claude and Gemini formats', () => {
  it("a Claude system prompt that is a number is a 400 in Claude's envelope", async () => {
    const { status, json } = await post(
      '/v1/messages',
      { model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], system: 5 },
      { 'anthropic-version': '2023-06-01' },
    );
    expect(status).toBe(400);
    expect(json.type).toBe('error');
    expect(json.error.type).toBe('invalid_request_error');
  });

  it("a Gemini generationConfig that is text is a 400 in Google's envelope", async () => {
    const { status, json } = await post('/v1beta/models/gpt-4o-mini:generateContent', {
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      generationConfig: 'fast',
    });
    expect(status).toBe(400);
    expect(json.error.status).toBe('INVALID_ARGUMENT');
  });
});
