import { describe, expect, it } from 'vitest';
import { adaptorFor } from '../registry.ts';
import { channel, fixture, fixtureText, relayInput } from '../testing.ts';
import { mokaaiAdaptor as adaptor } from './adaptor.ts';

const m3e = channel({ type: 44, key: 'moka-key', baseUrl: '' });
const base = import.meta.url;
const ok = { status: 200, headers: new Headers({ 'content-type': 'application/json' }) };

describe('mokaai (M3E) adaptor', () => {
  it('is registered for type 44 and serves embeddings only', () => {
    expect(adaptorFor(44)?.id).toBe('mokaai');
    expect(adaptor.supports('embeddings')).toBe(true);
    for (const e of ['chat', 'completions', 'rerank', 'messages', 'generate'] as const)
      expect(adaptor.supports(e), e).toBe(false);
  });

  it('sends {model, input[]} to {base}/embeddings (new-api: the base carries the version), Bearer key', () => {
    const input = relayInput({
      endpoint: 'embeddings',
      upstreamModel: 'm3e-base',
      body: { model: 'alias', input: 'hello world', encoding_format: 'float' },
    });
    const req = adaptor.buildRequest(m3e, input);
    expect(req.url).toBe('https://api.moka.ai/embeddings');
    expect(req.headers.get('authorization')).toBe('Bearer moka-key');
    expect(JSON.parse(String(req.body))).toEqual({ input: ['hello world'], model: 'm3e-base' });
    expect(adaptor.buildRequest({ ...m3e, baseUrl: 'http://10.0.0.5:6008/v1/' }, input).url).toBe(
      'http://10.0.0.5:6008/v1/embeddings',
    );
  });

  it('a chat call that reaches it anyway is refused with a clear message', () => {
    expect(() => adaptor.buildRequest(m3e, relayInput())).toThrow(/embeddings only/);
  });

  it('passes the embeddings list through with its usage; none reported → core counts', () => {
    const input = relayInput({ endpoint: 'embeddings', body: { input: ['a', 'b'] } });
    const r = adaptor.parseResponse(input, { ...ok, body: fixture(base, 'embeddings.json') });
    expect(new TextDecoder().decode(r.body as Uint8Array)).toBe(fixtureText(base, 'embeddings.json'));
    expect(r.usage).toMatchObject({ promptTokens: 9, completionTokens: 0 });
    expect(
      adaptor.parseResponse(input, { ...ok, body: fixture(base, 'embeddings-no-usage.json') }).usage,
    ).toBeNull();
  });

  it('reads FastAPI-style and OpenAI-style errors', () => {
    expect(
      adaptor.parseError({
        status: 401,
        headers: new Headers(),
        bodyText: fixtureText(base, 'error-auth.json'),
      }),
    ).toMatchObject({ status: 401, message: 'Invalid API key' });
  });
});
