import { describe, expect, it } from 'vitest';
import { adaptorFor } from '../registry.ts';
import { channel, fixture, fixtureText, relayInput, runStream } from '../testing.ts';
import { cloudflareAdaptor as adaptor } from './adaptor.ts';

const ACCOUNT = '023e105f4ecef8ad9ca31a8372d0c353';
const cf = channel({ type: 39, key: 'cf-token', baseUrl: '', other: ACCOUNT });
const base = import.meta.url;
const ok = { status: 200, headers: new Headers({ 'content-type': 'application/json' }) };
const MODEL = '@cf/meta/llama-3.1-8b-instruct';

describe('cloudflare adaptor: requests', () => {
  it('is registered for type 39', () => {
    expect(adaptorFor(39)?.id).toBe('cloudflare');
  });

  it('chat goes to the account OpenAI-compatible path with the Bearer token; the body is the OpenAI family one', () => {
    const req = adaptor.buildRequest(
      cf,
      relayInput({
        upstreamModel: MODEL,
        stream: true,
        body: { model: 'alias', messages: [{ role: 'user', content: 'hi' }], stream: true },
      }),
    );
    expect(req.url).toBe(`https://api.cloudflare.com/client/v4/accounts/${ACCOUNT}/ai/v1/chat/completions`);
    expect(req.headers.get('authorization')).toBe('Bearer cf-token');
    expect(req.headers.get('accept')).toBe('text/event-stream');
    expect(JSON.parse(String(req.body))).toEqual({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('embeddings and responses have their own paths; a base URL with /client/v4 is accepted', () => {
    const custom = { ...cf, baseUrl: 'https://gw.example/client/v4/', other: ` ${ACCOUNT} ` };
    expect(
      adaptor.buildRequest(custom, relayInput({ endpoint: 'embeddings', body: { input: 'x' } })).url,
    ).toBe(`https://gw.example/client/v4/accounts/${ACCOUNT}/ai/v1/embeddings`);
    expect(adaptor.buildRequest(cf, relayInput({ endpoint: 'responses', body: { input: 'x' } })).url).toBe(
      `https://api.cloudflare.com/client/v4/accounts/${ACCOUNT}/ai/v1/responses`,
    );
    expect(adaptor.supports('chat') && adaptor.supports('embeddings')).toBe(true);
    expect(adaptor.supports('images') || adaptor.supports('rerank')).toBe(false);
  });

  it('a channel without an account id is a configuration error, not a crash', () => {
    for (const other of ['', '  ', 'abc/../x']) {
      const err = (() => {
        try {
          adaptor.buildRequest({ ...cf, other }, relayInput());
        } catch (e) {
          return e;
        }
      })();
      // Core turns this into 500 channel_config_invalid (tests/integration/relay-cloudflare.test.ts).
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(/account id in the "other" field/);
    }
  });
});

describe('cloudflare adaptor: replies', () => {
  it('passes a chat reply through and reads its usage', () => {
    const r = adaptor.parseResponse(relayInput({ upstreamModel: MODEL }), {
      ...ok,
      body: fixture(base, 'chat.json'),
    });
    expect(new TextDecoder().decode(r.body as Uint8Array)).toBe(fixtureText(base, 'chat.json'));
    expect(r.usage).toMatchObject({ promptTokens: 41, completionTokens: 12 });
    expect(r.completionText).toBe('1. Carve. 2. Sand. 3. Oil.');
  });

  it('streams: text passes, usage is tallied, [DONE] once', async () => {
    const input = relayInput({ stream: true, upstreamModel: MODEL });
    const { text, tally } = await runStream(adaptor.streamConversion(input), [
      fixture(base, 'chat-stream.sse'),
    ]);
    expect(text.match(/\[DONE\]/g)).toHaveLength(1);
    expect(tally).toMatchObject({ completionText: 'Carve, sand, oil.', sawFirstToken: true });
    expect(tally.usage).toMatchObject({ promptTokens: 41, completionTokens: 6 });
  });

  it('embeddings usage is read from the reply', () => {
    const input = relayInput({ endpoint: 'embeddings', body: { input: 'I love matcha' } });
    expect(
      adaptor.parseResponse(input, { ...ok, body: fixture(base, 'embeddings.json') }).usage,
    ).toMatchObject({
      promptTokens: 5,
      completionTokens: 0,
    });
  });

  it("reads Cloudflare's error envelope, and OpenAI's as a fallback", () => {
    const h = new Headers();
    expect(
      adaptor.parseError({ status: 401, headers: h, bodyText: fixtureText(base, 'error-auth.json') }),
    ).toEqual({
      status: 401,
      message: 'Authentication error',
      type: 'authentication_error',
      code: '10000',
    });
    expect(
      adaptor.parseError({ status: 400, headers: h, bodyText: fixtureText(base, 'error-bad-input.json') }),
    ).toMatchObject({ status: 400, code: '5006', message: expect.stringMatching(/^AiError: Bad input/) });
    expect(
      adaptor.parseError({
        status: 429,
        headers: h,
        bodyText: '{"error":{"message":"slow down","type":"rate"}}',
      }),
    ).toMatchObject({ status: 429, message: 'slow down' });
  });
});
