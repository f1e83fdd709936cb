import { describe, expect, it } from 'vitest';
import { adaptorFor } from '../registry.ts';
import { channel, fixture, fixtureText, relayInput, runStream, splitAt } from '../testing.ts';
import { UpstreamFailure } from '../types.ts';
import { createAliAdaptor } from './adaptor.ts';

const NOW = 1_700_000_000_000;
const ali = createAliAdaptor(() => NOW);
const here = import.meta.url;
const ch = (partial = {}) => channel({ type: 17, key: 'sk-dashscope', ...partial });
const ok = { status: 200, headers: new Headers({ 'content-type': 'application/json' }) };

const chatInput = (body: Record<string, unknown>, stream = false) =>
  relayInput({ upstreamModel: 'qwen-plus', stream, body: { model: 'qwen-plus', ...body } });

const events = (text: string) =>
  text
    .split('\n\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)));

describe('ali adaptor: requests', () => {
  it('is registered for channel type 17 and serves chat and embeddings only', () => {
    expect(adaptorFor(17)?.id).toBe('ali');
    expect(ali.supports('chat')).toBe(true);
    expect(ali.supports('embeddings')).toBe(true);
    expect(ali.supports('images')).toBe(false);
  });

  it('builds the native text-generation call with every mapped parameter', () => {
    const req = ali.buildRequest(
      ch(),
      chatInput({
        messages: [
          { role: 'developer', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather in ' },
              { type: 'text', text: 'Hangzhou?' },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        ],
        temperature: 0.7,
        top_p: 0.8,
        top_k: 20,
        max_tokens: 100,
        seed: 42,
        stop: ['END'],
        repetition_penalty: 1.1,
        tools: [{ type: 'function', function: { name: 'w', parameters: { type: 'object' } } }],
        tool_choice: 'auto',
        stream_options: { include_usage: true },
        enable_search: true,
      }),
    );
    expect(req.url).toBe('https://dashscope.aliyuncs.com/api/v1/services/aigc/text-generation/generation');
    expect(req.method).toBe('POST');
    expect(req.headers.get('authorization')).toBe('Bearer sk-dashscope');
    expect(req.headers.get('content-type')).toBe('application/json');
    expect(req.headers.get('x-dashscope-sse')).toBeNull();
    expect(JSON.parse(req.body as string)).toEqual({
      model: 'qwen-plus',
      input: {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Hangzhou?' },
          {
            role: 'assistant',
            content: '',
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }],
          },
          { role: 'tool', content: 'sunny', tool_call_id: 'call_1' },
        ],
      },
      parameters: {
        result_format: 'message',
        temperature: 0.7,
        top_p: 0.8,
        top_k: 20,
        seed: 42,
        repetition_penalty: 1.1,
        max_tokens: 100,
        stop: ['END'],
        tools: [{ type: 'function', function: { name: 'w', parameters: { type: 'object' } } }],
        tool_choice: 'auto',
        enable_search: true,
      },
    });
  });

  it('streams with X-DashScope-SSE and incremental output, sends the plugin from `other`, honours the base URL', () => {
    const req = ali.buildRequest(
      ch({ baseUrl: 'https://dashscope-intl.aliyuncs.com/api/v1/', other: '{"pdf_extracter":{}}' }),
      chatInput({ messages: [{ role: 'user', content: 'hi' }], stream: true }, true),
    );
    expect(req.url).toBe(
      'https://dashscope-intl.aliyuncs.com/api/v1/services/aigc/text-generation/generation',
    );
    expect(req.headers.get('x-dashscope-sse')).toBe('enable');
    expect(req.headers.get('accept')).toBe('text/event-stream');
    expect(req.headers.get('x-dashscope-plugin')).toBe('{"pdf_extracter":{}}');
    const body = JSON.parse(req.body as string);
    expect(body.parameters).toEqual({ result_format: 'message', incremental_output: true });
  });

  it('maps the -internet suffix to enable_search and keeps param_override from changing the model', () => {
    const req = ali.buildRequest(
      ch({ paramOverride: { model: 'qwen-max', extra: 1 } }),
      relayInput({ upstreamModel: 'qwen-turbo-internet', body: { messages: [] } }),
    );
    const body = JSON.parse(req.body as string);
    expect(body.model).toBe('qwen-turbo');
    expect(body.extra).toBe(1);
    expect(body.parameters.enable_search).toBe(true);
  });

  it('sends vision calls (image parts, or a qwen-vl model) to the multimodal service as item lists', () => {
    const req = ali.buildRequest(
      ch(),
      chatInput({
        messages: [
          { role: 'system', content: 'Describe.' },
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: 'https://x/dog.jpg' } },
              { type: 'text', text: 'What is this?' },
            ],
          },
        ],
      }),
    );
    expect(req.url).toBe(
      'https://dashscope.aliyuncs.com/api/v1/services/aigc/multimodal-generation/generation',
    );
    expect(JSON.parse(req.body as string).input.messages).toEqual([
      { role: 'system', content: [{ text: 'Describe.' }] },
      { role: 'user', content: [{ image: 'https://x/dog.jpg' }, { text: 'What is this?' }] },
    ]);
    const vl = ali.buildRequest(
      ch(),
      relayInput({
        upstreamModel: 'qwen2.5-vl-72b-instruct',
        body: { messages: [{ role: 'user', content: 'hi' }] },
      }),
    );
    expect(vl.url.endsWith('/multimodal-generation/generation')).toBe(true);
    expect(JSON.parse(vl.body as string).input.messages).toEqual([
      { role: 'user', content: [{ text: 'hi' }] },
    ]);
  });

  it('builds the text-embedding call', () => {
    const req = ali.buildRequest(
      ch(),
      relayInput({
        endpoint: 'embeddings',
        upstreamModel: 'text-embedding-v3',
        body: { model: 'text-embedding-v3', input: ['a', 'b'], dimensions: 512 },
      }),
    );
    expect(req.url).toBe(
      'https://dashscope.aliyuncs.com/api/v1/services/embeddings/text-embedding/text-embedding',
    );
    expect(JSON.parse(req.body as string)).toEqual({
      model: 'text-embedding-v3',
      input: { texts: ['a', 'b'] },
      parameters: { text_type: 'query', dimension: 512 },
    });
  });

  it('refuses an `other` that cannot be a header with a clear error', () => {
    expect(() => ali.buildRequest(ch({ other: 'a\u0000b' }), chatInput({ messages: [] }))).toThrow(
      /X-DashScope-Plugin/,
    );
  });
});

describe('ali adaptor: replies', () => {
  it('converts a text reply with usage', () => {
    const input = chatInput({ messages: [{ role: 'user', content: 'who?' }] });
    const parsed = ali.parseResponse(input, { ...ok, body: fixture(here, 'chat-text.json') });
    expect(JSON.parse(parsed.body as string)).toEqual({
      id: 'chatcmpl-902fee3b-f7f0-9a8c-96a1-6b4ea25af114',
      object: 'chat.completion',
      created: NOW / 1000,
      model: 'qwen-plus',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'I am Qwen, a large language model.' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 22,
        completion_tokens: 9,
        total_tokens: 31,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    });
    expect(parsed.usage).toMatchObject({ promptTokens: 22, completionTokens: 9 });
    expect(parsed.completionText).toBe('I am Qwen, a large language model.');
  });

  it('converts a vision reply (content items) and bills its image tokens apart', () => {
    const parsed = ali.parseResponse(chatInput({}), { ...ok, body: fixture(here, 'chat-vision.json') });
    expect(JSON.parse(parsed.body as string).choices[0].message).toEqual({
      role: 'assistant',
      content: 'A dog on a beach.',
    });
    expect(parsed.usage).toMatchObject({ promptTokens: 1262, completionTokens: 6, imageTokens: 1247 });
  });

  it('converts tool calls and cached tokens', () => {
    const parsed = ali.parseResponse(chatInput({}), { ...ok, body: fixture(here, 'chat-tool.json') });
    const json = JSON.parse(parsed.body as string);
    expect(json.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: 'call_cb4d52d4e6b44e8e9d1a3f',
            type: 'function',
            function: { name: 'get_current_weather', arguments: '{"location": "Hangzhou"}' },
          },
        ],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    });
    expect(parsed.usage).toMatchObject({ promptTokens: 216, completionTokens: 19, cachedTokens: 128 });
  });

  it('converts embeddings in text_index order, as floats or base64', () => {
    const body = fixture(here, 'embeddings.json');
    const floats = ali.parseResponse(
      relayInput({ endpoint: 'embeddings', upstreamModel: 'text-embedding-v3', body: { input: ['x', 'y'] } }),
      { ...ok, body },
    );
    expect(JSON.parse(floats.body as string)).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.5, 0.75, -1] },
        { object: 'embedding', index: 1, embedding: [0.25, -0.5, 0.125] },
      ],
      model: 'text-embedding-v3',
      usage: { prompt_tokens: 7, total_tokens: 7 },
    });
    expect(floats.usage).toMatchObject({ promptTokens: 7, completionTokens: 0 });
    const b64 = ali.parseResponse(
      relayInput({
        endpoint: 'embeddings',
        upstreamModel: 'text-embedding-v3',
        body: { input: ['x', 'y'], encoding_format: 'base64' },
      }),
      { ...ok, body },
    );
    const first = JSON.parse(b64.body as string).data[0].embedding as string;
    const bytes = Uint8Array.from(atob(first), (c) => c.charCodeAt(0));
    expect([...new Float32Array(bytes.buffer)]).toEqual([0.5, 0.75, -1]);
  });

  it('treats a 2xx carrying {code, message} and no output as the upstream error', () => {
    const body = new TextEncoder().encode(
      JSON.stringify({ code: 'InternalError', message: 'oops', request_id: 'r', status_code: 500 }),
    );
    let thrown: unknown;
    try {
      ali.parseResponse(chatInput({}), { ...ok, body });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UpstreamFailure);
    expect((thrown as UpstreamFailure).error).toEqual({
      status: 500,
      message: 'oops',
      type: 'upstream_error',
      code: 'InternalError',
    });
  });

  it('reads DashScope errors, JSON or SSE-framed', () => {
    expect(
      ali.parseError({
        status: 401,
        headers: new Headers(),
        bodyText: fixtureText(here, 'error-api-key.json'),
      }),
    ).toEqual({
      status: 401,
      message: 'Invalid API-key provided.',
      type: 'authentication_error',
      code: 'InvalidApiKey',
    });
    expect(
      ali.parseError({
        status: 400,
        headers: new Headers(),
        bodyText: 'id:1\nevent:error\n:HTTP_STATUS/400\ndata:{"code":"InvalidParameter","message":"bad"}\n\n',
      }),
    ).toEqual({ status: 400, message: 'bad', type: 'invalid_request_error', code: 'InvalidParameter' });
    expect(
      ali.parseError({ status: 502, headers: new Headers(), bodyText: '<html>Bad Gateway</html>' }),
    ).toEqual({
      status: 502,
      message: '<html>Bad Gateway</html>',
      type: 'upstream_error',
      code: null,
    });
  });
});

describe('ali adaptor: streams', () => {
  it('converts incremental text, split anywhere, with the usage chunk the client asked for', async () => {
    const bytes = fixture(here, 'stream-text.sse');
    const input = chatInput({ stream: true, stream_options: { include_usage: true } }, true);
    const { text, tally } = await runStream(ali.streamConversion(input), splitAt(bytes, 7, 100, 101, 260));
    const chunks = events(text);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: 'Hello' },
      { content: ', how can I' },
      { content: ' help?' },
      undefined,
    ]);
    expect(chunks.map((c) => c.choices[0]?.finish_reason)).toEqual([null, null, 'stop', undefined]);
    expect(chunks[0].id).toBe('chatcmpl-d9f2c3a0-1b2c-9d3e-8f4a-5b6c7d8e9f01');
    expect(chunks[3].usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(tally.usage).toMatchObject({ promptTokens: 11, completionTokens: 7 });
    expect(tally.completionText).toBe('Hello, how can I help?');
    expect(tally.sawFirstToken).toBe(true);
  });

  it('sends no usage chunk unless asked, and still tallies usage', async () => {
    const { text, tally } = await runStream(ali.streamConversion(chatInput({ stream: true }, true)), [
      fixture(here, 'stream-text.sse'),
    ]);
    expect(events(text).every((c) => c.usage === undefined)).toBe(true);
    expect(tally.usage).toMatchObject({ promptTokens: 11, completionTokens: 7 });
  });

  it('converts streamed tool-call fragments', async () => {
    const { text, tally } = await runStream(ali.streamConversion(chatInput({ stream: true }, true)), [
      fixture(here, 'stream-tool.sse'),
    ]);
    const chunks = events(text);
    expect(chunks.map((c) => c.choices[0].delta)).toEqual([
      {
        role: 'assistant',
        tool_calls: [
          {
            index: 0,
            id: 'call_8f08d2b0fc0c4d8fab7123',
            type: 'function',
            function: { name: 'get_current_weather', arguments: '{"location":' },
          },
        ],
      },
      { tool_calls: [{ index: 0, function: { arguments: ' "Hangzhou"}' } }] },
      {},
    ]);
    expect(chunks[2].choices[0].finish_reason).toBe('tool_calls');
    expect(tally.usage).toMatchObject({ promptTokens: 220, completionTokens: 16 });
    expect(tally.completionText).toBe('{"location": "Hangzhou"}');
  });

  it('passes an event:error on as an OpenAI error chunk and keeps the usage so far', async () => {
    const { text, tally } = await runStream(ali.streamConversion(chatInput({ stream: true }, true)), [
      fixture(here, 'stream-error.sse'),
    ]);
    const chunks = events(text);
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: 'Partial' });
    expect(chunks[1]).toEqual({
      error: {
        message: 'Output data may contain inappropriate content.',
        type: 'upstream_error',
        code: 'DataInspectionFailed',
      },
    });
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(tally.usage).toMatchObject({ promptTokens: 9, completionTokens: 1 });
  });
});
