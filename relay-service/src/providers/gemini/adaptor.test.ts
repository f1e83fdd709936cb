import { describe, expect, it } from 'vitest';
import { channel, fixture, fixtureText, relayInput, runStream } from '../testing.ts';
import { DEFAULT_PROVIDER_SETTINGS, type ProviderSettings } from '../types.ts';
import { createGeminiAdaptor } from './adaptor.ts';
import { cleanSchema } from './request.ts';

const NOW = 1_760_000_000_000;
const adaptor = createGeminiAdaptor(() => NOW);
const gemini = channel({ type: 24, key: 'AIza-test', baseUrl: '' });
const base = import.meta.url;

const chunksOf = (text: string) =>
  text
    .split('\n\n')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => s.replace(/^data: /, ''))
    .map((s) => (s === '[DONE]' ? s : JSON.parse(s)));

const bodyOf = (req: { body: BodyInit | null }) => JSON.parse(String(req.body));

const settings = (gemini: Partial<ProviderSettings['gemini']>): ProviderSettings => ({
  ...DEFAULT_PROVIDER_SETTINGS,
  gemini: { ...DEFAULT_PROVIDER_SETTINGS.gemini, ...gemini },
});

describe('gemini adaptor: OpenAI chat → generateContent request', () => {
  it('converts system, turns, images, tools, tool results (by name), tool_choice and generation options', () => {
    const req = adaptor.buildRequest(
      gemini,
      relayInput({
        upstreamModel: 'gemini-2.5-flash',
        body: {
          model: 'x',
          max_tokens: 300,
          temperature: 0.5,
          top_p: 0.9,
          top_k: 40,
          stop: ['END'],
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
            { role: 'user', content: 'Paris please.' },
            {
              role: 'assistant',
              content: 'Checking.',
              tool_calls: [
                {
                  id: 'call_abc',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
                },
                { id: 'call_def', type: 'function', function: { name: 'get_time', arguments: '' } },
              ],
            },
            { role: 'tool', tool_call_id: 'call_abc', content: '{"temp":18}' },
            { role: 'tool', tool_call_id: 'call_def', content: '10:00' },
            { role: 'assistant', content: 'It is 18°C.' },
            { role: 'user', content: 'Thanks' },
          ],
          tools: [
            {
              type: 'function',
              function: {
                name: 'get_weather',
                description: 'Weather',
                parameters: {
                  $schema: 'http://json-schema.org/draft-07/schema#',
                  type: 'object',
                  additionalProperties: false,
                  properties: { location: { type: 'string', format: 'city' } },
                  required: ['location'],
                },
              },
            },
            {
              type: 'function',
              function: { name: 'get_time', parameters: { type: 'object', properties: {} } },
            },
          ],
          tool_choice: { type: 'function', function: { name: 'get_weather' } },
        },
      }),
    );
    expect(req.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
    );
    expect(req.method).toBe('POST');
    expect(req.headers.get('x-goog-api-key')).toBe('AIza-test');
    expect(req.headers.get('authorization')).toBeNull();
    expect(bodyOf(req)).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.\n\nUse tools.' }] },
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'What is in this image and the weather?' },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
            { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.jpg' } },
            { text: 'Paris please.' },
          ],
        },
        {
          role: 'model',
          parts: [
            { text: 'Checking.' },
            { functionCall: { name: 'get_weather', args: { location: 'Paris' } } },
            { functionCall: { name: 'get_time', args: {} } },
          ],
        },
        {
          // Both results in one user turn, each with the function NAME Gemini matches on.
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { temp: 18 } } },
            { functionResponse: { name: 'get_time', response: { content: '10:00' } } },
          ],
        },
        { role: 'model', parts: [{ text: 'It is 18°C.' }] },
        { role: 'user', parts: [{ text: 'Thanks' }] },
      ],
      generationConfig: {
        maxOutputTokens: 300,
        temperature: 0.5,
        topP: 0.9,
        topK: 40,
        stopSequences: ['END'],
      },
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'Weather',
              parameters: {
                type: 'object',
                properties: { location: { type: 'string' } },
                required: ['location'],
              },
            },
            // No parameters: Gemini rejects an object schema with empty properties.
            { name: 'get_time' },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      safetySettings: [
        { category: 'HARM_CATEGORY_HARASSMENT', threshold: 'OFF' },
        { category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'OFF' },
        { category: 'HARM_CATEGORY_SEXUALLY_EXPLICIT', threshold: 'OFF' },
        { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', threshold: 'OFF' },
        { category: 'HARM_CATEGORY_CIVIC_INTEGRITY', threshold: 'BLOCK_NONE' },
      ],
    });
  });

  it('replays tool calls to Gemini 3 with the signature-skip sentinel on the first call of each turn', () => {
    const messages = [
      { role: 'user', content: 'weather in Paris and Rome' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'w', arguments: '{"c":"Paris"}' } },
          { id: 'b', type: 'function', function: { name: 'w', arguments: '{"c":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'sun' },
      { role: 'tool', tool_call_id: 'b', content: 'rain' },
    ];
    const parts = (model: string) =>
      bodyOf(adaptor.buildRequest(gemini, relayInput({ upstreamModel: model, body: { model, messages } })))
        .contents[1].parts;
    expect(parts('gemini-3-pro-preview')).toEqual([
      {
        functionCall: { name: 'w', args: { c: 'Paris' } },
        thoughtSignature: 'skip_thought_signature_validator',
      },
      { functionCall: { name: 'w', args: { c: 'Rome' } } },
    ]);
    expect(parts('gemini-2.5-flash')).toEqual([
      { functionCall: { name: 'w', args: { c: 'Paris' } } },
      { functionCall: { name: 'w', args: { c: 'Rome' } } },
    ]);
  });

  it('maps tool_choice strings, json response formats and the streaming URL', () => {
    const build = (body: Record<string, unknown>, stream = false) =>
      adaptor.buildRequest(
        gemini,
        relayInput({
          upstreamModel: 'gemini-2.0-flash',
          stream,
          body: { model: 'x', messages: [{ role: 'user', content: 'hi' }], ...body },
        }),
      );
    const tools = [
      {
        type: 'function',
        function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } },
      },
    ];
    expect(bodyOf(build({ tools, tool_choice: 'auto' })).toolConfig).toEqual({
      functionCallingConfig: { mode: 'AUTO' },
    });
    expect(bodyOf(build({ tools, tool_choice: 'required' })).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY' },
    });
    expect(bodyOf(build({ tools, tool_choice: 'none' })).toolConfig).toEqual({
      functionCallingConfig: { mode: 'NONE' },
    });
    expect(bodyOf(build({ response_format: { type: 'json_object' } })).generationConfig).toEqual({
      responseMimeType: 'application/json',
    });
    expect(
      bodyOf(
        build({
          response_format: {
            type: 'json_schema',
            json_schema: {
              name: 'x',
              strict: true,
              schema: {
                type: 'object',
                properties: { n: { type: ['integer', 'null'] }, k: { const: 'a' } },
                required: ['n', 'k'],
                additionalProperties: false,
              },
            },
          },
        }),
      ).generationConfig,
    ).toEqual({
      responseMimeType: 'application/json',
      responseSchema: {
        type: 'object',
        properties: { n: { type: 'integer', nullable: true }, k: { enum: ['a'] } },
        required: ['n', 'k'],
      },
    });
    expect(bodyOf(build({ web_search_options: {} })).tools).toEqual([{ googleSearch: {} }]);
    const streamed = build({}, true);
    expect(streamed.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse',
    );
    expect(streamed.headers.get('accept')).toBe('text/event-stream');
  });

  it('cleans nested schemas: drops $ref/$defs/additionalProperties, keeps property names that look like keywords', () => {
    expect(
      cleanSchema({
        type: 'object',
        $defs: { X: { type: 'string' } },
        properties: {
          type: { type: 'string', enum: ['a', 'b'] },
          list: {
            type: 'array',
            items: { type: 'object', additionalProperties: true, properties: { id: { $ref: '#/$defs/X' } } },
            minItems: 1,
          },
          when: { type: 'string', format: 'date-time', examples: ['2025-01-01T00:00:00Z'] },
          n: { type: 'number', exclusiveMinimum: 0, maximum: 5 },
        },
        required: ['type', 'gone'],
      }),
    ).toEqual({
      type: 'object',
      properties: {
        type: { type: 'string', enum: ['a', 'b'] },
        list: { type: 'array', items: { type: 'object', properties: { id: {} } }, minItems: 1 },
        when: { type: 'string', format: 'date-time' },
        n: { type: 'number', maximum: 5 },
      },
      required: ['type'],
    });
  });

  it('takes the version per model and safety thresholds per category from the settings', () => {
    const req = adaptor.buildRequest(
      { ...gemini, baseUrl: 'http://127.0.0.1:9/', paramOverride: { generationConfig: { seed: 1 } } },
      relayInput({
        upstreamModel: 'gemini-1.5-pro',
        settings: settings({
          versionSettings: { default: 'v1beta', 'gemini-1.5-pro': 'v1' },
          safetySettings: { default: 'BLOCK_ONLY_HIGH', HARM_CATEGORY_HATE_SPEECH: 'BLOCK_LOW_AND_ABOVE' },
        }),
      }),
    );
    expect(req.url).toBe('http://127.0.0.1:9/v1/models/gemini-1.5-pro:generateContent');
    const body = bodyOf(req);
    expect(body.safetySettings).toEqual([
      { category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' },
      { category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_LOW_AND_ABOVE' },
      { category: 'HARM_CATEGORY_SEXUALLY_EXPLICIT', threshold: 'BLOCK_ONLY_HIGH' },
      { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', threshold: 'BLOCK_ONLY_HIGH' },
      { category: 'HARM_CATEGORY_CIVIC_INTEGRITY', threshold: 'BLOCK_ONLY_HIGH' },
    ]);
    // param_override merges at the top level of the body.
    expect(body.generationConfig).toEqual({ seed: 1 });
    const other = adaptor.buildRequest(
      gemini,
      relayInput({ upstreamModel: 'gemini-2.5-pro', settings: settings({ versionSettings: {} }) }),
    );
    expect(other.url).toContain('/v1beta/models/gemini-2.5-pro:generateContent');
  });

  it('turns -thinking suffixes and reasoning_effort into thinkingConfig', () => {
    const thinking = (upstreamModel: string, extra: Record<string, unknown> = {}) => {
      const req = adaptor.buildRequest(
        gemini,
        relayInput({
          upstreamModel,
          body: { model: 'x', messages: [{ role: 'user', content: 'hi' }], ...extra },
        }),
      );
      return { url: req.url, config: bodyOf(req).generationConfig?.thinkingConfig };
    };
    expect(thinking('gemini-2.5-flash-thinking')).toEqual({
      url: expect.stringContaining('/models/gemini-2.5-flash:generateContent'),
      config: { includeThoughts: true },
    });
    expect(thinking('gemini-2.5-flash-thinking-2048').config).toEqual({
      includeThoughts: true,
      thinkingBudget: 2048,
    });
    expect(thinking('gemini-2.5-flash-nothinking')).toEqual({
      url: expect.stringContaining('/models/gemini-2.5-flash:generateContent'),
      config: { thinkingBudget: 0 },
    });
    expect(thinking('gemini-2.5-pro', { reasoning_effort: 'high' }).config).toEqual({
      includeThoughts: true,
      thinkingBudget: 24576,
    });
    expect(thinking('gemini-2.5-pro', { reasoning_effort: 'constructor' }).config).toBeUndefined();
    expect(thinking('gemini-2.5-pro').config).toBeUndefined();
  });
});

describe('gemini adaptor: generateContent response → OpenAI chat completion', () => {
  it('maps thought parts to reasoning_content and bills thoughts as completion (#1014); cache inside prompt', () => {
    const parsed = adaptor.parseResponse(relayInput({ upstreamModel: 'gemini-2.5-flash' }), {
      status: 200,
      headers: new Headers(),
      body: fixture(base, 'generate-text.json'),
    });
    expect(parsed.usage).toEqual({
      promptTokens: 1200,
      completionTokens: 9 + 50,
      cachedTokens: 1024,
      cacheWriteTokens: 0,
      reasoningTokens: 50,
      audioPromptTokens: 0,
      audioCompletionTokens: 0,
      imageTokens: 258,
    });
    expect(JSON.parse(String(parsed.body))).toEqual({
      id: 'chatcmpl-mA4iaYzVKbGtnvgPu9mRoQ4',
      object: 'chat.completion',
      created: NOW / 1000,
      model: 'gemini-2.5-flash',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Hello! How can I help you today?',
            reasoning_content: 'The user greets me; answer briefly.',
          },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 1200,
        completion_tokens: 59,
        total_tokens: 1259,
        prompt_tokens_details: { cached_tokens: 1024 },
        completion_tokens_details: { reasoning_tokens: 50 },
      },
    });
    expect(parsed.completionText).toBe('The user greets me; answer briefly.Hello! How can I help you today?');
  });

  it('maps functionCall parts to tool_calls with generated ids; tool-use prompt tokens join the prompt', () => {
    const parsed = adaptor.parseResponse(relayInput(), {
      status: 200,
      headers: new Headers(),
      body: fixture(base, 'generate-tool.json'),
    });
    const body = JSON.parse(String(parsed.body));
    expect(body.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_0',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
          },
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' },
          },
        ],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    });
    expect(parsed.usage).toMatchObject({
      promptTokens: 80 + 12,
      completionTokens: 30 + 28,
      reasoningTokens: 28,
    });
  });

  it('maps several candidates (n > 1) to several choices', () => {
    const input = relayInput({ body: { model: 'x', n: 2, messages: [{ role: 'user', content: 'hi' }] } });
    expect(bodyOf(adaptor.buildRequest(gemini, input)).generationConfig).toEqual({ candidateCount: 2 });
    const parsed = adaptor.parseResponse(input, {
      status: 200,
      headers: new Headers(),
      body: new TextEncoder().encode(
        JSON.stringify({
          candidates: [
            { content: { parts: [{ text: 'A' }], role: 'model' }, finishReason: 'STOP', index: 0 },
            { content: { parts: [{ text: 'B' }], role: 'model' }, finishReason: 'MAX_TOKENS', index: 1 },
          ],
          usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2, totalTokenCount: 3 },
        }),
      ),
    });
    const body = JSON.parse(String(parsed.body));
    expect(
      body.choices.map((c: { message: { content: string }; finish_reason: string }) => [
        c.message.content,
        c.finish_reason,
      ]),
    ).toEqual([
      ['A', 'stop'],
      ['B', 'length'],
    ]);
    expect(body.id).toBe(`chatcmpl-gemini-${NOW / 1000}`);
    expect(parsed.completionText).toBe('AB');
  });

  it('maps finish reasons and a blocked prompt', () => {
    const finish = (reason: string) =>
      JSON.parse(
        String(
          adaptor.parseResponse(relayInput(), {
            status: 200,
            headers: new Headers(),
            body: new TextEncoder().encode(
              JSON.stringify({
                candidates: [{ content: { parts: [{ text: 'x' }], role: 'model' }, finishReason: reason }],
              }),
            ),
          }).body,
        ),
      ).choices[0].finish_reason;
    expect(finish('STOP')).toBe('stop');
    expect(finish('MAX_TOKENS')).toBe('length');
    expect(finish('SAFETY')).toBe('content_filter');
    expect(finish('RECITATION')).toBe('content_filter');
    expect(finish('PROHIBITED_CONTENT')).toBe('content_filter');
    expect(finish('OTHER')).toBe('stop');
    const blocked = adaptor.parseResponse(relayInput(), {
      status: 200,
      headers: new Headers(),
      body: new TextEncoder().encode(
        JSON.stringify({
          promptFeedback: { blockReason: 'SAFETY' },
          usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 },
        }),
      ),
    });
    expect(JSON.parse(String(blocked.body)).choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: null },
        finish_reason: 'content_filter',
        logprobs: null,
      },
    ]);
    expect(blocked.usage).toMatchObject({ promptTokens: 7, completionTokens: 0 });
  });

  it("reads Google's error envelope: a bad key is an authentication_error the auto-disable rules see", () => {
    expect(
      adaptor.parseError({
        status: 400,
        headers: new Headers(),
        bodyText: fixtureText(base, 'error-api-key.json'),
      }),
    ).toEqual({
      status: 400,
      message: 'API key not valid. Please pass a valid API key.',
      type: 'authentication_error',
      code: 'API_KEY_INVALID',
    });
    expect(
      adaptor.parseError({
        status: 403,
        headers: new Headers(),
        bodyText: fixtureText(base, 'error-permission.json'),
      }),
    ).toMatchObject({ status: 403, type: 'permission_error', code: 'CONSUMER_SUSPENDED' });
    expect(
      adaptor.parseError({
        status: 400,
        headers: new Headers(),
        bodyText: '[{"error":{"code":400,"message":"Invalid JSON payload","status":"INVALID_ARGUMENT"}}]',
      }),
    ).toEqual({
      status: 400,
      message: 'Invalid JSON payload',
      type: 'invalid_argument',
      code: 'INVALID_ARGUMENT',
    });
    expect(
      adaptor.parseError({
        status: 502,
        headers: new Headers(),
        bodyText: '<html><b>Bad gateway</b></html>',
      }),
    ).toMatchObject({ message: 'Bad gateway', type: 'upstream_error', code: null });
  });
});

describe('gemini adaptor: SSE → OpenAI chunks', () => {
  it('text stream: role chunk, reasoning and content deltas, finish, usage chunk only when asked, one [DONE]', async () => {
    const withUsage = relayInput({
      upstreamModel: 'gemini-2.5-flash',
      stream: true,
      body: { model: 'x', stream: true, stream_options: { include_usage: true }, messages: [] },
    });
    const { text, tally } = await runStream(adaptor.streamConversion(withUsage), [
      fixture(base, 'stream-text.sse'),
    ]);
    const common = {
      id: 'chatcmpl-nA4iaZ7dJqGfnvgPm8ahwQo',
      object: 'chat.completion.chunk',
      created: NOW / 1000,
      model: 'gemini-2.5-flash',
    };
    const c = (delta: object, finish: string | null = null) => ({
      ...common,
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    });
    expect(chunksOf(text)).toEqual([
      c({ role: 'assistant', content: '' }),
      c({ reasoning_content: '**Greeting** Answer kindly.' }),
      c({ content: 'Bonjour, ' }),
      c({ content: 'ça va ? 👋' }),
      c({}, 'stop'),
      {
        ...common,
        choices: [],
        usage: {
          // Usage from the LAST event; thoughts (52) added to candidates (8).
          prompt_tokens: 310,
          completion_tokens: 60,
          total_tokens: 370,
          prompt_tokens_details: { cached_tokens: 256 },
          completion_tokens_details: { reasoning_tokens: 52 },
        },
      },
      '[DONE]',
    ]);
    expect(tally).toEqual({
      usage: expect.objectContaining({
        promptTokens: 310,
        completionTokens: 60,
        cachedTokens: 256,
        reasoningTokens: 52,
      }),
      completionText: '**Greeting** Answer kindly.Bonjour, ça va ? 👋',
      sawFirstToken: true,
    });
    const plain = await runStream(adaptor.streamConversion(relayInput({ stream: true })), [
      fixture(base, 'stream-text.sse'),
    ]);
    expect(chunksOf(plain.text).some((x) => typeof x === 'object' && 'usage' in x)).toBe(false);
    expect(plain.tally.usage?.completionTokens).toBe(60);
  });

  it('tool stream: each functionCall is one tool call delta with its index; finish is tool_calls', async () => {
    const { text, tally } = await runStream(adaptor.streamConversion(relayInput({ stream: true })), [
      fixture(base, 'stream-tool.sse'),
    ]);
    const deltas = chunksOf(text)
      .filter((x) => x !== '[DONE]')
      .map((x) => ({ delta: x.choices[0].delta, finish: x.choices[0].finish_reason }));
    expect(deltas).toEqual([
      { delta: { role: 'assistant', content: '' }, finish: null },
      { delta: { content: "I'll check." }, finish: null },
      {
        delta: {
          tool_calls: [
            {
              index: 0,
              id: 'call_0',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"location":"Tokyo"}' },
            },
          ],
        },
        finish: null,
      },
      {
        delta: {
          tool_calls: [
            {
              index: 1,
              id: 'call_1',
              type: 'function',
              function: { name: 'get_time', arguments: '{"tz":"Asia/Tokyo"}' },
            },
          ],
        },
        finish: null,
      },
      { delta: {}, finish: 'tool_calls' },
    ]);
    expect(tally.usage).toMatchObject({ promptTokens: 95, completionTokens: 141, reasoningTokens: 120 });
  });

  it('gives the same output when the stream is split at every byte (\\r\\n framing, UTF-8 inside)', async () => {
    for (const name of ['stream-text.sse', 'stream-tool.sse']) {
      const bytes = fixture(base, name);
      const input = relayInput({
        stream: true,
        body: { model: 'x', stream_options: { include_usage: true }, messages: [] },
      });
      const whole = await runStream(adaptor.streamConversion(input), [bytes]);
      const pieces = Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
      const split = await runStream(adaptor.streamConversion(input), pieces);
      expect(split.text).toBe(whole.text);
      expect(split.tally).toEqual(whole.tally);
    }
  });

  it('passes a stream error on as an OpenAI error chunk; a blocked prompt finishes with content_filter', async () => {
    const { text, tally } = await runStream(adaptor.streamConversion(relayInput({ stream: true })), [
      fixture(base, 'stream-error.sse'),
    ]);
    const chunks = chunksOf(text);
    expect(chunks).toContainEqual({
      error: { message: 'The model is overloaded. Please try again later.', type: 'unavailable' },
    });
    expect(chunks.at(-1)).toBe('[DONE]');
    expect(chunks.filter((x) => x === '[DONE]')).toHaveLength(1);
    expect(tally).toEqual({ usage: null, completionText: 'Partial', sawFirstToken: true });

    const blocked = await runStream(adaptor.streamConversion(relayInput({ stream: true })), [
      fixture(base, 'stream-blocked.sse'),
    ]);
    expect(chunksOf(blocked.text).map((x) => (x === '[DONE]' ? x : x.choices[0]?.finish_reason))).toEqual([
      null,
      'content_filter',
      '[DONE]',
    ]);
    expect(blocked.tally).toEqual({
      usage: expect.objectContaining({ promptTokens: 14, completionTokens: 0 }),
      completionText: '',
      sawFirstToken: false,
    });
  });
});

describe('gemini adaptor: native generateContent passthrough', () => {
  const native = (partial: Parameters<typeof relayInput>[0] = {}) =>
    relayInput({
      endpoint: 'generate',
      upstreamModel: 'gemini-2.5-flash',
      body: {
        model: 'gemini-2.5-flash',
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        cachedContent: 'cachedContents/abc',
      },
      ...partial,
    });

  it('supports the generate endpoint; the body passes through with the model in the URL', () => {
    expect(adaptor.supports('generate')).toBe(true);
    expect(adaptor.supports('chat')).toBe(true);
    expect(adaptor.supports('images')).toBe(false);
    const req = adaptor.buildRequest({ ...gemini, paramOverride: { labels: { team: 'a' } } }, native());
    expect(req.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
    );
    expect(bodyOf(req)).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      cachedContent: 'cachedContents/abc',
      labels: { team: 'a' },
    });
    expect(adaptor.buildRequest(gemini, native({ stream: true })).url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
  });

  it('passes the response through unchanged and tallies usage (thoughts billed) and text', () => {
    const bytes = fixture(base, 'generate-text.json');
    const parsed = adaptor.parseResponse(native(), { status: 200, headers: new Headers(), body: bytes });
    expect(parsed.body).toBe(bytes);
    expect(parsed.usage).toMatchObject({ promptTokens: 1200, completionTokens: 59, reasoningTokens: 50 });
    expect(parsed.completionText).toBe('The user greets me; answer briefly.Hello! How can I help you today?');
  });

  it('passes the stream through byte for byte, split anywhere, and tallies the last usage', async () => {
    const bytes = fixture(base, 'stream-text.sse');
    const pieces = Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
    const { bytes: out, tally } = await runStream(adaptor.streamConversion(native({ stream: true })), pieces);
    expect(out).toEqual(bytes);
    expect(tally).toEqual({
      usage: expect.objectContaining({ promptTokens: 310, completionTokens: 60, reasoningTokens: 52 }),
      completionText: '**Greeting** Answer kindly.Bonjour, ça va ? 👋',
      sawFirstToken: true,
    });
  });
});

describe('gemini adaptor: models and embeddings', () => {
  it('lists models from {base}/v1beta/models without the models/ prefix', () => {
    const req = adaptor.modelsRequest!(gemini);
    expect(req.url).toBe('https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000');
    expect(req.method).toBe('GET');
    expect(req.headers.get('x-goog-api-key')).toBe('AIza-test');
    expect(
      adaptor.parseModels!({
        models: [{ name: 'models/gemini-2.5-flash' }, { name: 'models/text-embedding-004' }, {}],
      }),
    ).toEqual(['gemini-2.5-flash', 'text-embedding-004']);
  });

  it('sends embeddings to :batchEmbedContents and answers OpenAI embeddings (float or base64)', () => {
    const input = relayInput({
      endpoint: 'embeddings',
      upstreamModel: 'text-embedding-004',
      body: { model: 'x', input: ['a b', 'c'], dimensions: 3 },
    });
    const req = adaptor.buildRequest(gemini, input);
    expect(req.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/text-embedding-004:batchEmbedContents',
    );
    expect(bodyOf(req)).toEqual({
      requests: [
        {
          model: 'models/text-embedding-004',
          content: { parts: [{ text: 'a b' }] },
          outputDimensionality: 3,
        },
        { model: 'models/text-embedding-004', content: { parts: [{ text: 'c' }] }, outputDimensionality: 3 },
      ],
    });
    const upstream = new TextEncoder().encode(
      JSON.stringify({ embeddings: [{ values: [0.5, -1, 2] }, { values: [1, 0, 0.25] }] }),
    );
    const parsed = adaptor.parseResponse(input, { status: 200, headers: new Headers(), body: upstream });
    expect(parsed.usage).toBeNull();
    expect(JSON.parse(String(parsed.body))).toEqual({
      object: 'list',
      model: 'text-embedding-004',
      data: [
        { object: 'embedding', index: 0, embedding: [0.5, -1, 2] },
        { object: 'embedding', index: 1, embedding: [1, 0, 0.25] },
      ],
    });
    const b64 = adaptor.parseResponse(
      { ...input, body: { ...(input.body as object), encoding_format: 'base64' } },
      { status: 200, headers: new Headers(), body: upstream },
    );
    const first = JSON.parse(String(b64.body)).data[0].embedding as string;
    const floats = new Float32Array(Uint8Array.from(atob(first), (ch) => ch.charCodeAt(0)).buffer);
    expect(Array.from(floats)).toEqual([0.5, -1, 2]);
  });
});
