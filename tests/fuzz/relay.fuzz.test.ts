/**
 * Property-based fuzzing of every relay endpoint (issue 13, item 7) over real HTTP, with the fake OpenAI
 * upstream behind an OpenAI channel (Claude and Gemini formats reach it through the bridges) and the real Billing
 * service: hostile bodies (wrong types, NUL bytes, huge/negative/fractional numbers, long strings, unicode),
 * hostile paths and query strings. Asserts: never a 5xx that is the relay's fault, every refusal in the route's
 * error envelope, and refusals are never billed (after the run, the billed calls equal the answered ones).
 *
 * FUZZ_RUNS=n sets the runs per endpoint, FUZZ_SEED=s replays a run, FUZZ_COUNT=1 tallies every 5xx.
 */
import fc from 'fast-check';
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
} from '../integration/relay-stack.ts';
import { mutatedObject, mutatedQuery, nastyString } from './arbitraries.ts';
import { COUNT_ONLY, newTally, params, runs, SEED, show } from './harness.ts';

type Format = 'openai' | 'claude' | 'gemini';
type Endpoint = {
  method: 'GET' | 'POST';
  path: string;
  format: Format;
  body?: Record<string, unknown>;
  /** multipart (audio transcriptions and translations) */
  form?: Record<string, string>;
  /** a successful answer is billed (one log row) */
  billed?: boolean;
};

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 };
const gemini = {
  contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
  generationConfig: { maxOutputTokens: 5 },
};

/** Every relay endpoint with a plausible request (the fuzz breaks fields of these). */
export const RELAY_ENDPOINTS: Endpoint[] = [
  {
    method: 'POST',
    path: '/v1/chat/completions',
    format: 'openai',
    body: { ...chat, stream: false, n: 1, temperature: 0.5 },
    billed: true,
  },
  {
    method: 'POST',
    path: '/v1/completions',
    format: 'openai',
    body: { model: 'gpt-4o-mini', prompt: 'hi', max_tokens: 5 },
    billed: true,
  },
  {
    method: 'POST',
    path: '/v1/embeddings',
    format: 'openai',
    body: { model: 'text-embedding-3-small', input: 'hi' },
    billed: true,
  },
  {
    method: 'POST',
    path: '/v1/engines/text-embedding-3-small/embeddings',
    format: 'openai',
    body: { input: 'hi' },
    billed: true,
  },
  {
    method: 'POST',
    path: '/v1/images/generations',
    format: 'openai',
    body: { model: 'dall-e-3', prompt: 'a cat', n: 1, size: '1024x1024' },
    billed: true,
  },
  {
    method: 'POST',
    path: '/v1/audio/speech',
    format: 'openai',
    body: { model: 'tts-1', input: 'hi', voice: 'alloy' },
    billed: true,
  },
  {
    method: 'POST',
    path: '/v1/audio/transcriptions',
    format: 'openai',
    form: { model: 'whisper-1', language: 'en' },
    billed: true,
  },
  {
    method: 'POST',
    path: '/v1/audio/translations',
    format: 'openai',
    form: { model: 'whisper-1' },
    billed: true,
  },
  {
    method: 'POST',
    path: '/v1/moderations',
    format: 'openai',
    body: { model: 'text-moderation-latest', input: 'hi' },
    billed: true,
  },
  {
    method: 'POST',
    path: '/v1/rerank',
    format: 'openai',
    body: { model: 'rerank-1', query: 'q', documents: ['a', 'b'], top_n: 1 },
    billed: true,
  },
  {
    method: 'POST',
    path: '/v1/responses',
    format: 'openai',
    body: { model: 'gpt-4o-mini', input: 'hi', max_output_tokens: 16 },
    billed: true,
  },
  { method: 'GET', path: '/v1/models', format: 'openai' },
  { method: 'GET', path: '/v1/models/gpt-4o-mini', format: 'openai' },
  { method: 'GET', path: '/dashboard/billing/subscription', format: 'openai' },
  { method: 'GET', path: '/v1/dashboard/billing/usage', format: 'openai' },
  {
    method: 'POST',
    path: '/v1/messages',
    format: 'claude',
    body: { ...chat, system: 'be brief' },
    billed: true,
  },
  {
    method: 'POST',
    path: '/v1/messages/count_tokens',
    format: 'claude',
    body: { model: 'gpt-4o-mini', messages: chat.messages },
  },
  {
    method: 'POST',
    path: '/v1beta/models/gpt-4o-mini:generateContent',
    format: 'gemini',
    body: gemini,
    billed: true,
  },
  {
    method: 'POST',
    path: '/v1beta/models/gpt-4o-mini:streamGenerateContent',
    format: 'gemini',
    body: gemini,
    billed: true,
  },
  { method: 'POST', path: '/v1beta/models/gpt-4o-mini:countTokens', format: 'gemini', body: gemini },
  {
    method: 'POST',
    path: '/v1/models/gpt-4o-mini:generateContent',
    format: 'gemini',
    body: gemini,
    billed: true,
  },
  { method: 'GET', path: '/v1beta/models', format: 'gemini' },
  { method: 'GET', path: '/v1beta/models/gpt-4o-mini', format: 'gemini' },
];

/**
 * 5xx answers that are the gateway's documented meaning, not a fault: no channel serves the (fuzzed) model
 * (new-api answers 503 model_not_found too).
 */
function documented5xx(status: number, text: string): boolean {
  return status === 503 && /model_not_found|no available channel/.test(text);
}

let stack: Stack;
let fake: FakeOpenAI;
let key: string;
let base: string;
let userId: number;
const tally = newTally();
let billedAnswers = 0;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  stack = await startStack({ suffix: 'fuzz_relay' });
  userId = (await seedUser(stack, { quota: 10_000_000_000 })).id;
  key = (await seedToken(stack, userId, { unlimited: true })).key;
  const models = [
    'gpt-4o-mini',
    'text-embedding-3-small',
    'dall-e-3',
    'tts-1',
    'whisper-1',
    'text-moderation-latest',
    'rerank-1',
  ];
  await seedChannel(stack, { baseUrl: fake.url, models });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({
      'gpt-4o-mini': 0.075,
      'text-embedding-3-small': 0.01,
      'tts-1': 7.5,
      'whisper-1': 3,
      'text-moderation-latest': 0.1,
      'rerank-1': 1,
    }),
    ModelPrice: JSON.stringify({ 'dall-e-3': 0.04 }),
  });
  base = stack.relays[0]!.httpUrl;
}, 60_000);

afterAll(async () => {
  console.info(
    `[fuzz] relay: ${tally.inputs} inputs fuzzed, ${tally.fivexx} answered 5xx (seed ${SEED})` +
      (tally.examples.length ? `\n  ${tally.examples.slice(0, 100).join('\n  ')}` : ''),
  );
  await stack?.close();
  await fake?.close();
});

type Input = {
  body: unknown;
  query: Record<string, string>;
  auth: 'bearer' | 'x-api-key' | 'x-goog-api-key' | 'none' | 'bad';
  raw: string | null;
};

function inputFor(ep: Endpoint): fc.Arbitrary<Input> {
  const body = ep.body ? mutatedObject(ep.body) : ep.form ? mutatedObject(ep.form) : fc.constant(undefined);
  return fc.record({
    body,
    query: mutatedQuery(
      ep.format === 'gemini' ? { alt: 'sse', pageSize: '10', pageToken: '0' } : { api_version: '1' },
    ),
    auth: fc.constantFrom('bearer', 'bearer', 'bearer', 'x-api-key', 'x-goog-api-key', 'none', 'bad'),
    // sometimes not JSON at all
    raw: fc.option(fc.oneof(nastyString, fc.constantFrom('{', '[]', 'null', '{"model":', '\u0000')), {
      freq: 8,
    }),
  });
}

function request(ep: Endpoint, input: Input): Request {
  const url = new URL(`${base}${ep.path}`);
  for (const [k, v] of Object.entries(input.query)) url.searchParams.set(k, v);
  const headers = new Headers();
  const secret = input.auth === 'bad' ? 'sk-not-a-key' : `sk-${key}`;
  if (input.auth === 'bearer' || input.auth === 'bad') headers.set('Authorization', `Bearer ${secret}`);
  if (input.auth === 'x-api-key') headers.set('x-api-key', secret);
  if (input.auth === 'x-goog-api-key') headers.set('x-goog-api-key', secret);
  if (ep.format === 'claude') headers.set('anthropic-version', '2023-06-01');
  let body: BodyInit | undefined;
  if (ep.method === 'POST') {
    if (
      ep.form &&
      input.raw === null &&
      input.body &&
      typeof input.body === 'object' &&
      !Array.isArray(input.body)
    ) {
      const form = new FormData();
      for (const [k, v] of Object.entries(input.body))
        form.set(k, typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
      form.set('file', new Blob([new Uint8Array(64)], { type: 'audio/wav' }), 'a.wav');
      body = form;
    } else {
      headers.set('Content-Type', 'application/json');
      body = input.raw ?? JSON.stringify(input.body ?? null);
    }
  }
  return new Request(url, { method: ep.method, headers, body });
}

describe('relay endpoints under fuzzing', () => {
  for (const ep of RELAY_ENDPOINTS) {
    it(`${ep.method} ${ep.path}: no 5xx, refusals in the ${ep.format} envelope`, async () => {
      await fc.assert(
        fc.asyncProperty(inputFor(ep), async (input) => {
          const res = await fetch(request(ep, input));
          const text = await res.text();
          tally.inputs++;
          if (res.status === 200 && ep.billed) billedAnswers++;
          const fault = res.status >= 500 && !documented5xx(res.status, text);
          if (fault) {
            tally.fivexx++;
            tally.examples.push(
              `${ep.method} ${ep.path} ${input.auth} ${show(input.query)} ${show(input.raw ?? input.body)} -> ${res.status} ${text.slice(0, 200)}`,
            );
          }
          if (COUNT_ONLY) return true;
          expect(fault, `${res.status}: ${text.slice(0, 500)}`).toBe(false);
          if (res.status >= 400) {
            const json = JSON.parse(text) as Record<string, unknown>;
            if (ep.format === 'claude') expect(json.type).toBe('error');
            else expect(json.error, text).toBeTypeOf('object');
          }
          return true;
        }),
        params(runs(50)),
      );
    }, 120_000);
  }

  it('refusals were never billed: the log rows equal the answered billable calls', async () => {
    await drained(stack, 30_000);
    const [row] = await stack.sql<{ n: string }>(
      `select count(*) as n from logs where user_id = ? and type = 2`,
      [userId],
    );
    expect(Number(row?.n)).toBe(billedAnswers);
  }, 60_000);
});
