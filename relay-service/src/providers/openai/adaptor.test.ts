import { describe, expect, it } from 'vitest';
import { usage } from '../../core/usage.ts';
import { channel, fixture, fixtureText, relayInput } from '../testing.ts';
import type { Endpoint, RelayInput } from '../types.ts';
import { createOpenAIAdaptor, openaiAdaptor } from './adaptor.ts';

const here = import.meta.url;
const bodyOf = (req: { body: BodyInit | null }) => JSON.parse(req.body as string) as Record<string, unknown>;

describe('OpenAI buildRequest', () => {
  it('sends the client body with model, param_override and forced include_usage, without mutating the input', () => {
    const clientBody = {
      model: 'alias',
      stream: true,
      stream_options: { continuous_usage_stats: false },
      messages: [{ role: 'system', content: 's' }],
      temperature: 0.2,
    };
    const input = relayInput({ upstreamModel: 'gpt-4o-mini', stream: true, body: clientBody });
    const snapshot = structuredClone(clientBody);
    const req = openaiAdaptor.buildRequest(
      channel({ openaiOrganization: 'org-1', paramOverride: { temperature: 0.7, top_p: 0.5 } }),
      input,
    );
    expect(req.url).toBe('https://api.openai.com/v1/chat/completions');
    expect(req.method).toBe('POST');
    expect(Object.fromEntries(req.headers)).toEqual({
      authorization: 'Bearer sk-test',
      'openai-organization': 'org-1',
      'content-type': 'application/json',
      accept: 'text/event-stream',
    });
    expect(bodyOf(req)).toEqual({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { continuous_usage_stats: false, include_usage: true },
      messages: [{ role: 'system', content: 's' }],
      temperature: 0.7,
      top_p: 0.5,
    });
    expect(clientBody).toEqual(snapshot);
  });

  it('param_override cannot change the model that is billed', () => {
    const req = openaiAdaptor.buildRequest(
      channel({ paramOverride: { model: 'other' } }),
      relayInput({ upstreamModel: 'gpt-4o' }),
    );
    expect(bodyOf(req).model).toBe('gpt-4o');
  });

  it('leaves stream_options alone for non-stream calls and honours the channel settings', () => {
    expect(bodyOf(openaiAdaptor.buildRequest(channel(), relayInput())).stream_options).toBeUndefined();
    const streamed = relayInput({
      stream: true,
      body: { stream: true, stream_options: { include_usage: false } },
    });
    expect(
      bodyOf(openaiAdaptor.buildRequest(channel({ setting: { force_stream_options: false } }), streamed))
        .stream_options,
    ).toEqual({ include_usage: false });
    expect(
      'stream_options' in
        bodyOf(
          openaiAdaptor.buildRequest(channel({ setting: { supports_stream_options: false } }), streamed),
        ),
    ).toBe(false);
  });

  it('adapts reasoning models: effort suffix, max_completion_tokens, no temperature, developer role', () => {
    const input = relayInput({
      upstreamModel: 'o3-mini-high',
      body: {
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hi' },
        ],
        max_tokens: 100,
        temperature: 0.3,
      },
    });
    const req = openaiAdaptor.buildRequest(channel(), input);
    expect(bodyOf(req)).toEqual({
      model: 'o3-mini',
      reasoning_effort: 'high',
      max_completion_tokens: 100,
      messages: [
        { role: 'developer', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
    });
  });

  it('keeps the system role for o1-mini and leaves non-reasoning models untouched', () => {
    const messages = [{ role: 'system', content: 's' }];
    const o1mini = bodyOf(
      openaiAdaptor.buildRequest(
        channel(),
        relayInput({ upstreamModel: 'o1-mini', body: { messages, max_tokens: 5 } }),
      ),
    );
    expect(o1mini).toEqual({ model: 'o1-mini', messages, max_completion_tokens: 5 });
    const gpt = bodyOf(
      openaiAdaptor.buildRequest(
        channel(),
        relayInput({ upstreamModel: 'gpt-4o-high', body: { messages, max_tokens: 5, temperature: 1 } }),
      ),
    );
    expect(gpt).toEqual({ model: 'gpt-4o-high', messages, max_tokens: 5, temperature: 1 });
  });

  it('Responses API: an effort suffix becomes reasoning.effort', () => {
    const req = openaiAdaptor.buildRequest(
      channel(),
      relayInput({
        endpoint: 'responses',
        upstreamModel: 'o4-mini-low',
        body: { input: 'x', reasoning: { summary: 'auto' } },
      }),
    );
    expect(req.url).toBe('https://api.openai.com/v1/responses');
    expect(bodyOf(req)).toEqual({
      model: 'o4-mini',
      input: 'x',
      reasoning: { effort: 'low', summary: 'auto' },
    });
  });

  const paths: [Endpoint, string][] = [
    ['chat', '/v1/chat/completions'],
    ['completions', '/v1/completions'],
    ['embeddings', '/v1/embeddings'],
    ['images', '/v1/images/generations'],
    ['imageEdits', '/v1/images/edits'],
    ['speech', '/v1/audio/speech'],
    ['transcriptions', '/v1/audio/transcriptions'],
    ['translations', '/v1/audio/translations'],
    ['moderations', '/v1/moderations'],
    ['rerank', '/v1/rerank'],
    ['responses', '/v1/responses'],
  ];
  it.each(paths)('%s goes to %s', (endpoint, path) => {
    expect(openaiAdaptor.supports(endpoint)).toBe(true);
    const input = relayInput({ endpoint, body: {} });
    expect(openaiAdaptor.buildRequest(channel(), input).url).toBe(`https://api.openai.com${path}`);
  });

  const bases: [number, string][] = [
    [4, 'http://localhost:11434/v1/chat/completions'],
    [19, 'https://ai.360.cn/v1/chat/completions'],
    [22, 'https://fastgpt.run/api/openapi/v1/chat/completions'],
    [25, 'https://api.moonshot.cn/v1/chat/completions'],
    [26, 'https://open.bigmodel.cn/api/paas/v4/chat/completions'],
    [31, 'https://api.lingyiwanwu.com/v1/chat/completions'],
    [35, 'https://api.minimax.chat/v1/text/chatcompletion_v2'],
    [40, 'https://api.siliconflow.cn/v1/chat/completions'],
    [42, 'https://api.mistral.ai/v1/chat/completions'],
    [43, 'https://api.deepseek.com/v1/chat/completions'],
    [45, 'https://ark.cn-beijing.volces.com/api/v3/chat/completions'],
    [46, 'https://qianfan.baidubce.com/v2/chat/completions'],
  ];
  it.each(bases)('type %i defaults to %s', (type, url) => {
    expect(openaiAdaptor.channelTypes).toContain(type);
    expect(openaiAdaptor.buildRequest(channel({ type }), relayInput()).url).toBe(url);
  });

  it('channel.baseUrl wins, with or without the API root in it', () => {
    const input = relayInput({ endpoint: 'embeddings', body: {} });
    expect(
      openaiAdaptor.buildRequest(channel({ type: 43, baseUrl: 'https://proxy.example' }), input).url,
    ).toBe('https://proxy.example/v1/embeddings');
    expect(openaiAdaptor.buildRequest(channel({ baseUrl: 'https://proxy.example/v1/' }), input).url).toBe(
      'https://proxy.example/v1/embeddings',
    );
    expect(openaiAdaptor.buildRequest(channel({ type: 26, baseUrl: 'https://zp.example' }), input).url).toBe(
      'https://zp.example/api/paas/v4/embeddings',
    );
  });

  it('custom channels use baseUrl as the full URL with {model} filled in', () => {
    const ch = channel({ type: 8, baseUrl: 'https://gw.example/deploy/{model}/chat' });
    const req = openaiAdaptor.buildRequest(ch, relayInput({ upstreamModel: 'llama-3-70b' }));
    expect(req.url).toBe('https://gw.example/deploy/llama-3-70b/chat');
    expect(() => openaiAdaptor.buildRequest(channel({ type: 8 }), relayInput())).toThrow(/base URL/);
  });

  it('multipart: forwards the form with model set to the upstream model and lets fetch set the boundary', async () => {
    const form = new FormData();
    form.set('model', 'whisper-alias');
    form.set('file', new Blob([new Uint8Array([1, 2, 3])], { type: 'audio/mpeg' }), 'a.mp3');
    form.set('response_format', 'srt');
    const input: RelayInput = relayInput({
      endpoint: 'transcriptions',
      upstreamModel: 'whisper-1',
      body: form,
    });
    const req = openaiAdaptor.buildRequest(channel(), input);
    expect(req.url).toBe('https://api.openai.com/v1/audio/transcriptions');
    expect(req.headers.has('content-type')).toBe(false);
    const sent = req.body as FormData;
    expect(sent.get('model')).toBe('whisper-1');
    expect(sent.get('response_format')).toBe('srt');
    const file = sent.get('file') as File;
    expect(file.name).toBe('a.mp3');
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
    expect(form.get('model')).toBe('whisper-alias');
    // What fetch would send carries the boundary.
    const ct = new Request('http://x', { method: 'POST', body: sent }).headers.get('content-type');
    expect(ct).toMatch(/^multipart\/form-data; boundary=/);
  });
});

const ok = (body: Uint8Array, contentType = 'application/json') => ({
  status: 200,
  headers: new Headers({ 'content-type': contentType }),
  body,
});

describe('OpenAI parseResponse', () => {
  it('chat: passes the bytes through and reads cached and reasoning tokens', () => {
    const body = fixture(here, 'chat.json');
    const parsed = openaiAdaptor.parseResponse(relayInput(), ok(body));
    expect(parsed.body).toBe(body);
    expect(parsed.contentType).toBe('application/json');
    expect(parsed.usage).toEqual(
      usage({ promptTokens: 1350, completionTokens: 210, cachedTokens: 1152, reasoningTokens: 192 }),
    );
    expect(parsed.completionText).toBe('Paris is the capital of France.');
  });

  it('chat: reads audio input and output tokens', () => {
    const parsed = openaiAdaptor.parseResponse(relayInput(), ok(fixture(here, 'chat-audio.json')));
    expect(parsed.usage).toEqual(
      usage({ promptTokens: 87, completionTokens: 129, audioPromptTokens: 52, audioCompletionTokens: 110 }),
    );
  });

  it('chat: tool call arguments are the generated text', () => {
    const parsed = openaiAdaptor.parseResponse(relayInput(), ok(fixture(here, 'chat-tool-call.json')));
    expect(parsed.completionText).toBe('{\n"location": "Boston, MA"\n}');
    expect(parsed.usage).toEqual(usage({ promptTokens: 82, completionTokens: 17 }));
  });

  it('DeepSeek: prompt_cache_hit_tokens counts as cached; reasoning_content is generated text', () => {
    const ds = relayInput({ upstreamModel: 'deepseek-reasoner' });
    const parsed = openaiAdaptor.parseResponse(ds, ok(fixture(here, 'deepseek-chat.json')));
    expect(parsed.usage).toEqual(
      usage({ promptTokens: 64, completionTokens: 321, cachedTokens: 40, reasoningTokens: 298 }),
    );
    expect(parsed.completionText).toBe('Compare the tenths: 1 < 8.9.11 is smaller than 9.8.');
  });

  it('embeddings: prompt tokens only', () => {
    const parsed = openaiAdaptor.parseResponse(
      relayInput({ endpoint: 'embeddings' }),
      ok(fixture(here, 'embeddings.json')),
    );
    expect(parsed.usage).toEqual(usage({ promptTokens: 8 }));
    expect(parsed.completionText).toBe('');
  });

  it('responses: input/output tokens with details; output and reasoning summary text', () => {
    const parsed = openaiAdaptor.parseResponse(
      relayInput({ endpoint: 'responses' }),
      ok(fixture(here, 'responses.json')),
    );
    expect(parsed.usage).toEqual(usage({ promptTokens: 328, completionTokens: 52, reasoningTokens: 40 }));
    expect(parsed.completionText).toBe("Counting letters.There are three r's.");
  });

  it('speech: binary passthrough with the upstream content type, no usage', () => {
    const audio = new Uint8Array([0xff, 0xfb, 0x90, 0x00]);
    const parsed = openaiAdaptor.parseResponse(relayInput({ endpoint: 'speech' }), ok(audio, 'audio/mpeg'));
    expect(parsed).toEqual({ body: audio, contentType: 'audio/mpeg', usage: null, completionText: '' });
  });

  it('images and edits: gpt-image-1 usage with its text and image input tokens; none for DALL·E', () => {
    const body = new TextEncoder().encode(
      '{"created":1,"data":[{"b64_json":"AA=="}],"usage":{"input_tokens":50,"output_tokens":4160,"total_tokens":4210,"input_tokens_details":{"text_tokens":10,"image_tokens":40}}}',
    );
    for (const endpoint of ['images', 'imageEdits'] as const) {
      expect(openaiAdaptor.parseResponse(relayInput({ endpoint }), ok(body)).usage).toEqual(
        usage({ promptTokens: 50, completionTokens: 4160, imageTokens: 40 }),
      );
    }
    const dalle = new TextEncoder().encode('{"created":1,"data":[{"url":"https://x/y.png"}]}');
    expect(openaiAdaptor.parseResponse(relayInput({ endpoint: 'images' }), ok(dalle)).usage).toBeNull();
  });

  it('image edits pass the multipart form with the mapped model', () => {
    const form = new FormData();
    form.append('image[]', new Blob([new Uint8Array([1, 2])], { type: 'image/png' }), 'a.png');
    form.append('mask', new Blob([new Uint8Array([3])], { type: 'image/png' }), 'm.png');
    form.append('prompt', 'add a hat');
    form.append('model', 'client-model');
    const req = openaiAdaptor.buildRequest(
      channel(),
      relayInput({ endpoint: 'imageEdits', upstreamModel: 'gpt-image-1', body: form }),
    );
    expect(req.url).toBe('https://api.openai.com/v1/images/edits');
    expect(req.headers.get('content-type')).toBeNull();
    const sent = req.body as FormData;
    expect(sent.get('model')).toBe('gpt-image-1');
    expect(sent.get('prompt')).toBe('add a hat');
    expect((sent.get('image[]') as File).name).toBe('a.png');
    expect((sent.get('mask') as File).size).toBe(1);
  });

  it('transcriptions: text/srt/vtt bodies are the output; json with token usage is read', () => {
    const srt = new TextEncoder().encode('1\n00:00:00,000 --> 00:00:01,000\nHello\n');
    const plain = openaiAdaptor.parseResponse(
      relayInput({ endpoint: 'transcriptions' }),
      ok(srt, 'text/plain'),
    );
    expect(plain).toEqual({
      body: srt,
      contentType: 'text/plain',
      usage: null,
      completionText: new TextDecoder().decode(srt),
    });

    const json = new TextEncoder().encode(
      '{"text":"Hello.","usage":{"type":"tokens","input_tokens":14,"input_token_details":{"text_tokens":0,"audio_tokens":14},"output_tokens":4,"total_tokens":18}}',
    );
    const parsed = openaiAdaptor.parseResponse(relayInput({ endpoint: 'translations' }), ok(json));
    expect(parsed.usage).toEqual(usage({ promptTokens: 14, completionTokens: 4, audioPromptTokens: 14 }));
    expect(parsed.completionText).toBe('Hello.');

    const duration = new TextEncoder().encode('{"text":"Hi","usage":{"type":"duration","seconds":3}}');
    expect(
      openaiAdaptor.parseResponse(relayInput({ endpoint: 'transcriptions' }), ok(duration)).usage,
    ).toBeNull();
  });

  it('rerank: Jina-style usage.total_tokens and Cohere-style meta tokens', () => {
    const jina = new TextEncoder().encode(
      '{"model":"jina-reranker-v2","results":[],"usage":{"total_tokens":815}}',
    );
    expect(openaiAdaptor.parseResponse(relayInput({ endpoint: 'rerank' }), ok(jina)).usage).toEqual(
      usage({ promptTokens: 815 }),
    );
    const cohere = new TextEncoder().encode(
      '{"results":[],"meta":{"tokens":{"input_tokens":120,"output_tokens":0}}}',
    );
    expect(openaiAdaptor.parseResponse(relayInput({ endpoint: 'rerank' }), ok(cohere)).usage).toEqual(
      usage({ promptTokens: 120 }),
    );
  });

  it('zero or missing usage is null so core counts locally', () => {
    const zero = new TextEncoder().encode(
      '{"choices":[{"message":{"content":"hey"}}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}',
    );
    const parsed = openaiAdaptor.parseResponse(relayInput(), ok(zero));
    expect(parsed.usage).toBeNull();
    expect(parsed.completionText).toBe('hey');
    const html = new TextEncoder().encode('<html>oops</html>');
    expect(openaiAdaptor.parseResponse(relayInput(), ok(html, '')).usage).toBeNull();
  });
});

describe('OpenAI parseError', () => {
  const err = (status: number, bodyText: string) =>
    openaiAdaptor.parseError({ status, headers: new Headers(), bodyText });

  it('reads the OpenAI envelope', () => {
    expect(err(401, fixtureText(here, 'error-invalid-key.json'))).toEqual({
      status: 401,
      message:
        'Incorrect API key provided: sk-proj-****abcd. You can find your API key at https://platform.openai.com/account/api-keys.',
      type: 'invalid_request_error',
      code: 'invalid_api_key',
    });
    expect(err(429, fixtureText(here, 'error-quota.json'))).toMatchObject({
      type: 'insufficient_quota',
      code: 'insufficient_quota',
    });
  });

  it('reads the variants of compatible upstreams', () => {
    expect(err(400, '{"error":{"message":"bad","type":"","code":1214}}')).toEqual({
      status: 400,
      message: 'bad',
      type: 'upstream_error',
      code: '1214',
    });
    expect(err(500, '{"error":"model overloaded"}')).toMatchObject({
      message: 'model overloaded',
      type: 'upstream_error',
    });
    expect(err(422, '{"detail":"Not Found"}')).toMatchObject({ message: 'Not Found' });
    expect(err(400, '{"message":"Invalid model","type":"invalid_request_error","code":"400"}')).toEqual({
      status: 400,
      message: 'Invalid model',
      type: 'invalid_request_error',
      code: '400',
    });
  });

  it('turns HTML and plain text into a short message', () => {
    expect(err(502, fixtureText(here, 'error-502.nginx.txt'))).toEqual({
      status: 502,
      message: '502 Bad Gateway 502 Bad Gateway nginx',
      type: 'upstream_error',
      code: null,
    });
    const long = err(503, 'x'.repeat(5000));
    expect(long.message).toBe(`${'x'.repeat(500)}…`);
    expect(err(504, '')).toMatchObject({ message: 'upstream returned status 504', type: 'upstream_error' });
  });
});

describe('OpenAI models and balance', () => {
  it('lists models from GET {root}/models', () => {
    const req = openaiAdaptor.modelsRequest!(channel({ type: 26, key: 'zk' }));
    expect(req).toMatchObject({
      url: 'https://open.bigmodel.cn/api/paas/v4/models',
      method: 'GET',
      body: null,
    });
    expect(req.headers.get('authorization')).toBe('Bearer zk');
    expect(
      openaiAdaptor.modelsRequest!(channel({ type: 8, baseUrl: 'https://gw.example/x/{model}' })).url,
    ).toBe('https://gw.example/v1/models');
    expect(openaiAdaptor.parseModels!(JSON.parse(fixtureText(here, 'models.json')))).toEqual([
      'gpt-4o-mini',
      'o3-mini',
      'text-embedding-3-small',
    ]);
    expect(openaiAdaptor.parseModels!({ error: 'x' })).toEqual([]);
  });

  it('OpenAI: subscription hard limit minus the usage (cents) of the last 100 days', () => {
    const adaptor = createOpenAIAdaptor({ now: () => Date.UTC(2026, 2, 15, 23, 0) });
    const reqs = adaptor.balanceRequests!(channel({ openaiOrganization: 'org-9' }));
    expect(reqs.map((r) => r.url)).toEqual([
      'https://api.openai.com/v1/dashboard/billing/subscription',
      'https://api.openai.com/v1/dashboard/billing/usage?start_date=2025-12-05&end_date=2026-03-16',
    ]);
    expect(reqs.every((r) => r.method === 'GET' && r.headers.get('openai-organization') === 'org-9')).toBe(
      true,
    );
    const bodies = [
      JSON.parse(fixtureText(here, 'billing-subscription.json')),
      JSON.parse(fixtureText(here, 'billing-usage.json')),
    ];
    expect(adaptor.parseBalance!(bodies)).toBeCloseTo(120 - 23.456, 9);
  });

  it('DeepSeek: the USD entry of balance_infos', () => {
    const reqs = openaiAdaptor.balanceRequests!(
      channel({ type: 43, baseUrl: 'https://api.deepseek.com/v1' }),
    );
    expect(reqs.map((r) => r.url)).toEqual(['https://api.deepseek.com/user/balance']);
    expect(openaiAdaptor.parseBalance!([JSON.parse(fixtureText(here, 'deepseek-balance.json'))])).toBe(15.25);
    const cnyOnly = { is_available: true, balance_infos: [{ currency: 'CNY', total_balance: '1.00' }] };
    expect(() => openaiAdaptor.parseBalance!([cnyOnly])).toThrow(/USD/);
  });

  it('SiliconFlow: data.totalBalance of /v1/user/info', () => {
    const reqs = openaiAdaptor.balanceRequests!(channel({ type: 40 }));
    expect(reqs.map((r) => r.url)).toEqual(['https://api.siliconflow.cn/v1/user/info']);
    expect(openaiAdaptor.parseBalance!([JSON.parse(fixtureText(here, 'siliconflow-user-info.json'))])).toBe(
      88.88,
    );
  });

  it('other types have no balance API (empty list); unknown bodies are rejected', () => {
    for (const type of [4, 8, 25, 42, 45])
      expect(openaiAdaptor.balanceRequests!(channel({ type }))).toEqual([]);
    expect(() => openaiAdaptor.parseBalance!([{ foo: 1 }])).toThrow(/unrecognised/);
    expect(() => openaiAdaptor.parseBalance!([])).toThrow(/not supported/);
  });
});
