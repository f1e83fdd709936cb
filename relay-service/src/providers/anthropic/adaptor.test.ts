import { describe, expect, it } from 'vitest';
import { channel, fixture, relayInput, runStream } from '../testing.ts';
import { DEFAULT_PROVIDER_SETTINGS, type ProviderSettings, type RelayInput } from '../types.ts';
import { createAnthropicAdaptor } from './adaptor.ts';

const NOW = 1_760_000_000_000;
const adaptor = createAnthropicAdaptor(() => NOW);
const claude = channel({ type: 14, key: 'sk-ant-key', baseUrl: '' });
const base = import.meta.url;

const chunksOf = (text: string) =>
  text
    .split('\n\n')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => s.replace(/^data: /, ''))
    .map((s) => (s === '[DONE]' ? s : JSON.parse(s)));

describe('anthropic adaptor: OpenAI chat → Messages request', () => {
  it('splits the system prompt, merges consecutive turns, converts images, tools, tool results and stop', () => {
    const req = adaptor.buildRequest(
      claude,
      relayInput({
        upstreamModel: 'claude-sonnet-4-20250514',
        stream: true,
        body: {
          model: 'x',
          max_tokens: 300,
          temperature: 0.5,
          stop: 'END',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'developer', content: [{ type: 'text', text: 'Use tools.' }] },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is in this image and the weather?' },
                { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
                { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
              ],
            },
            {
              role: 'assistant',
              content: 'Checking.',
              tool_calls: [
                {
                  id: 'call_1',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
                },
              ],
            },
            { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
            { role: 'user', content: 'Thanks' },
          ],
          tools: [
            {
              type: 'function',
              function: {
                name: 'get_weather',
                description: 'Weather',
                parameters: { type: 'object', properties: {} },
              },
            },
          ],
          tool_choice: 'required',
        },
        clientHeaders: new Headers({ 'anthropic-beta': 'prompt-caching-2024-07-31' }),
      }),
    );
    expect(req.url).toBe('https://api.anthropic.com/v1/messages');
    expect(req.headers.get('x-api-key')).toBe('sk-ant-key');
    expect(req.headers.get('anthropic-version')).toBe('2023-06-01');
    expect(req.headers.get('anthropic-beta')).toBe('prompt-caching-2024-07-31');
    expect(req.headers.get('authorization')).toBeNull();
    expect(JSON.parse(String(req.body))).toEqual({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 300,
      system: 'Be brief.\n\nUse tools.',
      stream: true,
      temperature: 0.5,
      stop_sequences: ['END'],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this image and the weather?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { location: 'Paris' } },
          ],
        },
        {
          // The tool result and the next user message form one user turn (Claude needs alternation).
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: '18°C' },
            { type: 'text', text: 'Thanks' },
          ],
        },
      ],
      tools: [
        { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: {} } },
      ],
      tool_choice: { type: 'any' },
    });
  });

  it('defaults max_tokens, and turns a -thinking suffix into extended thinking with the budget share', () => {
    const plain = JSON.parse(
      String(adaptor.buildRequest(claude, relayInput({ upstreamModel: 'claude-3-5-haiku-20241022' })).body),
    );
    expect(plain.max_tokens).toBe(8192);
    const thinking = JSON.parse(
      String(
        adaptor.buildRequest(
          claude,
          relayInput({
            upstreamModel: 'claude-sonnet-4-20250514-thinking',
            body: { model: 'x', max_tokens: 10000, top_p: 0.9, messages: [{ role: 'user', content: 'hi' }] },
          }),
        ).body,
      ),
    );
    expect(thinking.model).toBe('claude-sonnet-4-20250514');
    expect(thinking.thinking).toEqual({ type: 'enabled', budget_tokens: 8000 });
    expect(thinking.temperature).toBe(1);
    expect(thinking.top_p).toBeUndefined();
    // A small max_tokens is raised so the minimum budget (1024) stays below it.
    const small = JSON.parse(
      String(
        adaptor.buildRequest(
          claude,
          relayInput({
            upstreamModel: 'claude-sonnet-4-20250514-thinking',
            body: { model: 'x', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
          }),
        ).body,
      ),
    );
    expect(small.thinking.budget_tokens).toBe(1024);
    expect(small.max_tokens).toBeGreaterThan(1024);
  });

  it('honours a channel base URL with or without /v1 and never lets param_override change the model', () => {
    const req = adaptor.buildRequest(
      { ...claude, baseUrl: 'http://127.0.0.1:9/v1', paramOverride: { model: 'other', top_k: 5 } },
      relayInput({ upstreamModel: 'claude-3-5-haiku-20241022' }),
    );
    expect(req.url).toBe('http://127.0.0.1:9/v1/messages');
    const body = JSON.parse(String(req.body));
    expect(body.model).toBe('claude-3-5-haiku-20241022');
    expect(body.top_k).toBe(5);
  });
});

/** Settings as the models tab would save them (claude part overridden). */
const withClaude = (claude: Partial<ProviderSettings['claude']>): ProviderSettings => ({
  ...DEFAULT_PROVIDER_SETTINGS,
  claude: { ...DEFAULT_PROVIDER_SETTINGS.claude, ...claude },
});
const bodyOf = (input: Partial<RelayInput>) =>
  JSON.parse(String(adaptor.buildRequest(claude, relayInput(input)).body));
const hi = [{ role: 'user', content: 'hi' }];

describe('anthropic adaptor: models-tab settings (input.settings)', () => {
  it('takes max_tokens from claude.default_max_tokens: exact model, then name without -thinking, then default', () => {
    const settings = withClaude({
      defaultMaxTokens: { default: 2000, 'claude-3-5-haiku-20241022': 4096, 'claude-opus-4-1': 32000 },
    });
    expect(bodyOf({ settings, upstreamModel: 'claude-3-5-haiku-20241022' }).max_tokens).toBe(4096);
    expect(bodyOf({ settings, upstreamModel: 'claude-sonnet-4-20250514' }).max_tokens).toBe(2000);
    const opus = bodyOf({ settings, upstreamModel: 'claude-opus-4-1-thinking' });
    expect(opus.max_tokens).toBe(32000);
    expect(opus.thinking).toEqual({ type: 'enabled', budget_tokens: 25600 });
    // The client's own limit always wins over the option.
    const own = bodyOf({ settings, body: { model: 'x', max_tokens: 77, messages: hi } });
    expect(own.max_tokens).toBe(77);
    // No "default" entry (and a bad value) falls back to 8192.
    const bare = withClaude({ defaultMaxTokens: { 'claude-x': -5 } });
    expect(bodyOf({ settings: bare, upstreamModel: 'claude-x' }).max_tokens).toBe(8192);
  });

  it('uses claude.thinking_adapter_budget_tokens_percentage for the budget', () => {
    const half = bodyOf({
      settings: withClaude({ thinkingBudgetShare: 0.5 }),
      upstreamModel: 'claude-sonnet-4-20250514-thinking',
      body: { model: 'x', max_tokens: 10000, messages: hi },
    });
    expect(half.thinking).toEqual({ type: 'enabled', budget_tokens: 5000 });
    expect(half.max_tokens).toBe(10000);
    // Share 1 would make budget = max_tokens, which Anthropic refuses: max_tokens is raised above it.
    const full = bodyOf({
      settings: withClaude({ thinkingBudgetShare: 1 }),
      upstreamModel: 'claude-sonnet-4-20250514-thinking',
      body: { model: 'x', max_tokens: 10000, messages: hi },
    });
    expect(full.thinking.budget_tokens).toBe(10000);
    expect(full.max_tokens).toBe(11024);
  });

  it('sends a -thinking name upstream unchanged, without thinking, when the adapter is off', () => {
    const off = bodyOf({
      settings: withClaude({ thinkingAdapterEnabled: false }),
      upstreamModel: 'claude-sonnet-4-20250514-thinking',
      body: { model: 'x', max_tokens: 10000, top_p: 0.9, messages: hi },
    });
    expect(off.model).toBe('claude-sonnet-4-20250514-thinking');
    expect(off.thinking).toBeUndefined();
    expect(off.top_p).toBe(0.9);
  });

  it("adds claude.model_headers_settings headers; anthropic-beta is merged with the client's, version is the client's", () => {
    const settings = withClaude({
      modelHeaders: {
        'claude-sonnet-4-20250514': {
          'anthropic-beta': 'output-128k-2025-02-19',
          'anthropic-version': '2024-01-01',
          'x-extra': 'yes',
          'x-api-key': 'stolen',
        },
        // new-api stores lists; they are joined.
        'claude-3-5-haiku-20241022': { 'anthropic-beta': ['a-1', 'b-2'] } as unknown as Record<
          string,
          string
        >,
      },
    });
    const plain = adaptor.buildRequest(
      claude,
      relayInput({ settings, upstreamModel: 'claude-sonnet-4-20250514-thinking' }),
    );
    expect(plain.headers.get('anthropic-beta')).toBe('output-128k-2025-02-19');
    expect(plain.headers.get('anthropic-version')).toBe('2024-01-01');
    expect(plain.headers.get('x-extra')).toBe('yes');
    expect(plain.headers.get('x-api-key')).toBe('sk-ant-key');
    const client = adaptor.buildRequest(
      claude,
      relayInput({
        settings,
        upstreamModel: 'claude-sonnet-4-20250514',
        clientHeaders: new Headers({
          'anthropic-beta': 'prompt-caching-2024-07-31, output-128k-2025-02-19',
          'anthropic-version': '2023-06-01',
        }),
      }),
    );
    expect(client.headers.get('anthropic-beta')).toBe('output-128k-2025-02-19,prompt-caching-2024-07-31');
    expect(client.headers.get('anthropic-version')).toBe('2023-06-01');
    const list = adaptor.buildRequest(
      claude,
      relayInput({ settings, upstreamModel: 'claude-3-5-haiku-20241022' }),
    );
    expect(list.headers.get('anthropic-beta')).toBe('a-1,b-2');
    // Other models get no extra headers.
    const other = adaptor.buildRequest(claude, relayInput({ settings, upstreamModel: 'claude-opus-4-1' }));
    expect(other.headers.get('anthropic-beta')).toBeNull();
    expect(other.headers.get('x-extra')).toBeNull();
  });

  it('native /v1/messages: model headers, max_tokens only when absent, thinking only when the client sent none', () => {
    const settings = withClaude({
      defaultMaxTokens: { default: 3000 },
      thinkingBudgetShare: 0.5,
      modelHeaders: { 'claude-sonnet-4-20250514': { 'anthropic-beta': 'flag-1' } },
    });
    const native = (upstreamModel: string, body: Record<string, unknown>, s = settings) =>
      adaptor.buildRequest(claude, relayInput({ endpoint: 'messages', settings: s, upstreamModel, body }));
    const req = native('claude-sonnet-4-20250514-thinking', { model: 'x', messages: hi, top_k: 3 });
    expect(req.headers.get('anthropic-beta')).toBe('flag-1');
    const body = JSON.parse(String(req.body));
    expect(body.model).toBe('claude-sonnet-4-20250514');
    expect(body.max_tokens).toBe(3000);
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 1500 });
    expect(body.top_k).toBeUndefined();
    const own = JSON.parse(
      String(
        native('claude-sonnet-4-20250514-thinking', {
          model: 'x',
          max_tokens: 5000,
          thinking: { type: 'enabled', budget_tokens: 2048 },
          messages: hi,
        }).body,
      ),
    );
    expect(own.max_tokens).toBe(5000);
    expect(own.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const off = JSON.parse(
      String(
        native(
          'claude-sonnet-4-20250514-thinking',
          { model: 'x', max_tokens: 10, messages: hi },
          withClaude({ thinkingAdapterEnabled: false }),
        ).body,
      ),
    );
    expect(off.model).toBe('claude-sonnet-4-20250514-thinking');
    expect(off.thinking).toBeUndefined();
    expect(off.max_tokens).toBe(10);
  });
});

describe('anthropic adaptor: JSON mode', () => {
  it('turns json_object into a system instruction and json_schema into output_config.format', () => {
    const body = (format: unknown) =>
      JSON.parse(
        String(
          adaptor.buildRequest(
            claude,
            relayInput({
              upstreamModel: 'claude-3-5-haiku-20241022',
              body: {
                model: 'x',
                response_format: format,
                messages: [
                  { role: 'system', content: 'Sys.' },
                  { role: 'user', content: 'hi' },
                ],
              },
            }),
          ).body,
        ),
      );
    expect(body({ type: 'json_object' }).system).toBe(
      'Sys.\n\nRespond only with a single valid JSON object, without any other text.',
    );
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const structured = body({ type: 'json_schema', json_schema: { name: 'x', strict: true, schema } });
    // Claude's structured output carries the schema itself; no instruction is added.
    expect(structured.output_config).toEqual({ format: { type: 'json_schema', schema } });
    expect(structured.system).toBe('Sys.');
    expect(body({ type: 'json_object' }).output_config).toBeUndefined();
    expect(body({ type: 'text' }).system).toBe('Sys.');
  });

  it('keeps a forced tool choice (tool-forced JSON) and gives it precedence over reasoning_effort', () => {
    const tools = [{ type: 'function', function: { name: 'emit', parameters: { type: 'object' } } }];
    const forced = bodyOf({
      body: {
        model: 'x',
        messages: hi,
        tools,
        tool_choice: { type: 'function', function: { name: 'emit' } },
        reasoning_effort: 'high',
      },
    });
    expect(forced.tool_choice).toEqual({ type: 'tool', name: 'emit' });
    expect(forced.thinking).toBeUndefined();
  });
});

describe('anthropic adaptor: reasoning_effort', () => {
  it('turns the effort into extended thinking with a budget per level', () => {
    const medium = bodyOf({ body: { model: 'x', messages: hi, reasoning_effort: 'medium', top_p: 0.5 } });
    expect(medium.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    // 8192 (the default max_tokens) leaves no room above the budget: raised.
    expect(medium.max_tokens).toBe(8192 + 1024);
    expect(medium.temperature).toBe(1);
    expect(medium.top_p).toBeUndefined();
    const low = bodyOf({ body: { model: 'x', messages: hi, max_tokens: 5000, reasoning_effort: 'low' } });
    expect(low.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(low.max_tokens).toBe(5000);
    for (const effort of ['none', 'constructor', 42])
      expect(
        bodyOf({ body: { model: 'x', messages: hi, reasoning_effort: effort } }).thinking,
      ).toBeUndefined();
  });
});

describe('anthropic adaptor: Messages response → OpenAI chat completion', () => {
  it('maps text and usage; prompt includes cache reads and writes (Claude reports them apart)', () => {
    const input = relayInput({ upstreamModel: 'claude-sonnet-4-20250514' });
    const parsed = adaptor.parseResponse(input, {
      status: 200,
      headers: new Headers(),
      body: fixture(base, 'message-text.json'),
    });
    expect(parsed.usage).toEqual({
      promptTokens: 12 + 2000 + 100,
      completionTokens: 10,
      cachedTokens: 2000,
      cacheWriteTokens: 100,
      reasoningTokens: 0,
      audioPromptTokens: 0,
      audioCompletionTokens: 0,
      imageTokens: 0,
    });
    expect(JSON.parse(String(parsed.body))).toEqual({
      id: 'chatcmpl-01XFDUDYJgAACzvnptvVoYEL',
      object: 'chat.completion',
      created: NOW / 1000,
      model: 'claude-sonnet-4-20250514',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello! How can I help you today?' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 2112,
        completion_tokens: 10,
        total_tokens: 2122,
        prompt_tokens_details: { cached_tokens: 2000 },
      },
    });
  });

  it('maps thinking to reasoning_content and tool_use to tool_calls with finish_reason tool_calls', () => {
    const parsed = adaptor.parseResponse(relayInput(), {
      status: 200,
      headers: new Headers(),
      body: fixture(base, 'message-tool-use.json'),
    });
    const body = JSON.parse(String(parsed.body));
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    expect(body.choices[0].message).toEqual({
      role: 'assistant',
      content: "I'll check the weather.",
      reasoning_content: 'The user wants the weather.',
      tool_calls: [
        {
          id: 'toolu_01A09q90qw90lq917835lq9',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA"}' },
        },
      ],
    });
    expect(parsed.usage?.promptTokens).toBe(472);
    expect(parsed.usage?.completionTokens).toBe(89);
  });

  it("reads Anthropic's error envelope; auth errors carry a type the auto-disable rules know", () => {
    const err = adaptor.parseError({
      status: 401,
      headers: new Headers(),
      bodyText: new TextDecoder().decode(fixture(base, 'error-auth.json')),
    });
    expect(err).toEqual({
      status: 401,
      message: 'invalid x-api-key',
      type: 'authentication_error',
      code: 'authentication_error',
    });
    expect(
      adaptor.parseError({ status: 502, headers: new Headers(), bodyText: '<html><b>Bad gateway</b></html>' })
        .message,
    ).toBe('Bad gateway');
  });
});

describe('anthropic adaptor: stream events → OpenAI chunks', () => {
  it('text stream: role chunk, deltas, finish chunk, usage chunk only when asked, one [DONE]', async () => {
    const withUsage = relayInput({
      upstreamModel: 'claude-sonnet-4-20250514',
      stream: true,
      body: { model: 'x', stream: true, stream_options: { include_usage: true }, messages: [] },
    });
    const { text, tally } = await runStream(adaptor.streamConversion(withUsage), [
      fixture(base, 'stream-text.sse'),
    ]);
    const chunks = chunksOf(text);
    const common = {
      id: 'chatcmpl-1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY',
      object: 'chat.completion.chunk',
      created: NOW / 1000,
      model: 'claude-sonnet-4-20250514',
    };
    expect(chunks).toEqual([
      {
        ...common,
        choices: [
          { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null },
        ],
      },
      {
        ...common,
        choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: null, logprobs: null }],
      },
      { ...common, choices: [{ index: 0, delta: { content: '!' }, finish_reason: null, logprobs: null }] },
      { ...common, choices: [{ index: 0, delta: {}, finish_reason: 'stop', logprobs: null }] },
      {
        ...common,
        choices: [],
        usage: {
          prompt_tokens: 1025,
          completion_tokens: 15,
          total_tokens: 1040,
          prompt_tokens_details: { cached_tokens: 1000 },
        },
      },
      '[DONE]',
    ]);
    expect(tally).toEqual({
      usage: expect.objectContaining({ promptTokens: 1025, completionTokens: 15, cachedTokens: 1000 }),
      completionText: 'Hello!',
      sawFirstToken: true,
    });

    const without = relayInput({ upstreamModel: 'claude-sonnet-4-20250514', stream: true });
    const plain = await runStream(adaptor.streamConversion(without), [fixture(base, 'stream-text.sse')]);
    expect(chunksOf(plain.text).some((c) => typeof c === 'object' && 'usage' in c)).toBe(false);
    expect(plain.tally.usage?.completionTokens).toBe(15);
  });

  it('thinking and tool_use stream: reasoning_content, tool call id/name then argument fragments, signature dropped', async () => {
    const { text, tally } = await runStream(adaptor.streamConversion(relayInput({ stream: true })), [
      fixture(base, 'stream-thinking-tool.sse'),
    ]);
    const deltas = chunksOf(text)
      .filter((c) => c !== '[DONE]')
      .map((c) => ({ delta: c.choices[0].delta, finish: c.choices[0].finish_reason }));
    expect(deltas).toEqual([
      { delta: { role: 'assistant', content: '' }, finish: null },
      { delta: { reasoning_content: 'Need the weather tool.' }, finish: null },
      {
        delta: {
          tool_calls: [
            {
              index: 0,
              id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
              type: 'function',
              function: { name: 'get_weather', arguments: '' },
            },
          ],
        },
        finish: null,
      },
      { delta: { tool_calls: [{ index: 0, function: { arguments: '' } }] }, finish: null },
      {
        delta: { tool_calls: [{ index: 0, function: { arguments: '{"location": "San Fra' } }] },
        finish: null,
      },
      { delta: { tool_calls: [{ index: 0, function: { arguments: 'ncisco, CA"}' } }] }, finish: null },
      { delta: {}, finish: 'tool_calls' },
    ]);
    expect(tally.usage?.completionTokens).toBe(89);
    expect(tally.usage?.promptTokens).toBe(400);
  });

  it('gives the same output when the stream is split at every byte', async () => {
    const bytes = fixture(base, 'stream-thinking-tool.sse');
    const whole = await runStream(adaptor.streamConversion(relayInput({ stream: true })), [bytes]);
    const pieces = Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
    const split = await runStream(adaptor.streamConversion(relayInput({ stream: true })), pieces);
    expect(split.text).toBe(whole.text);
    expect(split.tally).toEqual(whole.tally);
  });

  it('passes a stream error event on as an OpenAI error chunk and still ends with [DONE]', async () => {
    const { text } = await runStream(adaptor.streamConversion(relayInput({ stream: true })), [
      fixture(base, 'stream-error.sse'),
    ]);
    const chunks = chunksOf(text);
    expect(chunks).toContainEqual({ error: { message: 'Overloaded', type: 'overloaded_error' } });
    expect(chunks.at(-1)).toBe('[DONE]');
  });

  it('lists upstream models from /v1/models', () => {
    const req = adaptor.modelsRequest!(claude);
    expect(req.url).toBe('https://api.anthropic.com/v1/models?limit=1000');
    expect(
      adaptor.parseModels!({
        data: [{ id: 'claude-opus-4-20250514', type: 'model' }, { id: 'claude-3-5-haiku-20241022' }],
      }),
    ).toEqual(['claude-opus-4-20250514', 'claude-3-5-haiku-20241022']);
  });
});
