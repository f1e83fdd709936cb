// The official openai SDK pointed straight at the fake: proves the fake speaks the wire format the SDK parses.
import OpenAI, { AzureOpenAI, toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  FAKE_IMAGE_INPUT_TOKENS,
  type FakeOpenAI,
  fakeAudioSeconds,
  fakeEmbedding,
  fakeSpeechBytes,
  startFakeOpenAI,
} from './openai-upstream.ts';

let fake: FakeOpenAI;
let client: OpenAI;
const KEY = 'sk-test-good-key-1234';
// A 1x1 PNG.
const PNG_BYTES =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

beforeAll(async () => {
  fake = await startFakeOpenAI({
    rejectKeys: ['sk-revoked-key-9999'],
    deployments: { 'gpt-4o': 'gpt-4o-2024-08-06', 'text-embedding-3-small': 'text-embedding-3-small' },
    billing: { hardLimitUsd: 120, totalUsageCents: 2550 },
  });
  client = new OpenAI({ baseURL: `${fake.url}/v1`, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

/** Raw SSE `data:` payloads of a streamed request (for wire-level assertions the SDK hides). */
async function sseData(path: string, body: unknown): Promise<string[]> {
  const res = await fetch(`${fake.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const text = await res.text();
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => /^data: (.*)$/m.exec(block)?.[1] ?? '');
}

describe('routing and auth', () => {
  it('lists models and records the request', async () => {
    const page = await client.models.list();
    expect(page.data.map((m) => m.id)).toContain('gpt-4o');
    const rec = fake.requests[0]!;
    expect(rec).toMatchObject({ method: 'GET', path: '/v1/models', api: 'openai', key: KEY, body: null });
    expect(rec.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(rec.time).toBeGreaterThan(Date.now() - 10_000);
  });

  it('rejects a revoked key with AuthenticationError invalid_api_key', async () => {
    const bad = new OpenAI({ baseURL: `${fake.url}/v1`, apiKey: 'sk-revoked-key-9999', maxRetries: 0 });
    const err = await bad.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    const e = err as InstanceType<typeof OpenAI.AuthenticationError>;
    expect(e.status).toBe(401);
    expect(e.code).toBe('invalid_api_key');
    expect(e.type).toBe('invalid_request_error');
    expect(e.message).toContain('Incorrect API key provided: sk-');
    expect(e.message).not.toContain('revoked-key-9999');
  });

  it('answers 401 without a key and 404 Invalid URL for unknown routes', async () => {
    const noKey = await fetch(`${fake.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(noKey.status).toBe(401);
    const body = (await noKey.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key', param: null });
    const unknown = await fetch(`${fake.url}/v1/nope`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toBe(
      'Invalid URL (GET /v1/nope)',
    );
  });

  it('rejects unparsable JSON and a missing model with 400', async () => {
    const bad = await fetch(`${fake.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(bad.status).toBe(400);
    const err = await client.chat.completions
      .create({
        messages: [{ role: 'user', content: 'hi' }],
      } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('enforces opts.models with 404 model_not_found', async () => {
    const strict = await startFakeOpenAI({ models: ['gpt-4o-mini'] });
    try {
      const c = new OpenAI({ baseURL: `${strict.url}/v1`, apiKey: KEY, maxRetries: 0 });
      const err = await c.chat.completions
        .create({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
      const ok = await c.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(ok.choices[0]!.message.content).toBe('Hello from gpt-4o-mini');
    } finally {
      await strict.close();
    }
  });
});

describe('chat completions', () => {
  it('answers non-stream with deterministic text and full usage', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: [{ type: 'text', text: 'Say hello to me' }] },
      ],
    });
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('gpt-4o');
    expect(res.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'Hello from gpt-4o' });
    expect(res.choices[0]!.finish_reason).toBe('stop');
    // 3 + 4 words in, 3 chunks out.
    expect(res.usage).toEqual({
      prompt_tokens: 7,
      completion_tokens: 3,
      total_tokens: 10,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    });
    expect(res._request_id).toMatch(/^req_fake/);
  });

  it('applies rule content and usage (reasoning counted inside completion)', async () => {
    fake.on({
      model: 'o3-mini',
      respond: {
        content: 'Four score and seven',
        usage: { prompt_tokens: 100, cached_tokens: 40, reasoning_tokens: 6 },
      },
    });
    const res = await client.chat.completions.create({
      model: 'o3-mini',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(res.choices[0]!.message.content).toBe('Four score and seven');
    expect(res.usage).toMatchObject({
      prompt_tokens: 100,
      completion_tokens: 10,
      total_tokens: 110,
      prompt_tokens_details: { cached_tokens: 40 },
      completion_tokens_details: { reasoning_tokens: 6 },
    });
    // The rule is model-scoped: another model gets the default.
    const other = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(other.choices[0]!.message.content).toBe('Hello from gpt-4o');
  });

  it('answers DeepSeek-style reasoning_content before the text, whole and streamed', async () => {
    fake.on({ respond: { reasoningContent: 'Let me think.', usage: { reasoning_tokens: 4 } } });
    const res = await client.chat.completions.create({
      model: 'deepseek-reasoner',
      messages: [{ role: 'user', content: 'x' }],
    });
    const msg = res.choices[0]!.message as unknown as Record<string, unknown>;
    expect(msg.reasoning_content).toBe('Let me think.');
    expect(msg.content).toBe('Hello from deepseek-reasoner');
    expect(res.usage?.completion_tokens).toBe(7);
    const data = await sseData('/v1/chat/completions', {
      model: 'deepseek-reasoner',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const deltas = data
      .filter((d) => d !== '[DONE]')
      .map((d) => JSON.parse(d).choices[0]?.delta ?? {})
      .filter((d) => d.reasoning_content || d.content);
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe('Let me think.');
    // Every thinking delta comes before the first text delta.
    expect(deltas.findIndex((d) => d.content)).toBe(3);
  });

  it('streams word chunks without a usage chunk unless include_usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi there' }],
      stream: true,
    });
    const deltas: string[] = [];
    let finish: string | null = null;
    let usageSeen = false;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      if (chunk.usage) usageSeen = true;
      for (const c of chunk.choices) {
        if (c.delta.content) deltas.push(c.delta.content);
        if (c.finish_reason) finish = c.finish_reason;
      }
    }
    expect(deltas).toEqual(['Hello', ' from', ' gpt-4o-mini']);
    expect(finish).toBe('stop');
    expect(usageSeen).toBe(false);

    const raw = await sseData('/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    expect(raw.at(-1)).toBe('[DONE]');
    const parsed = raw.slice(0, -1).map((d) => JSON.parse(d) as { choices: unknown[]; usage?: unknown });
    expect(parsed.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
  });

  it('streams a final usage-only chunk with include_usage', async () => {
    const raw = await sseData('/v1/chat/completions', {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'one two three' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(raw.at(-1)).toBe('[DONE]');
    const chunks = raw.slice(0, -1).map((d) => JSON.parse(d) as { choices: unknown[]; usage: unknown });
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });
    expect(chunks.slice(0, -1).every((c) => c.usage === null && c.choices.length === 1)).toBe(true);

    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'one two three' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage?.total_tokens).toBe(6);
    expect(fake.requests.at(-1)!.body).toMatchObject({ stream_options: { include_usage: true } });
  });

  it('omitUsage drops usage even when asked for it', async () => {
    fake.on({ path: '/v1/chat/completions', respond: { omitUsage: true } });
    const res = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(res.usage).toBeUndefined();
    const raw = await sseData('/v1/chat/completions', {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(raw.some((d) => d.includes('"choices":[]'))).toBe(false);
  });

  it('calls the tool for a weather question, non-stream and streamed', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          parameters: { type: 'object', properties: { location: { type: 'string' } } },
        },
      },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'What is the weather in Tokyo today?' },
    ];
    const res = await client.chat.completions.create({ model: 'gpt-4o', messages, tools });
    const choice = res.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls![0]!;
    expect(call.type).toBe('function');
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ location: 'Tokyo' });

    const stream = await client.chat.completions.create({ model: 'gpt-4o', messages, tools, stream: true });
    let args = '';
    let name = '';
    let fragments = 0;
    let finish: string | null = null;
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      if (!c) continue;
      for (const tc of c.delta.tool_calls ?? []) {
        if (tc.function?.name) name = tc.function.name;
        if (tc.function?.arguments) {
          args += tc.function.arguments;
          fragments++;
        }
      }
      if (c.finish_reason) finish = c.finish_reason;
    }
    expect(name).toBe('get_weather');
    expect(fragments).toBeGreaterThan(1);
    expect(JSON.parse(args)).toEqual({ location: 'Tokyo' });
    expect(finish).toBe('tool_calls');
    expect(res.usage!.completion_tokens).toBe(fragments);

    // Without the trigger word the model answers in text.
    const plain = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello' }],
      tools,
    });
    expect(plain.choices[0]!.finish_reason).toBe('stop');
  });

  it('answers JSON for json_object and truncates at max_tokens', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'json please' }],
      response_format: { type: 'json_object' },
    });
    expect(JSON.parse(res.choices[0]!.message.content!)).toEqual({ message: 'Hello from gpt-4o' });

    const cut = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x' }],
      max_completion_tokens: 2,
    });
    expect(cut.choices[0]!.message.content).toBe('Hello from');
    expect(cut.choices[0]!.finish_reason).toBe('length');
    expect(cut.usage!.completion_tokens).toBe(2);
  });
});

describe('other OpenAI endpoints', () => {
  it('legacy completions, non-stream and stream', async () => {
    const res = await client.completions.create({
      model: 'gpt-3.5-turbo-instruct',
      prompt: 'Once upon a time',
    });
    expect(res.object).toBe('text_completion');
    expect(res.choices[0]!.text).toBe('Hello from gpt-3.5-turbo-instruct');
    expect(res.usage).toEqual({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });

    const stream = await client.completions.create({
      model: 'gpt-3.5-turbo-instruct',
      prompt: ['a b', 'c'],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello from gpt-3.5-turbo-instruct');
    expect(usage).toEqual({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });
  });

  it('embeddings: the SDK default base64 decodes to the deterministic vectors', async () => {
    const res = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['alpha beta', 'gamma'],
    });
    expect(fake.requests[0]!.body).toMatchObject({ encoding_format: 'base64' });
    expect(res.data.map((d) => d.embedding)).toEqual([fakeEmbedding('alpha beta'), fakeEmbedding('gamma')]);
    expect(res.data[0]!.embedding).toHaveLength(8);
    expect(res.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });

    const floats = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: 'alpha beta',
      encoding_format: 'float',
      dimensions: 5,
    });
    expect(floats.data[0]!.embedding).toEqual(fakeEmbedding('alpha beta', 5));
    expect(fakeEmbedding('alpha beta')).not.toEqual(fakeEmbedding('gamma'));
  });

  it('images: b64_json and url, n images', async () => {
    const b64 = await client.images.generate({
      model: 'dall-e-3',
      prompt: 'a red fox',
      response_format: 'b64_json',
      n: 2,
    });
    expect(b64.data).toHaveLength(2);
    const png = Buffer.from(b64.data![0]!.b64_json!, 'base64');
    expect(png.subarray(1, 4).toString()).toBe('PNG');

    const urls = await client.images.generate({
      model: 'dall-e-3',
      prompt: 'a red fox',
      response_format: 'url',
    });
    const img = await fetch(urls.data![0]!.url!);
    expect(img.headers.get('content-type')).toBe('image/png');

    const gpt = await client.images.generate({ model: 'gpt-image-1', prompt: 'a red fox' });
    expect(gpt.data![0]!.b64_json).toBeTruthy();
    expect(gpt.usage).toMatchObject({ input_tokens: 3, output_tokens: 100, total_tokens: 103 });
  });

  it('image edits: multipart image(s) and mask, usage with image input tokens, 400 without an image', async () => {
    const png = () => toFile(Buffer.from(PNG_BYTES, 'base64'), 'fox.png', { type: 'image/png' });
    const res = await client.images.edit({
      model: 'gpt-image-1',
      image: [await png(), await png()],
      mask: await png(),
      prompt: 'add a hat',
      n: 2,
    });
    expect(res.data).toHaveLength(2);
    expect(res.usage).toEqual({
      input_tokens: 3 + 3 * FAKE_IMAGE_INPUT_TOKENS,
      output_tokens: 200,
      total_tokens: 3 + 3 * FAKE_IMAGE_INPUT_TOKENS + 200,
      input_tokens_details: { text_tokens: 3, image_tokens: 3 * FAKE_IMAGE_INPUT_TOKENS },
    });
    const rec = fake.requests.at(-1)!;
    expect(rec.path).toBe('/v1/images/edits');
    expect(rec.files?.map((f) => f.field).sort()).toEqual(['image[]', 'image[]', 'mask']);
    expect(rec.form).toMatchObject({ prompt: 'add a hat', model: 'gpt-image-1', n: '2' });

    const dalle = await client.images.edit({ image: await png(), prompt: 'a hat', response_format: 'url' });
    expect(dalle.data?.[0]?.url).toBeTruthy();
    expect(dalle.usage).toBeUndefined();

    const form = new FormData();
    form.set('prompt', 'no image');
    const bad = await fetch(`${fake.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: form,
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.param).toBe('image');
  });

  it('speech returns deterministic audio/mpeg bytes', async () => {
    const res = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello world' });
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes).toEqual(fakeSpeechBytes({ model: 'tts-1', voice: 'alloy', input: 'Hello world' }));
    expect(Buffer.from(bytes.subarray(0, 3)).toString()).toBe('ID3');
  });

  it('transcriptions in every response_format, and translations', async () => {
    const audio = new Uint8Array(2500).fill(7);
    const file = () => toFile(audio, 'clip.mp3', { type: 'audio/mpeg' });
    const json = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file() });
    expect(json.text).toBe('Hello from whisper-1');
    expect((json as { usage?: unknown }).usage).toEqual({ type: 'duration', seconds: 3 });
    const rec = fake.requests[0]!;
    expect(rec.fields).toEqual(['model', 'file']);
    expect(rec.files).toEqual([{ field: 'file', name: 'clip.mp3', size: 2500, type: 'audio/mpeg' }]);
    expect(rec.form).toEqual({ model: 'whisper-1' });

    const text = await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await file(),
      response_format: 'text',
    });
    expect(text).toBe('Hello from whisper-1\n');

    const verbose = await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await file(),
      response_format: 'verbose_json',
    });
    expect(verbose.duration).toBe(fakeAudioSeconds(2500));
    expect(verbose.segments![0]!.end).toBe(2.5);

    const srt = await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await file(),
      response_format: 'srt',
    });
    expect(srt).toBe('1\n00:00:00,000 --> 00:00:02,500\nHello from whisper-1\n\n');
    const vtt = await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await file(),
      response_format: 'vtt',
    });
    expect(vtt).toMatch(/^WEBVTT\n\n00:00:00\.000 --> 00:00:02\.500\n/);

    const tokens = await client.audio.transcriptions.create({
      model: 'gpt-4o-transcribe',
      file: await file(),
      prompt: 'names: Ada',
    });
    // 25 audio tokens (10/s) + 2 prompt words in, 3 words out.
    expect((tokens as { usage?: unknown }).usage).toMatchObject({
      type: 'tokens',
      input_tokens: 27,
      input_token_details: { audio_tokens: 25, text_tokens: 2 },
      output_tokens: 3,
      total_tokens: 30,
    });

    fake.on({ path: '/audio/translations', respond: { content: 'Good morning' } });
    const tr = await client.audio.translations.create({ model: 'whisper-1', file: await file() });
    expect(tr.text).toBe('Good morning');
  });

  it('moderations flag deterministically', async () => {
    const res = await client.moderations.create({ input: ['I will kill the process', 'nice day'] });
    expect(res.model).toBe('omni-moderation-latest');
    expect(res.results.map((r) => r.flagged)).toEqual([true, false]);
    expect(res.results[0]!.categories.violence).toBe(true);
    expect(res.results[1]!.category_scores.hate).toBeLessThan(0.01);
  });

  it('rerank answers the Cohere/Jina shape', async () => {
    const res = await client.post<{
      results: { index: number; relevance_score: number; document?: { text: string } }[];
      usage: { total_tokens: number };
    }>('/rerank', {
      body: {
        model: 'jina-reranker-v2',
        query: 'red fox',
        documents: ['blue sky', 'the red fox jumps', { text: 'a fox' }],
        top_n: 2,
        return_documents: true,
      },
    });
    expect(res.results.map((r) => r.index)).toEqual([1, 2]);
    expect(res.results[0]!.relevance_score).toBeGreaterThan(res.results[1]!.relevance_score);
    expect(res.results[0]!.document).toEqual({ text: 'the red fox jumps' });
    // 2 query words + 2 + 4 + 2 document words.
    expect(res.usage.total_tokens).toBe(10);
  });

  it('responses API: non-stream, typed stream events, function calls', async () => {
    const res = await client.responses.create({
      model: 'gpt-4o',
      input: 'Tell me a joke',
      instructions: 'Be brief',
    });
    expect(res.object).toBe('response');
    expect(res.status).toBe('completed');
    expect(res.output_text).toBe('Hello from gpt-4o');
    expect(res.usage).toEqual({
      input_tokens: 6,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 9,
    });

    fake.on({ path: '/responses', respond: { usage: { cached_tokens: 2, reasoning_tokens: 4 } }, times: 1 });
    const stream = await client.responses.create({
      model: 'gpt-4o',
      input: [{ role: 'user', content: 'Tell me a joke' }],
      stream: true,
    });
    const types: string[] = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') completed = ev.response;
    }
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(types.filter((t) => t === 'response.output_text.delta')).toHaveLength(3);
    expect(text).toBe('Hello from gpt-4o');
    expect(completed!.usage).toMatchObject({
      input_tokens: 4,
      output_tokens: 7,
      input_tokens_details: { cached_tokens: 2 },
      output_tokens_details: { reasoning_tokens: 4 },
    });

    const call = await client.responses.create({
      model: 'gpt-4o',
      input: 'weather in Oslo?',
      tools: [{ type: 'function', name: 'get_weather', parameters: {}, strict: false }],
    });
    const item = call.output[0]!;
    expect(item.type).toBe('function_call');
    if (item.type !== 'function_call') throw new Error('expected a function call');
    expect(JSON.parse(item.arguments)).toEqual({ location: 'Oslo' });
  });

  it('legacy billing endpoints report configurable balance', async () => {
    const sub = await client.get<{ hard_limit_usd: number; has_payment_method: boolean }>(
      '/dashboard/billing/subscription',
    );
    expect(sub).toMatchObject({ hard_limit_usd: 120, has_payment_method: true });
    fake.billing.totalUsageCents = 4200;
    const usage = await client.get<{ total_usage: number }>('/dashboard/billing/usage', {
      query: { start_date: '2026-11-01', end_date: '2026-11-24' },
    });
    expect(usage.total_usage).toBe(4200);
    expect(fake.requests.at(-1)!.query).toEqual({ start_date: '2026-11-01', end_date: '2026-11-24' });
    // Also without the /v1 prefix; reset() restores the configured values.
    fake.reset();
    const res = await fetch(`${fake.url}/dashboard/billing/usage`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(((await res.json()) as { total_usage: number }).total_usage).toBe(2550);
  });
});

describe('rules: errors, expiry, delays, drops', () => {
  const ask = (c: OpenAI = client) =>
    c.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });

  it('429 surfaces as RateLimitError with retry-after; times expires the rule', async () => {
    fake.on({ path: '/v1/chat/completions', respond: { status: 429 }, times: 1 });
    const err = await ask().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const e = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(e.code).toBe('rate_limit_exceeded');
    expect(e.headers?.get('retry-after')).toBe('1');
    // Expired after one use.
    expect((await ask()).choices[0]!.message.content).toBe('Hello from gpt-4o');
  });

  it('the SDK retries through a one-shot 429 and succeeds', async () => {
    fake.on({
      path: '/chat/completions',
      respond: { status: 429, headers: { 'retry-after-ms': '10', 'retry-after': '0' } },
      times: 1,
    });
    const retrying = new OpenAI({ baseURL: `${fake.url}/v1`, apiKey: KEY, maxRetries: 1 });
    const res = await ask(retrying);
    expect(res.choices[0]!.message.content).toBe('Hello from gpt-4o');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.headers['x-stainless-retry-count']).toBe('1');
  });

  it('insufficient_quota, 500, 503 and an HTML 502', async () => {
    fake.on({
      key: KEY,
      times: 1,
      respond: {
        error: {
          message: 'You exceeded your current quota.',
          type: 'insufficient_quota',
          code: 'insufficient_quota',
        },
      },
    });
    const quota = await ask().catch((e: unknown) => e);
    expect(quota).toBeInstanceOf(OpenAI.RateLimitError);
    expect((quota as InstanceType<typeof OpenAI.RateLimitError>).type).toBe('insufficient_quota');

    fake.on({ respond: { status: 500 }, times: 1 });
    fake.on({ respond: { status: 503 }, times: 1 });
    fake.on({ respond: { status: 502 }, times: 1 });
    const e500 = await ask().catch((e: unknown) => e);
    expect(e500).toBeInstanceOf(OpenAI.InternalServerError);
    expect((e500 as InstanceType<typeof OpenAI.InternalServerError>).type).toBe('server_error');
    const e503 = await ask().catch((e: unknown) => e);
    expect((e503 as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    const e502 = await ask().catch((e: unknown) => e);
    expect((e502 as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    const html = await fetch(`${fake.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(html.status).toBe(200); // rules used up
    fake.on({ respond: { status: 502 } });
    const raw = await fetch(`${fake.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(raw.headers.get('content-type')).toBe('text/html');
    expect(await raw.text()).toContain('502 Bad Gateway');
  });

  it('rules match by key; headers are added', async () => {
    fake.on({ key: 'sk-other-key-0000', respond: { status: 401 } });
    fake.on({ key: KEY, respond: { headers: { 'x-ratelimit-remaining-requests': '42' } } });
    const res = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(res.response.headers.get('x-ratelimit-remaining-requests')).toBe('42');
    const other = new OpenAI({ baseURL: `${fake.url}/v1`, apiKey: 'sk-other-key-0000', maxRetries: 0 });
    await expect(ask(other)).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('delayMs and streamDelayMs slow the answer', async () => {
    fake.on({ respond: { delayMs: 120 }, times: 1 });
    let t = Date.now();
    await ask();
    expect(Date.now() - t).toBeGreaterThanOrEqual(100);

    fake.on({ respond: { streamDelayMs: 40 }, times: 1 });
    t = Date.now();
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    for await (const _ of stream) {
      // drain
    }
    // role, 3 words, finish, [DONE] = 5 gaps of 40 ms.
    expect(Date.now() - t).toBeGreaterThanOrEqual(180);
  });

  it('dropAfterChunks cuts the stream mid-way', async () => {
    fake.on({ respond: { dropAfterChunks: 2 }, times: 1 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const got: string[] = [];
    const err = await (async () => {
      for await (const chunk of stream) got.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(got).toEqual(['', 'Hello']);

    fake.on({ respond: { dropAfterChunks: 0 }, times: 1 });
    await expect(ask()).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
    // The server keeps serving afterwards.
    expect((await ask()).choices[0]!.message.content).toBe('Hello from gpt-4o');
  });
});

describe('Azure OpenAI', () => {
  const azure = (opts: { apiKey?: string; apiVersion?: string; deployment?: string } = {}) =>
    new AzureOpenAI({
      endpoint: fake.url,
      apiKey: opts.apiKey ?? 'azure-key-1',
      apiVersion: opts.apiVersion ?? '2024-12-01-preview',
      maxRetries: 0,
      ...(opts.deployment ? { deployment: opts.deployment } : {}),
    });

  it('chat through /openai/deployments/<d>/ with api-key and api-version', async () => {
    const res = await azure().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello azure' }],
    });
    expect(res.model).toBe('gpt-4o-2024-08-06');
    expect(res.choices[0]!.message.content).toBe('Hello from gpt-4o-2024-08-06');
    expect(res.usage!.prompt_tokens).toBe(2);
    const rec = fake.requests[0]!;
    expect(rec).toMatchObject({
      api: 'azure',
      path: '/openai/deployments/gpt-4o/chat/completions',
      deployment: 'gpt-4o',
      query: { 'api-version': '2024-12-01-preview' },
      key: 'azure-key-1',
    });
    expect(rec.headers['api-key']).toBe('azure-key-1');
    expect(rec.headers.authorization).toBeUndefined();
  });

  it('streams with the prompt-filter chunk first and usage last', async () => {
    const stream = await azure().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks[0]!.choices).toEqual([]);
    expect((chunks[0] as unknown as { prompt_filter_results: unknown[] }).prompt_filter_results).toHaveLength(
      1,
    );
    expect(chunks.at(-1)!.usage?.completion_tokens).toBe(3);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('Hello from gpt-4o-2024-08-06');
  });

  it('embeddings, rules by deployment, and 404 for unknown deployments', async () => {
    const emb = await azure().embeddings.create({ model: 'text-embedding-3-small', input: 'hello' });
    expect(emb.data[0]!.embedding).toEqual(fakeEmbedding('hello'));

    fake.on({ model: 'gpt-4o', path: '/chat/completions', respond: { content: 'ruled' }, times: 1 });
    const ruled = await azure().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(ruled.choices[0]!.message.content).toBe('ruled');

    const err = await azure()
      .chat.completions.create({ model: 'gpt-5-nope', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('DeploymentNotFound');
  });

  it('rejects a bad key and a missing api-version', async () => {
    const bad = await azure({ apiKey: 'sk-revoked-key-9999' })
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((bad as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('401');

    const noVersion = await fetch(`${fake.url}/openai/deployments/gpt-4o/chat/completions`, {
      method: 'POST',
      headers: { 'api-key': 'azure-key-1', 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(noVersion.status).toBe(404);
    // An OpenAI Bearer route key does not authenticate Azure's api-key routes and vice versa.
    const wrongHeader = await fetch(`${fake.url}/v1/models`, { headers: { 'api-key': 'azure-key-1' } });
    expect(wrongHeader.status).toBe(401);
  });

  it('responses and models on the resource-level Azure routes', async () => {
    const res = await azure().responses.create({ model: 'gpt-4o', input: 'hi there' });
    expect(res.output_text).toBe('Hello from gpt-4o');
    expect(fake.requests[0]).toMatchObject({
      path: '/openai/responses',
      query: { 'api-version': '2024-12-01-preview' },
    });
    const models = await azure().models.list();
    expect(models.data.length).toBeGreaterThan(0);
    // Deployment-scoped paths only serve model tasks.
    const wrong = await fetch(
      `${fake.url}/openai/deployments/gpt-4o/moderations?api-version=2024-12-01-preview`,
      {
        method: 'POST',
        headers: { 'api-key': 'azure-key-1', 'content-type': 'application/json' },
        body: '{"input":"x"}',
      },
    );
    expect(wrong.status).toBe(404);
  });

  it('speech and transcription through deployments', async () => {
    const tts = await azure().audio.speech.create({ model: 'gpt-4o', voice: 'alloy', input: 'hi' });
    expect(tts.headers.get('content-type')).toBe('audio/mpeg');
    const tr = await azure().audio.transcriptions.create({
      model: 'gpt-4o',
      file: await toFile(new Uint8Array(10), 'a.wav'),
      response_format: 'text',
    });
    expect(tr).toBe('Hello from gpt-4o-2024-08-06\n');
    expect(fake.requests.map((r) => r.path)).toEqual([
      '/openai/deployments/gpt-4o/audio/speech',
      '/openai/deployments/gpt-4o/audio/transcriptions',
    ]);
  });
});
