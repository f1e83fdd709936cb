/**
 * The official `@google/genai` SDK against the relay's Gemini front (/v1beta/models/{model}:...): through the chat
 * bridge to an OpenAI channel and to a Claude channel (the bridge's chat request goes through the Claude
 * adaptor), and natively to a Gemini channel (type 24, body and answer passed through, thinking billed as
 * completion). Billing is checked in the log row; errors arrive as the SDK's ApiError in Google's envelope.
 */
import { ApiError, type Content, FunctionCallingConfigMode, GoogleGenAI, Type } from '@google/genai';
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

let stack: Stack;
let openaiFake: FakeOpenAI;
let anthropicFake: FakeAnthropic;
let geminiFake: FakeGemini;
/** The SDK's default API version is v1 (`/v1/models/...`); `beta` speaks `/v1beta/models/...`. */
let ai: GoogleGenAI;
let beta: GoogleGenAI;
let relayUrl: string;
let apiKey: string;
let userId: number;
const CLAUDE = 'claude-sonnet-4-20250514';
const GEMINI = 'gemini-2.5-flash';

beforeAll(async () => {
  openaiFake = await startFakeOpenAI();
  anthropicFake = await startFakeAnthropic({ keys: ['sk-ant-channel'] });
  geminiFake = await startFakeGemini({ keys: ['gemini-channel-key'] });
  stack = await startStack({ suffix: 'relay_gemini' });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  const token = await seedToken(stack, userId, { unlimited: true });
  await seedChannel(stack, { type: 1, baseUrl: openaiFake.url, models: ['gpt-4o'] });
  await seedChannel(stack, { type: 14, baseUrl: anthropicFake.url, key: 'sk-ant-channel', models: [CLAUDE] });
  await seedChannel(stack, {
    type: 24,
    baseUrl: geminiFake.url,
    key: 'gemini-channel-key',
    models: [GEMINI],
  });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ 'gpt-4o': 1.25, [CLAUDE]: 1.5, [GEMINI]: 0.5 }),
    CompletionRatio: JSON.stringify({ 'gpt-4o': 4, [CLAUDE]: 5, [GEMINI]: 8 }),
  });
  relayUrl = stack.relays[0]!.httpUrl;
  apiKey = `sk-${token.key}`;
  ai = new GoogleGenAI({ apiKey, httpOptions: { baseUrl: relayUrl } });
  beta = new GoogleGenAI({ apiKey, apiVersion: 'v1beta', httpOptions: { baseUrl: relayUrl } });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await openaiFake?.close();
  await anthropicFake?.close();
  await geminiFake?.close();
});

beforeEach(async () => {
  openaiFake.reset();
  anthropicFake.reset();
  geminiFake.reset();
  await drained(stack);
});

const lastLog = (model: string) => lastLogOf(stack, userId, model);

async function logCount(): Promise<number> {
  await drained(stack);
  const [row] = await stack.sql<{ n: string }>(`select count(*) as n from logs where user_id = ?`, [userId]);
  return Number(row?.n);
}

/** The Google error envelope the SDK put into ApiError.message. */
const envelope = (err: ApiError) =>
  JSON.parse(err.message).error as { code: number; status: string; message: string };

const weatherTool = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: {
        type: Type.OBJECT,
        properties: { location: { type: Type.STRING, nullable: true } },
        required: ['location'],
      },
    },
  ],
};

describe('@google/genai to an OpenAI channel through the chat bridge', () => {
  it('generateContent: system instruction and config reach chat, answer and usage come back, billed', async () => {
    openaiFake.on({ model: 'gpt-4o', respond: { usage: { prompt_tokens: 100, completion_tokens: 10 } } });
    const res = await ai.models.generateContent({
      model: 'gpt-4o',
      contents: 'Hello',
      config: {
        systemInstruction: 'Answer briefly.',
        temperature: 0.2,
        maxOutputTokens: 64,
        stopSequences: ['END'],
      },
    });
    expect(res.text).toBe('Hello from gpt-4o');
    expect(res.candidates?.[0]?.finishReason).toBe('STOP');
    expect(res.usageMetadata).toMatchObject({
      promptTokenCount: 100,
      candidatesTokenCount: 10,
      totalTokenCount: 110,
    });
    expect(res.modelVersion).toBe('gpt-4o');

    const sent = openaiFake.requests.at(-1)!;
    expect(sent.body).toMatchObject({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'Hello' },
      ],
      temperature: 0.2,
      max_tokens: 64,
      stop: ['END'],
    });
    expect(sent.body?.stream).toBeUndefined();
    const log = await lastLog('gpt-4o');
    // (100 + 10·4)·1.25 = 175
    expect(Number(log.quota)).toBe(175);
    expect(Number(log.prompt_tokens)).toBe(100);
    expect(log.is_stream).toBe(false);
  });

  it('generateContentStream: text chunks, then finishReason with usageMetadata; billed as a stream', async () => {
    openaiFake.on({ model: 'gpt-4o', respond: { usage: { prompt_tokens: 20, completion_tokens: 3 } } });
    const stream = await beta.models.generateContentStream({ model: 'gpt-4o', contents: 'stream please' });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.text ?? '').join('')).toBe('Hello from gpt-4o');
    const last = chunks.at(-1)!;
    expect(last.candidates?.[0]?.finishReason).toBe('STOP');
    expect(last.usageMetadata).toMatchObject({ promptTokenCount: 20, candidatesTokenCount: 3 });
    expect(openaiFake.requests.at(-1)?.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    const log = await lastLog('gpt-4o');
    expect(log.is_stream).toBe(true);
    // (20 + 3·4)·1.25 = 40
    expect(Number(log.quota)).toBe(40);
  });

  it('function calling round trip: declarations become chat tools, calls and responses keep their ids', async () => {
    const contents: Content[] = [{ role: 'user', parts: [{ text: 'weather in Lyon' }] }];
    const first = await ai.models.generateContent({
      model: 'gpt-4o',
      contents,
      config: {
        tools: [weatherTool],
        toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } },
      },
    });
    const call = first.functionCalls?.[0];
    expect(call?.name).toBe('get_weather');
    expect(call?.args).toEqual({ location: 'Lyon' });
    expect(call?.id).toBeTruthy();
    const chatReq = openaiFake.requests.at(-1)!.body!;
    // Gemini's upper-case OpenAPI types become JSON Schema for the chat tool.
    expect(chatReq.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: {
            type: 'object',
            properties: { location: { type: ['string', 'null'] } },
            required: ['location'],
          },
        },
      },
    ]);
    expect(chatReq.tool_choice).toBe('required');

    // A client that drops the call id (older Gemini code) still gets its response matched by name.
    const { id: _id, ...withoutId } = call!;
    const second = await ai.models.generateContent({
      model: 'gpt-4o',
      contents: [
        ...contents,
        { role: 'model', parts: [{ functionCall: withoutId }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: '21C' } } }] },
      ],
      config: { tools: [weatherTool] },
    });
    expect(second.candidates?.[0]?.content?.role).toBe('model');
    const turns = openaiFake.requests.at(-1)!.body!.messages as Record<string, unknown>[];
    expect(turns.map((t) => t.role)).toEqual(['user', 'assistant', 'tool']);
    const toolCalls = turns[1]!.tool_calls as { id: string; function: { name: string; arguments: string } }[];
    expect(toolCalls[0]?.function).toEqual({ name: 'get_weather', arguments: '{"location":"Lyon"}' });
    expect(turns[2]).toEqual({ role: 'tool', tool_call_id: toolCalls[0]!.id, content: '{"temp":"21C"}' });

    // Streamed: argument fragments are joined into one functionCall part.
    const stream = await ai.models.generateContentStream({
      model: 'gpt-4o',
      contents: 'weather in Nice',
      config: { tools: [weatherTool] },
    });
    const calls = [];
    for await (const chunk of stream) calls.push(...(chunk.functionCalls ?? []));
    expect(calls.map((c) => [c.name, c.args])).toEqual([['get_weather', { location: 'Nice' }]]);
  });

  it('countTokens is answered locally and not billed; models.list and models.get list the caller models', async () => {
    const before = await logCount();
    const count = await ai.models.countTokens({
      model: 'gpt-4o',
      contents: 'one two three four five six seven eight',
    });
    expect(count.totalTokens).toBeGreaterThanOrEqual(8);
    const longer = await ai.models.countTokens({
      model: 'gpt-4o',
      contents: 'one two three four five six seven eight nine ten eleven twelve',
    });
    expect(longer.totalTokens).toBeGreaterThan(count.totalTokens!);
    expect(openaiFake.requests).toHaveLength(0);
    expect(await logCount()).toBe(before);

    const all = [`models/${CLAUDE}`, `models/${GEMINI}`, 'models/gpt-4o'].sort();
    for (const client of [ai, beta]) {
      // pageSize 2 of 3 models: the SDK follows nextPageToken.
      const names: string[] = [];
      for await (const m of await client.models.list({ config: { pageSize: 2 } })) names.push(m.name!);
      expect(names.sort()).toEqual(all);
      const model = await client.models.get({ model: 'gpt-4o' });
      expect(model).toMatchObject({ name: 'models/gpt-4o', displayName: 'gpt-4o' });
      const missing = await client.models.get({ model: 'no-such-model' }).catch((e) => e);
      expect(missing).toBeInstanceOf(ApiError);
      expect(missing.status).toBe(404);
      expect(envelope(missing).status).toBe('NOT_FOUND');
    }
    // OpenAI clients still get OpenAI's list at /v1/models.
    const openaiList = await fetch(`${relayUrl}/v1/models`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect((await openaiList.json()).object).toBe('list');
  });

  it('errors arrive as ApiError in Google envelope with the matching status', async () => {
    const bad = new GoogleGenAI({ apiKey: 'sk-wrong', httpOptions: { baseUrl: relayUrl } });
    const auth = await bad.models.generateContent({ model: 'gpt-4o', contents: 'x' }).catch((e) => e);
    expect(auth).toBeInstanceOf(ApiError);
    expect(auth.status).toBe(401);
    expect(envelope(auth)).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });

    openaiFake.on({
      model: 'gpt-4o',
      respond: { status: 429, error: { message: 'Rate limit reached', type: 'rate_limit_error' } },
    });
    const limited = await ai.models.generateContent({ model: 'gpt-4o', contents: 'x' }).catch((e) => e);
    expect(limited).toBeInstanceOf(ApiError);
    expect(limited.status).toBe(429);
    // The relay words upstream rate limits itself (gateway-behaviour §2); the status is Google's.
    expect(envelope(limited)).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });

    const unknown = await ai.models
      .generateContent({ model: 'no-such-model', contents: 'x' })
      .catch((e) => e);
    expect(unknown).toBeInstanceOf(ApiError);
    expect(envelope(unknown).status).toBe(unknown.status === 403 ? 'PERMISSION_DENIED' : 'UNAVAILABLE');

    const empty = await fetch(`${relayUrl}/v1beta/models/gpt-4o:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [] }),
    });
    expect(empty.status).toBe(400);
    expect((await empty.json()).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });

    const unsupported = await fetch(`${relayUrl}/v1beta/models/gpt-4o:predict`, {
      method: 'POST',
      headers: { 'x-goog-api-key': apiKey },
      body: '{}',
    });
    expect(unsupported.status).toBe(501);
    expect((await unsupported.json()).error.status).toBe('UNIMPLEMENTED');
    const unknownPath = await fetch(`${relayUrl}/v1beta/files`, { headers: { 'x-goog-api-key': apiKey } });
    expect(unknownPath.status).toBe(404);
    expect((await unknownPath.json()).error.status).toBe('NOT_FOUND');
  });

  it('REST clients: ?key= works, streaming without alt=sse is one JSON array', async () => {
    const url = `${relayUrl}/v1beta/models/gpt-4o:streamGenerateContent?key=${apiKey}`;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const items = (await res.json()) as { candidates: { content: { parts: { text: string }[] } }[] }[];
    expect(Array.isArray(items)).toBe(true);
    expect(items.map((i) => i.candidates[0]?.content.parts.map((p) => p.text).join('')).join('')).toBe(
      'Hello from gpt-4o',
    );

    const sse = await fetch(`${url}&alt=sse`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(sse.headers.get('content-type')).toMatch(/text\/event-stream/);
    const text = await sse.text();
    expect(text.startsWith('data: {')).toBe(true);
    expect(text).not.toContain('[DONE]');
  });

  it('sensitive words: a Gemini prompt is refused before any upstream call, a stopped stream ends cleanly', async () => {
    await setOptions(stack, {
      CheckSensitiveEnabled: 'true',
      CheckSensitiveOnPromptEnabled: 'true',
      SensitiveWords: 'forbiddenword',
    });
    try {
      for (const req of [
        { contents: 'fine', config: { systemInstruction: 'say ForbiddenWord' } },
        { contents: [{ role: 'user', parts: [{ text: 'this has a forbiddenword' }] }] },
      ]) {
        const err = await beta.models.generateContent({ model: 'gpt-4o', ...req }).catch((e) => e);
        expect(err).toBeInstanceOf(ApiError);
        expect(err.status).toBe(400);
        expect(envelope(err)).toMatchObject({ status: 'INVALID_ARGUMENT' });
      }
      expect(openaiFake.requests).toHaveLength(0);

      // A word in the answer with StopOnSensitiveEnabled ends the Gemini stream cleanly, without OpenAI's [DONE].
      await setOptions(stack, {
        CheckSensitiveOnPromptEnabled: 'false',
        CheckSensitiveOnCompletionEnabled: 'true',
        StopOnSensitiveEnabled: 'true',
        SensitiveWords: 'from',
      });
      openaiFake.on({ model: 'gpt-4o', respond: { streamDelayMs: 40 } });
      const res = await fetch(`${relayUrl}/v1beta/models/gpt-4o:streamGenerateContent?alt=sse`, {
        method: 'POST',
        headers: { 'x-goog-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
      });
      const text = await res.text();
      expect(res.status).toBe(200);
      expect(text).toContain('data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hello"}]}');
      expect(text).not.toContain('" from"');
      expect(text).not.toContain('[DONE]');
    } finally {
      await setOptions(stack, {
        CheckSensitiveEnabled: 'false',
        CheckSensitiveOnCompletionEnabled: 'false',
        StopOnSensitiveEnabled: 'false',
        SensitiveWords: '',
      });
    }
  });

  it('StopOnSensitiveEnabled off: a Gemini answer has its words masked, body and stream, bridged and native', async () => {
    await setOptions(stack, {
      CheckSensitiveEnabled: 'true',
      CheckSensitiveOnPromptEnabled: 'false',
      CheckSensitiveOnCompletionEnabled: 'true',
      StopOnSensitiveEnabled: 'false',
      SensitiveWords: 'forbidden fruit',
    });
    try {
      const content = 'a forbidden fruit here';
      const masked = 'a *************** here';
      for (const model of ['gpt-4o', GEMINI]) {
        openaiFake.on({ model: 'gpt-4o', respond: { content } });
        geminiFake.on({ model: GEMINI, respond: { content } });
        const res = await beta.models.generateContent({ model, contents: 'hi' });
        expect([model, res.text]).toEqual([model, masked]);
        // The word arrives in two chunks (" forbidden", " fruit"): each half is masked, nothing leaks.
        const stream = await beta.models.generateContentStream({ model, contents: 'hi' });
        const parts: string[] = [];
        for await (const chunk of stream) if (chunk.text) parts.push(chunk.text);
        expect(parts.join('')).toBe(masked);
        expect(parts.some((p) => /forbidden|fruit/.test(p))).toBe(false);
        openaiFake.reset();
        geminiFake.reset();
      }
    } finally {
      await setOptions(stack, {
        CheckSensitiveEnabled: 'false',
        CheckSensitiveOnCompletionEnabled: 'false',
        StopOnSensitiveEnabled: 'true',
        SensitiveWords: '',
      });
    }
  });

  it('inline images and audio become chat content parts; JSON output config becomes response_format', async () => {
    await beta.models.generateContent({
      model: 'gpt-4o',
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'what is this?' },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
            { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
          ],
        },
      ],
      config: { responseMimeType: 'application/json' },
    });
    const chat = openaiFake.requests.at(-1)!.body!;
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        ],
      },
    ]);
    expect(chat.response_format).toEqual({ type: 'json_object' });
  });
});

describe('@google/genai to a Claude channel (chat bridge, then the Claude adaptor)', () => {
  it('generateContent and a streamed function call, billed with the Claude ratios', async () => {
    anthropicFake.on({ respond: { usage: { input_tokens: 100, output_tokens: 50 } } });
    const res = await ai.models.generateContent({
      model: CLAUDE,
      contents: 'Hello',
      config: { systemInstruction: 'Be brief.' },
    });
    expect(res.text).toBe(`Hello from ${CLAUDE}`);
    const sent = anthropicFake.requests.at(-1)!;
    expect(sent.headers['x-api-key']).toBe('sk-ant-channel');
    expect(sent.body?.system).toBe('Be brief.');
    expect(JSON.stringify(sent.body?.messages)).toContain('Hello');
    // (100 + 50·5)·1.5 = 525
    expect(Number((await lastLog(CLAUDE)).quota)).toBe(525);

    const stream = await ai.models.generateContentStream({
      model: CLAUDE,
      contents: 'weather in Rome',
      config: { tools: [weatherTool] },
    });
    const calls = [];
    for await (const chunk of stream) calls.push(...(chunk.functionCalls ?? []));
    expect(calls.map((c) => [c.name, c.args])).toEqual([['get_weather', { location: 'Rome' }]]);
    expect((await lastLog(CLAUDE)).is_stream).toBe(true);
  });
});

describe('@google/genai to a Gemini channel (native passthrough)', () => {
  it('passes the body and answer through, swaps the key, bills thoughts as completion', async () => {
    geminiFake.on({
      model: GEMINI,
      respond: { usage: { promptTokenCount: 40, candidatesTokenCount: 10, thoughtsTokenCount: 30 } },
    });
    const res = await ai.models.generateContent({
      model: GEMINI,
      contents: 'Hello',
      config: { systemInstruction: 'Be brief.', thinkingConfig: { includeThoughts: true } },
    });
    expect(res.text).toBe(`Hello from ${GEMINI}`);
    expect(res.candidates?.[0]?.content?.parts?.[0]).toMatchObject({ thought: true });
    expect(res.usageMetadata).toMatchObject({ thoughtsTokenCount: 30, candidatesTokenCount: 10 });
    const sent = geminiFake.requests.at(-1)!;
    expect(sent.path).toBe(`/v1beta/models/${GEMINI}:generateContent`);
    expect(sent.headers['x-goog-api-key']).toBe('gemini-channel-key');
    expect(sent.body).toMatchObject({
      contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { thinkingConfig: { includeThoughts: true } },
    });
    const log = await lastLog(GEMINI);
    expect(Number(log.completion_tokens)).toBe(40);
    // (40 + (10 + 30)·8)·0.5 = 180
    expect(Number(log.quota)).toBe(180);
  });

  it('streams natively over alt=sse and bills the last usageMetadata', async () => {
    geminiFake.on({ model: GEMINI, respond: { usage: { promptTokenCount: 12, candidatesTokenCount: 3 } } });
    const stream = await ai.models.generateContentStream({ model: GEMINI, contents: 'hi' });
    let text = '';
    for await (const chunk of stream) text += chunk.text ?? '';
    expect(text).toBe(`Hello from ${GEMINI}`);
    const sent = geminiFake.requests.at(-1)!;
    expect(sent.path).toBe(`/v1beta/models/${GEMINI}:streamGenerateContent`);
    expect(sent.search).toContain('alt=sse');
    const log = await lastLog(GEMINI);
    expect(log.is_stream).toBe(true);
    // (12 + 3·8)·0.5 = 18
    expect(Number(log.quota)).toBe(18);
  });

  it('an upstream Gemini error reaches the client with its status and message', async () => {
    geminiFake.on({
      model: GEMINI,
      respond: { error: { status: 'INVALID_ARGUMENT', message: 'Unsupported MIME type: foo/bar' } },
    });
    const err = await ai.models.generateContent({ model: GEMINI, contents: 'x' }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    expect(envelope(err)).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(envelope(err).message).toMatch(/Unsupported MIME type/);
  });
});
