import { describe, expect, it } from 'vitest';
import { RelayError } from '../../core/errors.ts';
import { ZERO_USAGE } from '../../core/usage.ts';
import { channel, fixture, fixtureText, relayInput, runStream, splitAt } from '../testing.ts';
import { UpstreamFailure } from '../types.ts';
import { createBaiduAdaptor } from './adaptor.ts';
import { baiduEndpoint } from './request.ts';

const NOW = 1_760_000_000_000;
const adaptor = createBaiduAdaptor(() => NOW);
const base = import.meta.url;
const baidu = channel({ type: 15, key: 'ak-123|sk-456', baseUrl: '', credential: '24.token.abc' });
const bodyOf = (req: { body: BodyInit | null }) => JSON.parse(String(req.body));
const ok = (body: Uint8Array) => ({ status: 200, headers: new Headers(), body });

const chunksOf = (text: string) =>
  text
    .split('\n\n')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => s.replace(/^data: /, ''))
    .map((s) => (s === '[DONE]' ? s : JSON.parse(s)));

describe('baidu adaptor: the access token exchange', () => {
  it('posts the client credentials to /oauth/2.0/token of the channel base (default aip.baidubce.com)', () => {
    const req = adaptor.credential!.request(baidu, NOW) as { url: string; method: string; body: unknown };
    expect(req.method).toBe('POST');
    expect(req.url).toBe(
      'https://aip.baidubce.com/oauth/2.0/token?grant_type=client_credentials&client_id=ak-123&client_secret=sk-456',
    );
    expect(req.body).toBeNull();
    const local = adaptor.credential!.request({ ...baidu, baseUrl: 'http://127.0.0.1:9' }, NOW) as {
      url: string;
    };
    expect(local.url.startsWith('http://127.0.0.1:9/oauth/2.0/token?')).toBe(true);
  });

  it('reads access_token and expires_in (seconds) from the reply', () => {
    const cred = adaptor.credential!.parse({ status: 200, bodyText: fixtureText(base, 'token.json') }, NOW);
    expect(cred).toEqual({
      value: '24.6c5e1ff107f0e8bcef8c46d3424a0e78.2592000.1485516651.282335-8574074',
      expiresAtMs: NOW + 2_592_000_000,
    });
  });

  it('a reply without a token fails as an authentication error naming Baidu’s reason', () => {
    let err: unknown;
    try {
      adaptor.credential!.parse({ status: 200, bodyText: fixtureText(base, 'token-error.json') }, NOW);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RelayError);
    expect(err).toMatchObject({
      status: 401,
      type: 'authentication_error',
      code: 'invalid_client',
      message: 'the upstream refused the channel credential: invalid_client: unknown client id',
    });
  });

  it('a key without "|" is refused with a clear message and never leaks the key', () => {
    for (const key of ['just-one-part', 'a|b|c', '|sk', 'ak|']) {
      let message = '';
      try {
        adaptor.credential!.request({ ...baidu, key }, NOW);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toBe('a Baidu key is "APIKey|SecretKey" (two parts joined by |)');
    }
  });

  it('the OAuth error body of a non-2xx reply is read (core sends it as the refusal)', () => {
    const err = adaptor.parseError({
      status: 401,
      headers: new Headers(),
      bodyText: fixtureText(base, 'token-error.json'),
    });
    expect(err).toEqual({
      status: 401,
      message: 'invalid_client: unknown client id',
      type: 'authentication_error',
      code: 'invalid_client',
    });
  });
});

describe('baidu adaptor: chat request', () => {
  it('maps model names to endpoints with new-api’s table, else lower-cased', () => {
    expect(baiduEndpoint('ERNIE-4.0-8K')).toBe('completions_pro');
    expect(baiduEndpoint('ERNIE-3.5-8K')).toBe('completions');
    expect(baiduEndpoint('ERNIE-Speed-8K')).toBe('ernie_speed');
    expect(baiduEndpoint('ERNIE-Lite-8K-0308')).toBe('ernie-lite-8k');
    expect(baiduEndpoint('ERNIE-Lite-8K')).toBe('ernie-lite-8k');
    expect(baiduEndpoint('ERNIE-Tiny-8K')).toBe('ernie-tiny-8k');
    expect(baiduEndpoint('ERNIE-Bot-turbo')).toBe('eb-instant');
    expect(baiduEndpoint('BLOOMZ-7B')).toBe('bloomz_7b1');
    expect(baiduEndpoint('ERNIE-4.0-Turbo-8K')).toBe('ernie-4.0-turbo-8k');
  });

  it('lifts system into `system`, maps options, tools to functions, tool turns to function turns', () => {
    const req = adaptor.buildRequest(
      baidu,
      relayInput({
        upstreamModel: 'ERNIE-4.0-8K',
        body: {
          model: 'x',
          temperature: 0.3,
          top_p: 0.8,
          frequency_penalty: 1.2,
          max_tokens: 256,
          user: 'u-1',
          stop: 'END',
          messages: [
            { role: 'system', content: 'Be brief.' },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Weather in ' },
                { type: 'text', text: 'Beijing?' },
              ],
            },
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: 'c1',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"location":"北京"}' },
                },
              ],
            },
            { role: 'tool', tool_call_id: 'c1', content: '{"temp":18}' },
          ],
          tools: [
            {
              type: 'function',
              function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } },
            },
          ],
        },
      }),
    );
    expect(req.method).toBe('POST');
    expect(req.url).toBe(
      'https://aip.baidubce.com/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions_pro?access_token=24.token.abc',
    );
    expect(req.headers.get('content-type')).toBe('application/json');
    expect(bodyOf(req)).toEqual({
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Weather in Beijing?' },
        {
          role: 'assistant',
          content: '',
          function_call: { name: 'get_weather', arguments: '{"location":"北京"}' },
        },
        { role: 'function', name: 'get_weather', content: '{"temp":18}' },
      ],
      stream: false,
      temperature: 0.3,
      top_p: 0.8,
      penalty_score: 1.2,
      max_output_tokens: 256,
      user_id: 'u-1',
      stop: ['END'],
      functions: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object' } }],
    });
  });

  it('streams with stream: true; embeddings go to /embeddings/{endpoint} with the inputs as a list', () => {
    const streamReq = adaptor.buildRequest(
      baidu,
      relayInput({ upstreamModel: 'ERNIE-Speed-8K', stream: true }),
    );
    expect(streamReq.url).toContain('/wenxinworkshop/chat/ernie_speed?access_token=');
    expect(bodyOf(streamReq)).toEqual({ messages: [{ role: 'user', content: 'hi' }], stream: true });
    const embed = adaptor.buildRequest(
      baidu,
      relayInput({
        endpoint: 'embeddings',
        upstreamModel: 'Embedding-V1',
        body: { model: 'x', input: 'one' },
      }),
    );
    expect(embed.url).toBe(
      'https://aip.baidubce.com/rpc/2.0/ai_custom/v1/wenxinworkshop/embeddings/embedding-v1?access_token=24.token.abc',
    );
    expect(bodyOf(embed)).toEqual({ input: ['one'] });
    expect(adaptor.supports('embeddings')).toBe(true);
    expect(adaptor.supports('images')).toBe(false);
  });
});

describe('baidu adaptor: answers', () => {
  it('converts a chat answer with usage', () => {
    const parsed = adaptor.parseResponse(
      relayInput({ upstreamModel: 'ERNIE-3.5-8K' }),
      ok(fixture(base, 'chat.json')),
    );
    expect(JSON.parse(String(parsed.body))).toEqual({
      id: 'as-bcmt5ct4iy',
      object: 'chat.completion',
      created: 1680167072,
      model: 'ERNIE-3.5-8K',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: '您好，我是文心一言，有什么可以帮您？' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 7, completion_tokens: 18, total_tokens: 25 },
    });
    expect(parsed.usage).toMatchObject({ promptTokens: 7, completionTokens: 18 });
    expect(parsed.completionText).toBe('您好，我是文心一言，有什么可以帮您？');
  });

  it('a function_call becomes a tool call', () => {
    const parsed = adaptor.parseResponse(relayInput(), ok(fixture(base, 'chat-function.json')));
    const body = JSON.parse(String(parsed.body));
    expect(body.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_as-xdiknr8pj8',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"location":"北京"}' },
          },
        ],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    });
    expect(parsed.usage).toMatchObject({ promptTokens: 120, completionTokens: 30 });
  });

  it('error_code in a 200 is thrown: 110 as 401 (core drops the token), 18 as 429', () => {
    const thrown = (name: string) => {
      try {
        adaptor.parseResponse(relayInput(), ok(fixture(base, name)));
      } catch (err) {
        return err;
      }
      return null;
    };
    const token = thrown('error-token.json');
    expect(token).toBeInstanceOf(UpstreamFailure);
    expect((token as UpstreamFailure).error).toEqual({
      status: 401,
      message: 'Access token invalid or no longer valid',
      type: 'authentication_error',
      code: '110',
    });
    expect((thrown('error-qps.json') as UpstreamFailure).error).toMatchObject({ status: 429, code: '18' });
  });

  it('converts embeddings (floats or base64) with usage as prompt tokens', () => {
    const input = relayInput({
      endpoint: 'embeddings',
      upstreamModel: 'Embedding-V1',
      body: { input: ['a', 'b'] },
    });
    const parsed = adaptor.parseResponse(input, ok(fixture(base, 'embeddings.json')));
    const body = JSON.parse(String(parsed.body));
    expect(body).toEqual({
      object: 'list',
      model: 'Embedding-V1',
      data: [
        { object: 'embedding', index: 0, embedding: [0.018314670771360397, 0.00942440889775753, -0.25] },
        { object: 'embedding', index: 1, embedding: [0.5, -0.125, 1] },
      ],
      usage: { prompt_tokens: 12, total_tokens: 12 },
    });
    expect(parsed.usage).toMatchObject({ promptTokens: 12, completionTokens: 0 });
    const b64 = adaptor.parseResponse(
      { ...input, body: { input: ['a'], encoding_format: 'base64' } },
      ok(fixture(base, 'embeddings.json')),
    );
    const vec = JSON.parse(String(b64.body)).data[1].embedding as string;
    const view = new DataView(Uint8Array.from(atob(vec), (c) => c.charCodeAt(0)).buffer);
    expect([view.getFloat32(0, true), view.getFloat32(4, true), view.getFloat32(8, true)]).toEqual([
      0.5, -0.125, 1,
    ]);
  });
});

describe('baidu adaptor: stream', () => {
  it('converts frames to chunks (split anywhere), finishes on is_end, reports the last usage when asked', async () => {
    const bytes = fixture(base, 'stream.sse');
    const input = relayInput({
      upstreamModel: 'ERNIE-Speed-8K',
      stream: true,
      body: { messages: [], stream_options: { include_usage: true } },
    });
    const { text, tally } = await runStream(adaptor.streamConversion(input), splitAt(bytes, 7, 40, 301, 302));
    const chunks = chunksOf(text);
    expect(chunks.at(-1)).toBe('[DONE]');
    expect(chunks.slice(0, -1)).toEqual([
      expect.objectContaining({
        id: 'as-vb0m37ti8y',
        choices: [expect.objectContaining({ delta: { role: 'assistant', content: '' } })],
      }),
      expect.objectContaining({
        choices: [expect.objectContaining({ delta: { content: '你好！' }, finish_reason: null })],
      }),
      expect.objectContaining({
        choices: [expect.objectContaining({ delta: { content: '有什么可以帮你？' } })],
      }),
      expect.objectContaining({ choices: [expect.objectContaining({ delta: {}, finish_reason: 'stop' })] }),
      expect.objectContaining({
        choices: [],
        usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 },
      }),
    ]);
    expect(chunks[1].model).toBe('ERNIE-Speed-8K');
    expect(chunks[1].object).toBe('chat.completion.chunk');
    expect(tally).toEqual({
      usage: expect.objectContaining({ promptTokens: 5, completionTokens: 9 }),
      completionText: '你好！有什么可以帮你？',
      sawFirstToken: true,
    });
  });

  it('no usage chunk unless asked; an error body instead of a stream becomes an error event', async () => {
    const plain = await runStream(adaptor.streamConversion(relayInput({ stream: true })), [
      fixture(base, 'stream.sse'),
    ]);
    expect(chunksOf(plain.text).some((c) => c !== '[DONE]' && 'usage' in c)).toBe(false);
    const failed = await runStream(adaptor.streamConversion(relayInput({ stream: true })), [
      fixture(base, 'error-token.json'),
    ]);
    expect(chunksOf(failed.text)).toEqual([
      {
        error: {
          message: 'Access token invalid or no longer valid',
          type: 'authentication_error',
          code: '110',
        },
      },
      '[DONE]',
    ]);
    // Nothing generated: zero usage, so core bills nothing (null would count the prompt locally).
    expect(failed.tally).toEqual({ usage: ZERO_USAGE, completionText: '', sawFirstToken: false });
  });
});
