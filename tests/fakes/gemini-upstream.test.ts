/** The fake speaks what the official @google/genai SDK parses: generate, stream, function calls, models, errors. */
import { ApiError, GoogleGenAI, Type } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGeminiAdaptor } from '../../relay-service/src/providers/gemini/adaptor.ts';
import { channel, relayInput, runStream } from '../../relay-service/src/providers/testing.ts';
import { type FakeGemini, startFakeGemini } from './gemini-upstream.ts';

let fake: FakeGemini;
let ai: GoogleGenAI;

beforeAll(async () => {
  fake = await startFakeGemini({ keys: ['AIza-good'] });
  ai = new GoogleGenAI({ apiKey: 'AIza-good', httpOptions: { baseUrl: fake.url } });
});
afterAll(() => fake.close());

const weatherTool = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'Weather of a city',
      parameters: {
        type: Type.OBJECT,
        properties: { location: { type: Type.STRING } },
        required: ['location'],
      },
    },
  ],
};

describe('fake Gemini upstream through the official SDK', () => {
  it('answers generateContent with usage incl. thoughts (apart from candidates) and cache', async () => {
    fake.on({ respond: { usage: { promptTokenCount: 40, cachedContentTokenCount: 32 } }, times: 1 });
    const res = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'hi there',
      config: { systemInstruction: 'Be brief.', thinkingConfig: { includeThoughts: true } },
    });
    expect(res.text).toBe('Hello from gemini-2.5-flash');
    const parts = res.candidates?.[0]?.content?.parts ?? [];
    expect(parts[0]).toEqual({ text: 'Let me think.', thought: true });
    expect(res.usageMetadata).toMatchObject({
      promptTokenCount: 40,
      cachedContentTokenCount: 32,
      candidatesTokenCount: 3,
      thoughtsTokenCount: 3,
      totalTokenCount: 46,
    });
    expect(res.responseId).toMatch(/^fakeResp/);
    const sent = fake.requests.at(-1)!;
    // SDK 3.x defaults to API version v1; the relay uses v1beta by default: the fake serves both.
    expect(sent.path).toBe('/v1/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe('AIza-good');
    expect(sent.body?.systemInstruction).toBeTruthy();
  });

  it('streams with alt=sse and \\r\\n\\r\\n framing; the SDK assembles the text and sees the finish', async () => {
    const stream = await ai.models.generateContentStream({ model: 'gemini-2.0-flash', contents: 'hi' });
    let text = '';
    let last: Awaited<ReturnType<typeof ai.models.generateContent>> | undefined;
    for await (const chunk of stream) {
      text += chunk.text ?? '';
      last = chunk;
    }
    expect(text).toBe('Hello from gemini-2.0-flash');
    expect(last?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(last?.usageMetadata?.candidatesTokenCount).toBe(3);
    expect(fake.requests.at(-1)?.search).toBe('?alt=sse');
  });

  it('calls the first function when tools are given and the user asks for the weather, streamed too', async () => {
    const res = await ai.models.generateContent({
      model: 'gemini-2.5-pro',
      contents: 'What is the weather in Tokyo?',
      config: { tools: [weatherTool] },
    });
    expect(res.functionCalls).toEqual([{ name: 'get_weather', args: { location: 'Tokyo' } }]);
    const stream = await ai.models.generateContentStream({
      model: 'gemini-2.5-pro',
      contents: 'weather in Oslo',
      config: { tools: [weatherTool] },
    });
    const calls = [];
    for await (const chunk of stream) calls.push(...(chunk.functionCalls ?? []));
    expect(calls).toEqual([{ name: 'get_weather', args: { location: 'Oslo' } }]);
  });

  it('counts tokens, embeds and lists models without the SDK noticing anything odd', async () => {
    const count = await ai.models.countTokens({ model: 'gemini-2.5-flash', contents: 'one two three' });
    expect(count.totalTokens).toBe(3);
    const emb = await ai.models.embedContent({
      model: 'text-embedding-004',
      contents: ['a', 'bb'],
      config: { outputDimensionality: 4 },
    });
    expect(emb.embeddings?.map((e) => e.values?.length)).toEqual([4, 4]);
    const names: string[] = [];
    for await (const m of await ai.models.list({ config: { pageSize: 2 } })) names.push(m.name ?? '');
    expect(names).toEqual([
      'models/gemini-2.5-flash',
      'models/gemini-2.5-pro',
      'models/gemini-2.0-flash',
      'models/text-embedding-004',
    ]);
  });

  it('errors are typed ApiError: bad key (400 API_KEY_INVALID), rule errors, unknown schema fields', async () => {
    const bad = new GoogleGenAI({ apiKey: 'nope', httpOptions: { baseUrl: fake.url } });
    const err = await bad.models
      .generateContent({ model: 'gemini-2.5-flash', contents: 'x' })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    expect(err.message).toContain('API_KEY_INVALID');

    fake.on({ respond: { error: { status: 'RESOURCE_EXHAUSTED', message: 'Quota exceeded' } }, times: 1 });
    const quota = await ai.models
      .generateContent({ model: 'gemini-2.5-flash', contents: 'x' })
      .catch((e) => e);
    expect(quota).toBeInstanceOf(ApiError);
    expect(quota.status).toBe(429);

    // The SDK strips unknown schema keywords itself; raw HTTP shows the fake refusing them as Google does.
    const raw = await fetch(`${fake.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': 'AIza-good', 'content-type': 'application/json' },
      body: JSON.stringify({
        contents: [{ role: 'user', parts: [{ text: 'x' }] }],
        tools: [
          {
            functionDeclarations: [
              {
                name: 'f',
                parameters: {
                  type: 'object',
                  properties: { a: { type: 'string' } },
                  additionalProperties: false,
                },
              },
            ],
          },
        ],
      }),
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toEqual({
      error: {
        code: 400,
        message:
          'Invalid JSON payload received. Unknown name "additionalProperties" at \'tools[0].function_declarations[0].parameters\': Cannot find field.',
        status: 'INVALID_ARGUMENT',
      },
    });
    const field = await ai.models
      .generateContent({ model: 'gemini-2.5-flash', contents: 'x', config: { labels: { a: 'b' } } })
      .catch((e) => e);
    expect(field).not.toBeInstanceOf(Error);
  });

  it('rejects a missing key with 403 PERMISSION_DENIED and answers v1beta and the JSON-array stream too', async () => {
    const anon = await fetch(`${fake.url}/v1beta/models`);
    expect(anon.status).toBe(403);
    expect((await anon.json()).error.status).toBe('PERMISSION_DENIED');
    const arr = await fetch(
      `${fake.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=AIza-good`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], model: 'x' }),
      },
    );
    expect(arr.status).toBe(400);
    expect((await arr.json()).error.message).toContain('Unknown name "model"');
    const ok = await fetch(`${fake.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=AIza-good`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    const list = (await ok.json()) as { candidates: { content: { parts: { text: string }[] } }[] }[];
    expect(list.map((r) => r.candidates[0]!.content.parts[0]!.text).join('')).toBe(
      'Hello from gemini-2.5-flash',
    );
  });
});

describe('fake Gemini rules', () => {
  it('truncates at maxOutputTokens with MAX_TOKENS, wraps JSON output, blocks prompts, omits usage', async () => {
    const short = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'hi',
      config: { maxOutputTokens: 2 },
    });
    expect(short.text).toBe('Hello from');
    expect(short.candidates?.[0]?.finishReason).toBe('MAX_TOKENS');
    const json = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'hi',
      config: { responseMimeType: 'application/json' },
    });
    expect(JSON.parse(json.text ?? '')).toEqual({ message: 'Hello from gemini-2.5-flash' });
    fake.on({ respond: { blockReason: 'PROHIBITED_CONTENT' }, times: 1 });
    const blocked = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'bad words' });
    expect(blocked.candidates).toBeUndefined();
    expect(blocked.promptFeedback?.blockReason).toBe('PROHIBITED_CONTENT');
    expect(blocked.usageMetadata?.promptTokenCount).toBe(2);
    fake.on({ model: /flash/, method: 'generateContent', respond: { omitUsage: true }, times: 1 });
    const bare = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' });
    expect(bare.usageMetadata).toBeUndefined();
  });

  it('ends a stream with an error event the SDK raises, cuts streams, serves raw bodies', async () => {
    fake.on({ respond: { streamErrorAfter: 1 }, times: 1 });
    const seen: string[] = [];
    const failed = await (async () => {
      for await (const c of await ai.models.generateContentStream({
        model: 'gemini-2.5-flash',
        contents: 'hi',
      }))
        seen.push(c.text ?? '');
    })().catch((e) => e);
    expect(seen).toEqual(['Hello']);
    expect(failed).toBeInstanceOf(ApiError);
    expect(failed.status).toBe(503);

    fake.on({ respond: { dropAfterChunks: 2 }, times: 1 });
    const cut = await (async () => {
      for await (const _ of await ai.models.generateContentStream({
        model: 'gemini-2.5-flash',
        contents: 'hi',
      })) {
        // drain
      }
    })().catch((e) => e);
    expect(cut).toBeInstanceOf(Error);

    fake.on({ respond: { status: 502, body: '<html><b>Bad gateway</b></html>' }, times: 1 });
    const html = await fetch(`${fake.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': 'AIza-good' },
      body: '{}',
    });
    expect(html.status).toBe(502);
    expect(await html.text()).toBe('<html><b>Bad gateway</b></html>');
  });
});

describe('the Gemini adaptor against the fake (wire compatibility)', () => {
  const adaptor = createGeminiAdaptor();
  const ch = () => channel({ type: 24, key: 'AIza-good', baseUrl: fake.url });
  const send = async (req: { url: string; method: string; headers: Headers; body: BodyInit | null }) => {
    const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
    return { status: res.status, headers: res.headers, body: new Uint8Array(await res.arrayBuffer()) };
  };

  it('a chat with a strict JSON-schema tool is accepted (schema cleaned) and answered with a tool call', async () => {
    const input = relayInput({
      upstreamModel: 'gemini-2.5-flash-thinking',
      body: {
        model: 'x',
        messages: [
          { role: 'system', content: 'Use tools.' },
          { role: 'user', content: 'What is the weather in Lyon?' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              strict: true,
              parameters: {
                $schema: 'http://json-schema.org/draft-07/schema#',
                type: 'object',
                properties: { location: { type: 'string' } },
                required: ['location'],
                additionalProperties: false,
              },
            },
          },
        ],
      },
    });
    const res = await send(adaptor.buildRequest(ch(), input));
    expect(res.status).toBe(200);
    const parsed = adaptor.parseResponse(input, res);
    const msg = JSON.parse(String(parsed.body)).choices[0];
    expect(msg.finish_reason).toBe('tool_calls');
    expect(msg.message.reasoning_content).toBe('Let me think.');
    expect(msg.message.tool_calls[0].function).toEqual({
      name: 'get_weather',
      arguments: '{"location":"Lyon"}',
    });
    // -thinking: thoughts (3) billed on top of the candidates (1).
    expect(parsed.usage).toMatchObject({ completionTokens: 4, reasoningTokens: 3 });
  });

  it('streams through the conversion and the native passthrough with the last usage', async () => {
    const input = relayInput({
      upstreamModel: 'gemini-2.5-flash',
      stream: true,
      body: {
        model: 'x',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'hi you' }],
      },
    });
    const res = await send(adaptor.buildRequest(ch(), input));
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const out = await runStream(adaptor.streamConversion(input), [res.body]);
    expect(out.tally.completionText).toBe('Hello from gemini-2.5-flash');
    expect(out.tally.usage).toMatchObject({ promptTokens: 2, completionTokens: 3 });
    expect(out.text).toContain('"finish_reason":"stop"');
    expect(out.text.match(/data: \[DONE\]/g)).toHaveLength(1);

    const native = relayInput({
      endpoint: 'generate',
      upstreamModel: 'gemini-2.0-flash',
      stream: true,
      body: { contents: [{ role: 'user', parts: [{ text: 'hello' }] }] },
    });
    const nres = await send(adaptor.buildRequest(ch(), native));
    expect(nres.status).toBe(200);
    const passed = await runStream(adaptor.streamConversion(native), [nres.body]);
    expect(passed.bytes).toEqual(nres.body);
    expect(passed.tally.usage).toMatchObject({ promptTokens: 1, completionTokens: 3 });
  });

  it('lists models, embeds, and reads a bad key as an authentication_error', async () => {
    const models = await send(adaptor.modelsRequest!(ch()));
    expect(adaptor.parseModels!(JSON.parse(new TextDecoder().decode(models.body)))).toContain(
      'gemini-2.5-pro',
    );
    const embedIn = relayInput({
      endpoint: 'embeddings',
      upstreamModel: 'text-embedding-004',
      body: { input: ['a', 'b'] },
    });
    const emb = await send(adaptor.buildRequest(ch(), embedIn));
    expect(JSON.parse(String(adaptor.parseResponse(embedIn, emb).body)).data).toHaveLength(2);
    const bad = await send(
      adaptor.buildRequest({ ...ch(), key: 'wrong' }, relayInput({ upstreamModel: 'gemini-2.5-flash' })),
    );
    expect(
      adaptor.parseError({
        status: bad.status,
        headers: bad.headers,
        bodyText: new TextDecoder().decode(bad.body),
      }),
    ).toMatchObject({ status: 400, type: 'authentication_error', code: 'API_KEY_INVALID' });
  });
});
