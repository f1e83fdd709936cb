import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RelayError } from '../../core/errors.ts';
import { channel, fixture, fixtureText, relayInput, runStream, splitAt } from '../testing.ts';
import { UpstreamFailure } from '../types.ts';
import { createXunfeiAdaptor } from './adaptor.ts';
import { parseSparkKey, signedUrl, sparkDomain, sparkPath, sparkVersion } from './request.ts';

const NOW = Date.UTC(2023, 4, 5, 10, 43, 39); // Fri, 05 May 2023 10:43:39 GMT (iFlytek's auth example)
const adaptor = createXunfeiAdaptor(() => NOW);
const KEY = 'app123|MjlmNzkzNmZkMDQ2OTc0ZDdmNGE2ZTZi|key456';
const spark = (partial: Parameters<typeof channel>[0] = {}) => channel({ type: 18, key: KEY, ...partial });
const input = (partial: Parameters<typeof relayInput>[0] = {}) =>
  relayInput({
    upstreamModel: 'SparkDesk',
    body: { model: 'SparkDesk', messages: [{ role: 'user', content: '你好' }] },
    ...partial,
  });

describe('Spark signed URL', () => {
  it("matches iFlytek's documented example digest (host, date, request line; HMAC-SHA256 with APISecret)", () => {
    const url = new URL(
      signedUrl(new URL('wss://spark-api.xf-yun.com'), '/v1.1/chat', parseSparkKey(KEY), NOW),
    );
    expect(`${url.protocol}//${url.host}${url.pathname}`).toBe('wss://spark-api.xf-yun.com/v1.1/chat');
    expect([...url.searchParams.keys()]).toEqual(['authorization', 'date', 'host']);
    expect(url.searchParams.get('date')).toBe('Fri, 05 May 2023 10:43:39 GMT');
    expect(url.searchParams.get('host')).toBe('spark-api.xf-yun.com');
    // The digest of iFlytek's worked example (general_url_authentication.html, step 3 and 4).
    expect(atob(url.searchParams.get('authorization')!)).toBe(
      'api_key="key456", algorithm="hmac-sha256", headers="host date request-line", ' +
        'signature="z5gHdu3pxVV4ADMyk467wOWDQ9q6BQzR3nfMTjc/DaQ="',
    );
  });

  it('the channel base URL replaces scheme and host (http → ws, https → wss); the host signed is that one', async () => {
    const req = adaptor.buildRequest(spark({ baseUrl: 'http://127.0.0.1:4567/ignored' }), input());
    const url = new URL(req.url);
    expect(req.transport).toBe('ws');
    expect(`${url.protocol}//${url.host}${url.pathname}`).toBe('ws://127.0.0.1:4567/v2.1/chat');
    const sig = createHmac('sha256', 'MjlmNzkzNmZkMDQ2OTc0ZDdmNGE2ZTZi')
      .update(`host: 127.0.0.1:4567\ndate: ${url.searchParams.get('date')}\nGET /v2.1/chat HTTP/1.1`)
      .digest('base64');
    expect(atob(url.searchParams.get('authorization')!)).toContain(`signature="${sig}"`);
    const tls = new URL(adaptor.buildRequest(spark({ baseUrl: 'https://spark.example' }), input()).url);
    expect(tls.protocol).toBe('wss:');
    const def = new URL(adaptor.buildRequest(spark(), input()).url);
    expect(def.host).toBe('spark-api.xf-yun.com');
  });

  it('refuses a key that is not APPID|APISecret|APIKey with a clear error', () => {
    for (const key of ['only-one', 'a|b', 'a||c', 'a|b|c|d'])
      expect(() => adaptor.buildRequest(spark({ key }), input())).toThrow(RelayError);
    try {
      adaptor.buildRequest(spark({ key: 'a|b' }), input());
    } catch (err) {
      expect((err as RelayError).message).toBe('the Xunfei Spark channel key must be APPID|APISecret|APIKey');
      expect((err as RelayError).message).not.toContain('a|b');
    }
  });
});

describe('Spark versions and domains', () => {
  it('model suffix first, then the channel other, else v2.1', () => {
    expect(sparkVersion('SparkDesk-v3.5', 'v1.1')).toBe('v3.5');
    expect(sparkVersion('SparkDesk', 'v4.0')).toBe('v4.0');
    expect(sparkVersion('SparkDesk', '')).toBe('v2.1');
    expect(sparkVersion('spark-max-32k', '')).toBe('max-32k');
    expect(sparkVersion('SparkDesk', 'pro-128k')).toBe('pro-128k');
    expect(sparkVersion('SparkDesk', 'nonsense')).toBe('v2.1');
  });

  it("maps versions to iFlytek's domains and paths", () => {
    expect(
      ['v1.1', 'v2.1', 'v3.1', 'v3.5', 'v4.0', 'pro-128k', 'max-32k', 'v9.9'].map((v) => [
        sparkDomain(v),
        sparkPath(v),
      ]),
    ).toEqual([
      ['lite', '/v1.1/chat'],
      ['generalv2', '/v2.1/chat'],
      ['generalv3', '/v3.1/chat'],
      ['generalv3.5', '/v3.5/chat'],
      ['4.0Ultra', '/v4.0/chat'],
      ['pro-128k', '/chat/pro-128k'],
      ['max-32k', '/chat/max-32k'],
      ['generalv9.9', '/v9.9/chat'],
    ]);
  });
});

describe('Spark request frame', () => {
  it('header, parameter.chat and payload.message.text from an OpenAI chat request', () => {
    const req = adaptor.buildRequest(
      spark({ other: 'v3.5', paramOverride: { top_k: 3 } }),
      input({
        body: {
          model: 'SparkDesk',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: [{ type: 'text', text: '你好' }] },
          ],
          temperature: 0.5,
          max_tokens: 1024,
          user: 'user-42',
        },
      }),
    );
    expect(JSON.parse(req.body as string)).toEqual({
      header: { app_id: 'app123', uid: 'user-42' },
      parameter: { chat: { domain: 'generalv3.5', temperature: 0.5, max_tokens: 1024, top_k: 3 } },
      payload: {
        message: {
          text: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: '你好' },
          ],
        },
      },
    });
  });

  it('versions without a system role get it as a user turn acknowledged (new-api); tools become functions', () => {
    const req = adaptor.buildRequest(
      spark(),
      input({
        upstreamModel: 'SparkDesk-v3.1',
        body: {
          model: 'SparkDesk-v3.1',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'weather?' },
          ],
          max_completion_tokens: 50,
          tools: [
            {
              type: 'function',
              function: {
                name: 'get_weather',
                description: 'weather of a city',
                parameters: { type: 'object', properties: { location: { type: 'string' } } },
              },
            },
          ],
        },
      }),
    );
    const frame = JSON.parse(req.body as string);
    expect(frame.parameter.chat).toEqual({ domain: 'generalv3', max_tokens: 50 });
    expect(frame.payload.message.text).toEqual([
      { role: 'user', content: 'Be brief.' },
      { role: 'assistant', content: 'Okay' },
      { role: 'user', content: 'weather?' },
    ]);
    expect(frame.payload.functions).toEqual({
      text: [
        {
          name: 'get_weather',
          description: 'weather of a city',
          parameters: { type: 'object', properties: { location: { type: 'string' } } },
        },
      ],
    });
    expect(new URL(req.url).pathname).toBe('/v3.1/chat');
  });
});

describe('Spark replies', () => {
  it('a whole reply is all frames: the text concatenated, usage from the last frame', () => {
    const res = adaptor.parseResponse(input(), {
      status: 200,
      headers: new Headers(),
      body: fixture(import.meta.url, 'reply.ndjson'),
    });
    expect(res.usage).toMatchObject({ promptTokens: 5, completionTokens: 9 });
    expect(res.completionText).toBe('你好！我是讯飞星火认知大模型。');
    expect(JSON.parse(res.body as string)).toEqual({
      id: 'chatcmpl-cht000cb087@dx18793cd421fb894542',
      object: 'chat.completion',
      created: NOW / 1000,
      model: 'SparkDesk',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: '你好！我是讯飞星火认知大模型。' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 },
    });
  });

  it('a function call becomes a tool call', () => {
    const res = adaptor.parseResponse(input(), {
      status: 200,
      headers: new Headers(),
      body: fixture(import.meta.url, 'reply-function-call.ndjson'),
    });
    const body = JSON.parse(res.body as string);
    expect(body.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        content: null,
        tool_calls: [
          {
            id: 'call_cht000b4f3b@dx18f2d0f2c1eb8f2532',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"location":"合肥"}' },
          },
        ],
      },
    });
    expect(res.usage).toMatchObject({ promptTokens: 96, completionTokens: 12 });
  });

  it('header.code ≠ 0 is an upstream failure with a mapped status', () => {
    const fail = (name: string) => {
      try {
        adaptor.parseResponse(input(), {
          status: 200,
          headers: new Headers(),
          body: fixture(import.meta.url, name),
        });
      } catch (err) {
        expect(err).toBeInstanceOf(UpstreamFailure);
        return (err as UpstreamFailure).error;
      }
      throw new Error('no failure');
    };
    expect(fail('error-frame.ndjson')).toEqual({
      status: 400,
      message: 'input content audit failed (code 10013, sid cht000b4d2b@dx18f2cf08f18b8f2532)',
      type: 'invalid_request_error',
      code: '10013',
    });
    expect(fail('error-quota-frame.ndjson')).toMatchObject({ status: 429, code: '11201' });
  });

  it('a reply cut before the last frame is a failure, not a short answer', () => {
    const cut = fixtureText(import.meta.url, 'reply.ndjson')
      .split('\n')
      .slice(0, 2)
      .join('\n');
    expect(() =>
      adaptor.parseResponse(input(), {
        status: 200,
        headers: new Headers(),
        body: new TextEncoder().encode(cut),
      }),
    ).toThrow(UpstreamFailure);
  });

  it('a refused handshake (401 signature, 403 stale date) keeps Spark’s message', () => {
    expect(
      adaptor.parseError({
        status: 401,
        headers: new Headers(),
        bodyText: fixtureText(import.meta.url, 'handshake-401.json'),
      }),
    ).toEqual({
      status: 401,
      message: 'HMAC signature does not match',
      type: 'authentication_error',
      code: null,
    });
    expect(
      adaptor.parseError({
        status: 403,
        headers: new Headers(),
        bodyText: fixtureText(import.meta.url, 'handshake-403-date.json'),
      }),
    ).toMatchObject({ status: 403, type: 'upstream_error' });
  });
});

describe('Spark streams', () => {
  it('frames → chat.completion.chunk SSE, split anywhere, usage chunk on request, [DONE] once', async () => {
    const bytes = fixture(import.meta.url, 'reply.ndjson');
    const { text, tally } = await runStream(
      adaptor.streamConversion(
        input({ stream: true, body: { ...input().body, stream_options: { include_usage: true } } }),
      ),
      splitAt(bytes, 7, 250, 251, 400),
    );
    const events = text
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.map((c) => c.choices[0]?.delta ?? null)).toEqual([
      { role: 'assistant', content: '' },
      { content: '你好！' },
      { content: '我是讯飞星火' },
      { content: '认知大模型。' },
      {},
      null,
    ]);
    expect(chunks[4].choices[0].finish_reason).toBe('stop');
    expect(chunks[5].usage).toEqual({ prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 });
    expect(chunks[0].id).toBe('chatcmpl-cht000cb087@dx18793cd421fb894542');
    expect(tally).toMatchObject({ sawFirstToken: true, completionText: '你好！我是讯飞星火认知大模型。' });
    expect(tally.usage).toMatchObject({ promptTokens: 5, completionTokens: 9 });
  });

  it('an error frame becomes an OpenAI error chunk; a stream cut before the last frame too', async () => {
    const err = await runStream(adaptor.streamConversion(input({ stream: true })), [
      fixture(import.meta.url, 'error-quota-frame.ndjson'),
    ]);
    expect(err.text).toContain('"error":{"message":"AppIdNoAuthError');
    expect(err.text).toContain('"type":"rate_limit_error"');
    expect(err.text.endsWith('data: [DONE]\n\n')).toBe(true);
    const cut = fixtureText(import.meta.url, 'reply.ndjson')
      .split('\n')
      .slice(0, 1)
      .join('\n');
    const res = await runStream(adaptor.streamConversion(input({ stream: true })), [
      new TextEncoder().encode(`${cut}\n`),
    ]);
    expect(res.text).toContain('{"content":"你好！"}');
    expect(res.text).toContain('"code":"upstream_incomplete"');
    expect(res.tally.usage).toBeNull();
  });

  it('a function call streams as one tool call delta and finishes with tool_calls', async () => {
    const { text } = await runStream(adaptor.streamConversion(input({ stream: true })), [
      fixture(import.meta.url, 'reply-function-call.ndjson'),
    ]);
    expect(text).toContain(
      '"tool_calls":[{"index":0,"id":"call_cht000b4f3b@dx18f2d0f2c1eb8f2532","type":"function","function":{"name":"get_weather","arguments":"{\\"location\\":\\"合肥\\"}"}}]',
    );
    expect(text).toContain('"finish_reason":"tool_calls"');
  });
});
