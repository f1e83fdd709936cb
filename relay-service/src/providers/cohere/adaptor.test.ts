import { describe, expect, it } from 'vitest';
import { adaptorFor } from '../registry.ts';
import { channel, fixture, fixtureText, relayInput, runStream, splitAt } from '../testing.ts';
import { createCohereAdaptor } from './adaptor.ts';

const NOW = 1_760_000_000_000;
const adaptor = createCohereAdaptor(() => NOW);
const cohere = channel({ type: 34, key: 'co-key', baseUrl: '' });
const base = import.meta.url;
const ok = { status: 200, headers: new Headers({ 'content-type': 'application/json' }) };

const chunksOf = (text: string) =>
  text
    .split('\n\n')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => s.replace(/^data: /, ''))
    .map((s) => (s === '[DONE]' ? s : JSON.parse(s)));

const sent = (body: BodyInit | null) => JSON.parse(String(body));

describe('cohere adaptor: OpenAI chat → v2 chat request', () => {
  it('is registered for type 34', () => {
    expect(adaptorFor(34)?.id).toBe('cohere');
  });

  it('maps messages of every role, tools, sampling parameters and the JSON schema format', () => {
    const req = adaptor.buildRequest(
      { ...cohere, paramOverride: { safety_mode: 'STRICT', model: 'ignored' } },
      relayInput({
        upstreamModel: 'command-a-03-2025',
        stream: true,
        body: {
          model: 'x',
          max_tokens: 300,
          temperature: 1.4,
          top_p: 1,
          frequency_penalty: -1,
          presence_penalty: 0.5,
          seed: 7,
          stop: ['END', ''],
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'w', schema: { type: 'object', properties: { c: { type: 'string' } } } },
          },
          tools: [
            {
              type: 'function',
              function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } },
            },
          ],
          tool_choice: 'required',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'developer', content: [{ type: 'text', text: 'Use tools.' }] },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is this?' },
                { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'low' } },
              ],
            },
            {
              role: 'assistant',
              content: 'Let me look.',
              tool_calls: [
                {
                  id: 'call_1',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"c":"Paris"}' },
                },
              ],
            },
            { role: 'tool', tool_call_id: 'call_1', content: '21°C' },
            { role: 'assistant', content: 'It is 21°C.' },
            { role: 'user', content: 'Thanks' },
          ],
        },
      }),
    );
    expect(req.url).toBe('https://api.cohere.com/v2/chat');
    expect(req.headers.get('authorization')).toBe('Bearer co-key');
    expect(req.headers.get('accept')).toBe('text/event-stream');
    expect(sent(req.body)).toEqual({
      model: 'command-a-03-2025',
      stream: true,
      safety_mode: 'STRICT',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Use tools.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'low' } },
          ],
        },
        {
          role: 'assistant',
          tool_plan: 'Let me look.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"c":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '21°C' }] },
        { role: 'assistant', content: 'It is 21°C.' },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } },
        },
      ],
      tool_choice: 'REQUIRED',
      max_tokens: 300,
      temperature: 1,
      p: 0.99,
      frequency_penalty: 0,
      presence_penalty: 0.5,
      seed: 7,
      stop_sequences: ['END'],
      response_format: {
        type: 'json_object',
        json_schema: { type: 'object', properties: { c: { type: 'string' } } },
      },
    });
  });

  it('a named tool choice offers only that tool; json_object passes; a base with /v1 is accepted', () => {
    const req = adaptor.buildRequest(
      { ...cohere, baseUrl: 'https://proxy.example/v1/' },
      relayInput({
        upstreamModel: 'command-r-plus',
        body: {
          messages: [{ role: 'user', content: 'hi' }],
          response_format: { type: 'json_object' },
          tools: [
            { type: 'function', function: { name: 'a' } },
            { type: 'function', function: { name: 'b', parameters: { type: 'object' } } },
          ],
          tool_choice: { type: 'function', function: { name: 'b' } },
        },
      }),
    );
    expect(req.url).toBe('https://proxy.example/v2/chat');
    const body = sent(req.body);
    expect(body.stream).toBeUndefined();
    expect(body.tools).toEqual([
      { type: 'function', function: { name: 'b', parameters: { type: 'object' } } },
    ]);
    expect(body.tool_choice).toBe('REQUIRED');
    expect(body.response_format).toEqual({ type: 'json_object' });
  });
});

describe('cohere adaptor: chat replies', () => {
  it('converts a text reply and bills usage.tokens (not billed_units)', async () => {
    const input = relayInput({ upstreamModel: 'command-a-03-2025' });
    const r = adaptor.parseResponse(input, { ...ok, body: fixture(base, 'chat.json') });
    expect(JSON.parse(await new Response(r.body).text())).toEqual({
      id: 'chatcmpl-c14c80c3-18eb-4519-9460-6c92edd8cfb4',
      object: 'chat.completion',
      created: NOW / 1000,
      model: 'command-a-03-2025',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'LLMs stand for Large Language Models.' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 71, completion_tokens: 8, total_tokens: 79 },
    });
    expect(r.usage).toMatchObject({ promptTokens: 71, completionTokens: 8 });
  });

  it('converts tool calls, thinking and the tool plan; finish TOOL_CALL → tool_calls', async () => {
    const r = adaptor.parseResponse(relayInput(), { ...ok, body: fixture(base, 'chat-tool-call.json') });
    const out = JSON.parse(await new Response(r.body).text());
    const choice = out.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBe('I will use the query_daily_sales_report tool.');
    expect(choice.message.reasoning_content).toMatch(/^I will first find/);
    expect(choice.message.tool_calls).toEqual([
      {
        id: 'query_daily_sales_report_hgxxmkby3wta',
        type: 'function',
        function: { name: 'query_daily_sales_report', arguments: '{"day": "2023-09-29"}' },
      },
      {
        id: 'query_product_catalog_rpg0z5h8yyz2',
        type: 'function',
        function: { name: 'query_product_catalog', arguments: '{"category": "Electronics"}' },
      },
    ]);
    expect(r.usage).toMatchObject({ promptTokens: 1032, completionTokens: 124 });
    expect(r.completionText).toContain('{"category": "Electronics"}');
  });

  it('falls back to billed_units; MAX_TOKENS → length', async () => {
    const r = adaptor.parseResponse(relayInput(), { ...ok, body: fixture(base, 'chat-billed-only.json') });
    expect(JSON.parse(await new Response(r.body).text()).choices[0].finish_reason).toBe('length');
    expect(r.usage).toMatchObject({ promptTokens: 12, completionTokens: 3 });
  });
});

describe('cohere adaptor: chat streams', () => {
  it('text deltas become chunks, usage from message-end, [DONE] once — across any split', async () => {
    const bytes = fixture(base, 'chat-stream.sse');
    for (const split of [[], [10, 200, 201, 500], Array.from({ length: 40 }, (_, i) => i * 30 + 7)]) {
      const input = relayInput({
        stream: true,
        upstreamModel: 'command-a-03-2025',
        body: { messages: [], stream_options: { include_usage: true } },
      });
      const { text, tally } = await runStream(adaptor.streamConversion(input), splitAt(bytes, ...split));
      const chunks = chunksOf(text);
      expect(chunks.filter((c) => c === '[DONE]')).toHaveLength(1);
      expect(chunks.at(-1)).toBe('[DONE]');
      const objs = chunks.filter((c) => c !== '[DONE]');
      expect(objs[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
      expect(objs.every((c) => c.id === 'chatcmpl-29f14a5a-11de-4cae-9800-25e4747408ea')).toBe(true);
      expect(objs.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('A large language model');
      expect(objs.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('stop');
      expect(objs.at(-1).usage).toEqual({ prompt_tokens: 71, completion_tokens: 26, total_tokens: 97 });
      expect(tally).toMatchObject({ completionText: 'A large language model', sawFirstToken: true });
      expect(tally.usage).toMatchObject({ promptTokens: 71, completionTokens: 26 });
    }
  });

  it('without include_usage no usage chunk is sent (the tally keeps it)', async () => {
    const input = relayInput({ stream: true });
    const { text, tally } = await runStream(adaptor.streamConversion(input), [
      fixture(base, 'chat-stream.sse'),
    ]);
    expect(chunksOf(text).some((c) => c !== '[DONE]' && c.usage)).toBe(false);
    expect(tally.usage?.completionTokens).toBe(26);
  });

  it('tool plan and two tool calls stream as OpenAI tool_calls deltas', async () => {
    const input = relayInput({ stream: true });
    const { text, tally } = await runStream(adaptor.streamConversion(input), [
      fixture(base, 'chat-stream-tools.sse'),
    ]);
    const objs = chunksOf(text).filter((c) => c !== '[DONE]');
    expect(objs.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('I will check.');
    const calls = objs.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toEqual({
      index: 0,
      id: 'query_daily_sales_report_j3f0adww9pmr',
      type: 'function',
      function: { name: 'query_daily_sales_report', arguments: '' },
    });
    const args = (i: number) =>
      calls
        .filter((c: { index: number }) => c.index === i)
        .map((c: { function: { arguments: string } }) => c.function.arguments)
        .join('');
    expect(JSON.parse(args(0))).toEqual({ day: '2023-09-29' });
    expect(JSON.parse(args(1))).toEqual({ category: 'Electronics' });
    expect(calls.find((c: { index: number; id?: string }) => c.index === 1 && c.id)?.id).toBe(
      'query_product_catalog_x1',
    );
    expect(objs.at(-1).choices[0].finish_reason).toBe('tool_calls');
    expect(tally.usage).toMatchObject({ promptTokens: 1032, completionTokens: 124 });
  });

  it('thinking becomes reasoning_content; a message-end error reaches the client as an error chunk', async () => {
    const input = relayInput({ stream: true });
    const { text, tally } = await runStream(adaptor.streamConversion(input), [
      fixture(base, 'chat-stream-error.sse'),
    ]);
    const objs = chunksOf(text).filter((c) => c !== '[DONE]');
    expect(objs[1].choices[0].delta).toEqual({ reasoning_content: 'Hmm.' });
    expect(objs.find((c) => c.error)?.error.message).toBe('internal generation error');
    expect(tally).toMatchObject({ usage: null, completionText: 'Hmm.' });
  });
});

describe('cohere adaptor: embeddings and rerank', () => {
  it('embeddings: input → texts with input_type and float type; reply → OpenAI list with usage', async () => {
    const input = relayInput({
      endpoint: 'embeddings',
      upstreamModel: 'embed-v4.0',
      body: { model: 'x', input: ['hello', 'goodbye'], dimensions: 256 },
    });
    const req = adaptor.buildRequest(cohere, input);
    expect(req.url).toBe('https://api.cohere.com/v2/embed');
    expect(sent(req.body)).toEqual({
      model: 'embed-v4.0',
      texts: ['hello', 'goodbye'],
      input_type: 'search_document',
      embedding_types: ['float'],
      output_dimension: 256,
    });
    const r = adaptor.parseResponse(input, { ...ok, body: fixture(base, 'embed.json') });
    const out = JSON.parse(await new Response(r.body).text());
    expect(out).toEqual({
      object: 'list',
      model: 'embed-v4.0',
      data: [
        { object: 'embedding', index: 0, embedding: [0.016296387, -0.008354187, -0.04699707] },
        { object: 'embedding', index: 1, embedding: [0.0079422, 0.018920898, -0.0101242065] },
      ],
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });
    expect(r.usage).toMatchObject({ promptTokens: 2, completionTokens: 0 });
  });

  it('embeddings in base64 (the openai SDK default) are little-endian float32', async () => {
    const input = relayInput({
      endpoint: 'embeddings',
      body: { input: 'hello', encoding_format: 'base64', input_type: 'search_query' },
    });
    expect(sent(adaptor.buildRequest(cohere, input).body)).toMatchObject({
      texts: ['hello'],
      input_type: 'search_query',
    });
    const r = adaptor.parseResponse(input, { ...ok, body: fixture(base, 'embed.json') });
    const b64 = JSON.parse(await new Response(r.body).text()).data[0].embedding as string;
    const floats = new Float32Array(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer);
    expect(Array.from(floats)).toEqual([0.016296387, -0.008354187, -0.04699707].map(Math.fround));
  });

  it('rerank: request per v2; reply in new-api shape with documents; search units, tokens counted locally', async () => {
    const docs = [
      'Carson City',
      { text: 'Saipan' },
      'Capitalization',
      'Washington, D.C.',
      'Capital punishment',
    ];
    const input = relayInput({
      endpoint: 'rerank',
      upstreamModel: 'rerank-v3.5',
      body: { model: 'x', query: 'capital of the US?', documents: docs, top_n: 3 },
    });
    const req = adaptor.buildRequest(cohere, input);
    expect(req.url).toBe('https://api.cohere.com/v2/rerank');
    expect(sent(req.body)).toEqual({
      model: 'rerank-v3.5',
      query: 'capital of the US?',
      documents: ['Carson City', 'Saipan', 'Capitalization', 'Washington, D.C.', 'Capital punishment'],
      top_n: 3,
    });
    const r = adaptor.parseResponse(input, { ...ok, body: fixture(base, 'rerank.json') });
    expect(JSON.parse(await new Response(r.body).text())).toEqual({
      id: '07734bd2-2473-4f07-94e1-0d9f0e6843cf',
      results: [
        { index: 3, relevance_score: 0.999071, document: { text: 'Washington, D.C.' } },
        { index: 4, relevance_score: 0.7867867, document: { text: 'Capital punishment' } },
        { index: 0, relevance_score: 0.32713068, document: { text: 'Carson City' } },
      ],
      usage: { search_units: 1 },
    });
    expect(r.usage).toBeNull();

    const bare = relayInput({
      endpoint: 'rerank',
      body: { query: 'q', documents: docs, return_documents: false },
    });
    const out = JSON.parse(
      await new Response(
        adaptor.parseResponse(bare, { ...ok, body: fixture(base, 'rerank.json') }).body,
      ).text(),
    );
    expect(out.results[0]).toEqual({ index: 3, relevance_score: 0.999071 });
  });
});

describe('cohere adaptor: errors and models', () => {
  it('reads {id, message} and {message} errors with the status', () => {
    expect(
      adaptor.parseError({
        status: 401,
        headers: new Headers(),
        bodyText: fixtureText(base, 'error-401.json'),
      }),
    ).toEqual({
      status: 401,
      message: 'invalid api token',
      type: 'authentication_error',
      code: null,
    });
    expect(
      adaptor.parseError({
        status: 429,
        headers: new Headers(),
        bodyText: fixtureText(base, 'error-429.json'),
      }),
    ).toMatchObject({ status: 429, type: 'rate_limit_error', message: expect.stringMatching(/Trial key/) });
    expect(
      adaptor.parseError({ status: 498, headers: new Headers(), bodyText: '{"message":"invalid token"}' }),
    ).toEqual({ status: 401, message: 'invalid token', type: 'authentication_error', code: null });
    expect(
      adaptor.parseError({ status: 502, headers: new Headers(), bodyText: '<h1>Bad gateway</h1>' }),
    ).toMatchObject({
      status: 502,
      message: 'Bad gateway',
    });
  });

  it('lists models from GET /v1/models', () => {
    const req = adaptor.modelsRequest!(cohere);
    expect(req.url).toBe('https://api.cohere.com/v1/models?page_size=1000');
    expect(req.headers.get('authorization')).toBe('Bearer co-key');
    expect(adaptor.parseModels!(JSON.parse(fixtureText(base, 'models.json')))).toEqual([
      'command-a-03-2025',
      'embed-v4.0',
      'rerank-v3.5',
    ]);
  });
});
