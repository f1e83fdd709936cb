/**
 * The official `openai` SDK, unchanged, against the relay in front of the fake OpenAI upstream, with the real
 * Billing gRPC service writing to PostgreSQL: every endpoint family, streaming with usage, errors in OpenAI's
 * shape, and the billed figures in the log row and balances.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import {
  drained,
  lastLogOf,
  reload,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

let stack: Stack;
let fake: FakeOpenAI;
let client: OpenAI;
let userId: number;
let tokenId: number;
let key: string;

const START_QUOTA = 10_000_000;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  stack = await startStack({ suffix: 'relay_openai' });
  const user = await seedUser(stack, { quota: START_QUOTA });
  userId = user.id;
  const token = await seedToken(stack, userId, { remainQuota: 5_000_000 });
  tokenId = token.id;
  key = token.key;
  await seedChannel(stack, {
    baseUrl: fake.url,
    models: [
      'gpt-4o',
      'gpt-4o-mini',
      'text-embedding-3-small',
      'dall-e-3',
      'tts-1',
      'whisper-1',
      'text-moderation-latest',
      'o3-mini',
      'mapped-model',
    ],
    modelMapping: { 'mapped-model': 'gpt-4o-mini' },
  });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({
      'gpt-4o': 1.25,
      'gpt-4o-mini': 0.075,
      'mapped-model': 1,
      'text-embedding-3-small': 0.01,
      'o3-mini': 0.55,
      'tts-1': 7.5,
      'whisper-1': 3,
      'text-moderation-latest': 0.1,
    }),
    CompletionRatio: JSON.stringify({ 'gpt-4o': 4, 'gpt-4o-mini': 4, 'o3-mini': 4 }),
    ModelPrice: JSON.stringify({ 'dall-e-3': 0.04 }),
  });
  const relay = stack.relays[0]!;
  client = new OpenAI({ baseURL: `${relay.httpUrl}/v1`, apiKey: `sk-${key}`, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
});

beforeEach(async () => {
  fake.reset();
  // Earlier tests' last calls are billed before this test looks at "the newest log row" of a model.
  await drained(stack);
});

/** The newest log row of this user for `model` (earlier tests' rows may commit later). */
const lastLog = (model: string) => lastLogOf(stack, userId, model);

async function balances() {
  await drained(stack);
  const [u] = await stack.sql<{ quota: string; used_quota: string; request_count: number }>(
    `select quota, used_quota, request_count from users where id = ?`,
    [userId],
  );
  const [t] = await stack.sql<{ remain_quota: string; used_quota: string }>(
    `select remain_quota, used_quota from tokens where id = ?`,
    [tokenId],
  );
  return {
    quota: Number(u!.quota),
    used: Number(u!.used_quota),
    requests: Number(u!.request_count),
    tokenRemain: Number(t!.remain_quota),
    tokenUsed: Number(t!.used_quota),
  };
}

describe('openai SDK through the relay', () => {
  it('chat completion: upstream usage billed with model and completion ratios, one log row, balances moved together', async () => {
    fake.on({
      model: 'gpt-4o',
      respond: { content: 'hi there', usage: { prompt_tokens: 1000, completion_tokens: 500 } },
    });
    const before = await balances();
    const res = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(res.choices[0]?.message.content).toBe('hi there');
    expect(res.usage?.prompt_tokens).toBe(1000);
    // (1000 + 500·4)·1.25 = 3750 quota (gateway-behaviour §3.2 worked example)
    const log = await lastLog('gpt-4o');
    expect(Number(log.quota)).toBe(3750);
    expect(Number(log.prompt_tokens)).toBe(1000);
    expect(Number(log.completion_tokens)).toBe(500);
    expect(log.model_name).toBe('gpt-4o');
    expect(Number(log.type)).toBe(2);
    expect(Number(log.token_id)).toBe(tokenId);
    const other = JSON.parse(String(log.other));
    expect(other.model_ratio).toBe(1.25);
    expect(other.completion_ratio).toBe(4);
    const after = await balances();
    expect(before.quota - after.quota).toBe(3750);
    expect(after.used - before.used).toBe(3750);
    expect(after.requests - before.requests).toBe(1);
    expect(before.tokenRemain - after.tokenRemain).toBe(3750);
    expect(after.tokenUsed - before.tokenUsed).toBe(3750);
    // The relay forwarded with the channel's key, not the user's.
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-upstream-key');
  });

  it('stream with include_usage: chunks arrive, usage chunk reaches the client, bill matches', async () => {
    fake.on({ model: 'gpt-4o-mini', respond: { usage: { prompt_tokens: 40, completion_tokens: 3 } } });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'count' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello from gpt-4o-mini');
    expect(usage?.completion_tokens).toBe(3);
    const log = await lastLog('gpt-4o-mini');
    // (40 + 3·4)·0.075 = 3.9 → 4
    expect(Number(log.quota)).toBe(4);
    expect(log.is_stream).toBe(true);
  });

  it('stream without include_usage: the relay still asks upstream for usage and bills it, client sees no usage chunk', async () => {
    fake.on({ model: 'gpt-4o', respond: { usage: { prompt_tokens: 100, completion_tokens: 3 } } });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(fake.requests.at(-1)?.body?.stream_options).toEqual({ include_usage: true });
    const log = await lastLog('gpt-4o');
    // (100 + 3·4)·1.25 = 140
    expect(Number(log.quota)).toBe(140);
  });

  it('tools: the tool call comes back intact, streamed and not', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          parameters: { type: 'object', properties: { location: { type: 'string' } } },
        },
      },
    ];
    const res = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'what is the weather in Tokyo' }],
      tools,
    });
    const call = res.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ location: 'Tokyo' });

    const stream = client.chat.completions.stream({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'what is the weather in Oslo' }],
      tools,
    });
    const final = await stream.finalChatCompletion();
    const streamed = final.choices[0]?.message.tool_calls?.[0];
    expect(streamed?.type === 'function' && JSON.parse(streamed.function.arguments)).toEqual({
      location: 'Oslo',
    });
  });

  it('model mapping: billed and logged under the requested name, upstream gets the mapped one', async () => {
    fake.on({ model: 'gpt-4o-mini', respond: { usage: { prompt_tokens: 10, completion_tokens: 10 } } });
    await client.chat.completions.create({
      model: 'mapped-model',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(fake.requests.at(-1)?.body?.model).toBe('gpt-4o-mini');
    const log = await lastLog('mapped-model');
    expect(log.model_name).toBe('mapped-model');
    // mapped-model ratio 1, completion ratio 1 (unset): 10 + 10 = 20
    expect(Number(log.quota)).toBe(20);
    const other = JSON.parse(String(log.other));
    expect(other.is_model_mapped).toBe(true);
    expect(other.upstream_model_name).toBe('gpt-4o-mini');
  });

  it('embeddings (base64 by default in the SDK) decode to the upstream vector', async () => {
    const res = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello world' });
    expect(res.data[0]?.embedding).toHaveLength(8);
    const log = await lastLog('text-embedding-3-small');
    expect(log.model_name).toBe('text-embedding-3-small');
    expect(Number(log.prompt_tokens)).toBe(2);
  });

  it('images: priced per image by the fixed model price', async () => {
    const res = await client.images.generate({
      model: 'dall-e-3',
      prompt: 'a cat',
      n: 2,
      response_format: 'b64_json',
    });
    expect(res.data).toHaveLength(2);
    const log = await lastLog('dall-e-3');
    // 0.04 USD · 500000 · 2 images
    expect(Number(log.quota)).toBe(40_000);
  });

  it('audio: speech returns the bytes; transcription accepts multipart', async () => {
    const speech = await client.audio.speech.create({
      model: 'tts-1',
      voice: 'alloy',
      input: 'hello there friend',
    });
    const bytes = new Uint8Array(await speech.arrayBuffer());
    expect(bytes.length).toBeGreaterThan(0);
    expect(speech.headers.get('content-type')).toMatch(/audio\/mpeg/);

    const tr = await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await toFile(new Uint8Array(2000), 'a.mp3', { type: 'audio/mpeg' }),
    });
    expect(typeof tr.text).toBe('string');
    expect(fake.requests.at(-1)?.fields).toContain('file');
  });

  it('moderations pass through', async () => {
    const res = await client.moderations.create({ model: 'text-moderation-latest', input: 'hello' });
    expect(res.results).toHaveLength(1);
  });

  it('lists the models the token may use', async () => {
    const list = await client.models.list();
    const ids = list.data.map((m) => m.id);
    expect(ids).toContain('gpt-4o');
    expect(ids).toContain('mapped-model');
  });

  it('errors come back in OpenAI shape through the SDK: bad key, unknown model, unpriced model', async () => {
    const bad = new OpenAI({ baseURL: client.baseURL, apiKey: 'sk-nope', maxRetries: 0 });
    await expect(bad.chat.completions.create({ model: 'gpt-4o', messages: [] })).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
    // A model no channel serves is unknown (new-api's 503 model_not_found), priced or not.
    await expect(
      client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 503, code: 'model_not_found' });
    // A served model without a price is the administrator's gap, and the message says so.
    await seedChannel(stack, { baseUrl: fake.url, models: ['unpriced-served'] });
    await reload(stack);
    await expect(
      client.chat.completions.create({
        model: 'unpriced-served',
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({
      status: 403,
      code: 'model_price_not_set',
      message: expect.stringMatching(/no price set/),
    });
    expect(fake.requests.filter((r) => r.body?.model === 'unpriced-served')).toHaveLength(0);
    await setOptions(stack, {
      ModelRatio: JSON.stringify({ 'gpt-4o': 1.25, 'no-route': 1, 'gpt-4o-mini': 0.075 }),
    });
    await expect(
      client.chat.completions.create({ model: 'no-route', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 503, code: 'model_not_found' });
  });

  it('an upstream 429 reaches the client as a RateLimitError with Retry-After, and nothing is billed', async () => {
    await reload(stack);
    const before = await balances();
    fake.on({ model: 'gpt-4o', respond: { status: 429, headers: { 'retry-after': '7' } } });
    const err = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.headers.get('retry-after')).toBe('7');
    const after = await balances();
    expect(after.quota).toBe(before.quota);
  });

  it('sensitive words: a prompt with one is refused before any upstream call; an answer with one is stopped and billed', async () => {
    const before = fake.requests.length;
    const err = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'say TEST_SENSITIVE now' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe('sensitive_words_detected');
    expect(fake.requests.length).toBe(before);

    await setOptions(stack, { CheckSensitiveOnCompletionEnabled: 'true', SensitiveWords: 'forbidden fruit' });
    try {
      fake.on({
        model: 'gpt-4o',
        respond: {
          content: 'the Forbidden Fruit is sweet',
          usage: { prompt_tokens: 4, completion_tokens: 5 },
        },
      });
      const refused = await client.chat.completions
        .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
        .catch((e) => e);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      // Billed all the same: (4 + 5·4)·1.25 = 30
      expect(Number((await lastLog('gpt-4o')).quota)).toBe(30);

      fake.reset();
      fake.on({
        model: 'gpt-4o',
        respond: { content: 'one two forbidden fruit three four five', streamDelayMs: 5 },
      });
      const stream = await client.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      // Cut before the chunk that completes the word: the client never receives it, nor anything after.
      expect(text).toBe('one two forbidden');
    } finally {
      await setOptions(stack, {
        CheckSensitiveOnCompletionEnabled: 'false',
        SensitiveWords: 'test_sensitive',
      });
    }
  });

  it('StopOnSensitiveEnabled off: the words of an answer are masked, not stopped (chat and Responses, body and stream)', async () => {
    await setOptions(stack, {
      CheckSensitiveOnCompletionEnabled: 'true',
      StopOnSensitiveEnabled: 'false',
      SensitiveWords: 'forbidden fruit\nsweet',
    });
    try {
      const content = 'the Forbidden Fruit is sweet';
      fake.on({ model: 'gpt-4o', respond: { content, usage: { prompt_tokens: 4, completion_tokens: 5 } } });
      const res = await client.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(res.choices[0]?.message.content).toBe('the *************** is *****');
      // Billed like any answer: (4 + 5·4)·1.25 = 30
      expect(Number((await lastLog('gpt-4o')).quota)).toBe(30);

      // Streamed: "forbidden fruit" arrives as " forbidden" and " fruit", two chunks; both halves are masked.
      fake.reset();
      fake.on({ model: 'gpt-4o', respond: { content: 'one two forbidden fruit three sweet' } });
      const stream = await client.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      const deltas: string[] = [];
      for await (const chunk of stream) {
        const d = chunk.choices[0]?.delta.content;
        if (d) deltas.push(d);
      }
      expect(deltas.join('')).toBe('one two *************** three *****');
      expect(deltas).toContain(' *********');
      expect(deltas.some((d) => /forbidden|fruit|sweet/i.test(d))).toBe(false);

      fake.reset();
      fake.on({ model: 'gpt-4o', path: '/responses', respond: { content } });
      const r = await client.responses.create({ model: 'gpt-4o', input: 'hi' });
      expect(r.output_text).toBe('the *************** is *****');
      const rs = await client.responses.create({ model: 'gpt-4o', input: 'hi', stream: true });
      let streamed = '';
      let done = '';
      for await (const ev of rs) {
        if (ev.type === 'response.output_text.delta') streamed += ev.delta;
        if (ev.type === 'response.completed') done = JSON.stringify(ev.response.output);
      }
      expect(streamed).toBe('the *************** is *****');
      expect(done).toContain('the *************** is *****');
      expect(done).not.toMatch(/fruit|sweet/i);
    } finally {
      await setOptions(stack, {
        CheckSensitiveOnCompletionEnabled: 'false',
        StopOnSensitiveEnabled: 'true',
        SensitiveWords: 'test_sensitive',
      });
    }
  });

  it('CheckSensitiveEnabled or CheckSensitiveOnPromptEnabled off: a prompt with a word reaches the upstream', async () => {
    const prompt = [{ role: 'user' as const, content: 'say TEST_SENSITIVE now' }];
    for (const off of ['CheckSensitiveEnabled', 'CheckSensitiveOnPromptEnabled']) {
      await setOptions(stack, { [off]: 'false' });
      try {
        const before = fake.requests.length;
        const res = await client.chat.completions.create({ model: 'gpt-4o', messages: prompt });
        expect(res.choices[0]?.message.content).toBe('Hello from gpt-4o');
        expect(fake.requests.length).toBe(before + 1);
      } finally {
        await setOptions(stack, { [off]: 'true' });
      }
    }
  });

  it('responses API, plain and streamed, billed from its own usage shape', async () => {
    await setOptions(stack, {
      ModelRatio: JSON.stringify({
        'gpt-4o': 1.25,
        'gpt-4o-mini': 0.075,
        'mapped-model': 1,
        'text-embedding-3-small': 0.01,
      }),
    });
    fake.on({
      model: 'gpt-4o',
      path: '/responses',
      respond: { usage: { prompt_tokens: 200, completion_tokens: 100 } },
    });
    const res = await client.responses.create({ model: 'gpt-4o', input: 'hello there' });
    expect(res.output_text).toBe('Hello from gpt-4o');
    // (200 + 100·4)·1.25 = 750
    expect(Number((await lastLog('gpt-4o')).quota)).toBe(750);

    const stream = await client.responses.create({ model: 'gpt-4o', input: 'hello', stream: true });
    let text = '';
    let completed = false;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = true;
    }
    expect(text).toBe('Hello from gpt-4o');
    expect(completed).toBe(true);
    const log = await lastLog('gpt-4o');
    expect(log.is_stream).toBe(true);
    expect(Number(log.quota)).toBe(750);
  });

  it('legacy completions and rerank pass through', async () => {
    const c = await client.completions.create({ model: 'gpt-4o-mini', prompt: 'say hi' });
    expect(c.choices[0]?.text).toContain('Hello');
    await setOptions(stack, {
      ModelRatio: JSON.stringify({ 'gpt-4o-mini': 0.075, 'rerank-1': 0.1, 'gpt-4o': 1.25 }),
    });
    await stack.sql(`insert into abilities ("group", model, channel_id, enabled, priority, weight)
      select 'default', 'rerank-1', channel_id, true, 0, 0 from abilities limit 1`);
    await reload(stack);
    const r = await fetch(`${stack.relays[0]!.httpUrl}/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'rerank-1', query: 'cats', documents: ['dogs', 'cats are great'] }),
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { results: { index: number; relevance_score: number }[] };
    expect(body.results).toHaveLength(2);
  });

  it('accepts the key in x-api-key, x-goog-api-key and ?key=, and answers unknown or unsupported paths in OpenAI shape', async () => {
    const base = stack.relays[0]!.httpUrl;
    const cases: { url: string; headers: Record<string, string> }[] = [
      { url: `${base}/v1/models`, headers: { 'x-api-key': `sk-${key}` } },
      { url: `${base}/v1/models`, headers: { 'x-goog-api-key': key } },
      { url: `${base}/v1/models?key=sk-${key}`, headers: {} },
    ];
    for (const init of cases) {
      const res = await fetch(init.url, { headers: init.headers });
      expect(res.status).toBe(200);
    }
    const missing = await fetch(`${base}/v1/nope`, { method: 'POST' });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    const files = await fetch(`${base}/v1/files`, { headers: { authorization: `Bearer sk-${key}` } });
    expect(files.status).toBe(501);
    expect(((await files.json()) as { error: { code: string } }).error.code).toBe('api_not_implemented');
    const badJson = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(badJson.status).toBe(400);
  });
});
