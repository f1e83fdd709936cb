import { describe, expect, it } from 'vitest';
import { channel, fixture, fixtureText, relayInput, runStream, splitAt } from '../testing.ts';
import { UpstreamFailure } from '../types.ts';
import { createAIProxyAdaptor } from './adaptor.ts';

const NOW = 1_700_000_000_000;
const adaptor = createAIProxyAdaptor(() => NOW);
const lib = channel({ type: 21, key: 'ap-key', other: 'lib-123' });
const input = (partial: Parameters<typeof relayInput>[0] = {}) =>
  relayInput({
    upstreamModel: 'gpt-3.5-turbo',
    body: {
      model: 'gpt-3.5-turbo',
      messages: [
        { role: 'system', content: 'Answer from the library.' },
        { role: 'user', content: [{ type: 'text', text: 'What is Switchyard?' }] },
      ],
    },
    ...partial,
  });
const REFS =
  '\n\n参考文档：\n1. [Overview](https://docs.example.com/overview)\n2. [Channels](https://docs.example.com/channels)\n';

describe('AI Proxy Library adaptor (type 21)', () => {
  it('asks the library: last message as query, libraryId from other, Bearer key', () => {
    const req = adaptor.buildRequest(lib, input());
    expect(req.url).toBe('https://api.aiproxy.io/api/library/ask');
    expect(req.headers.get('authorization')).toBe('Bearer ap-key');
    expect(JSON.parse(req.body as string)).toEqual({
      model: 'gpt-3.5-turbo',
      query: 'What is Switchyard?',
      libraryId: 'lib-123',
      stream: false,
    });
    const streamed = adaptor.buildRequest(
      channel({ ...lib, baseUrl: 'http://127.0.0.1:9' }),
      input({ stream: true }),
    );
    expect(streamed.url).toBe('http://127.0.0.1:9/api/library/ask');
    expect(JSON.parse(streamed.body as string).stream).toBe(true);
  });

  it('refuses a channel without a library id with a clear error', () => {
    expect(() => adaptor.buildRequest(channel({ type: 21, other: ' ' }), input())).toThrow(/library id/);
  });

  it('appends the documents to the answer as Markdown links; no usage (counted locally)', () => {
    const res = adaptor.parseResponse(input(), {
      status: 200,
      headers: new Headers(),
      body: fixture(import.meta.url, 'ask.json'),
    });
    const content = `Switchyard relays OpenAI-format calls to many providers.${REFS}`;
    expect(res.usage).toBeNull();
    expect(res.completionText).toBe(content);
    expect(JSON.parse(res.body as string)).toEqual({
      id: 'chatcmpl-aiproxy-1700000000',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-3.5-turbo',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
    });
  });

  it('an error inside a 200 throws UpstreamFailure', () => {
    let thrown: unknown;
    try {
      adaptor.parseResponse(input(), {
        status: 200,
        headers: new Headers(),
        body: fixture(import.meta.url, 'ask-error.json'),
      });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UpstreamFailure);
    expect((thrown as UpstreamFailure).error).toEqual({
      status: 500,
      message: 'library not found',
      type: 'upstream_error',
      code: '4003',
    });
  });

  it('streams content chunks, then the documents and the finish, however split', async () => {
    const bytes = fixture(import.meta.url, 'ask-stream.sse');
    const { text, tally } = await runStream(
      adaptor.streamConversion(input({ stream: true })),
      splitAt(bytes, 7, 90, 150),
    );
    const frames = text.split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toBe('data: [DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.slice(6)));
    expect(chunks.map((c) => c.choices[0].delta)).toEqual([
      { role: 'assistant', content: 'Switchyard ' },
      { content: 'relays calls.' },
      { content: '\n\n参考文档：\n1. [Overview](https://docs.example.com/overview)\n' },
    ]);
    expect(chunks.map((c) => c.choices[0].finish_reason)).toEqual([null, null, 'stop']);
    expect(chunks[0].model).toBe('gpt-3.5-turbo');
    expect(tally).toEqual({
      usage: null,
      completionText:
        'Switchyard relays calls.\n\n参考文档：\n1. [Overview](https://docs.example.com/overview)\n',
      sawFirstToken: true,
    });
  });

  it('a stream frame carrying an error becomes an OpenAI error chunk', async () => {
    const { text } = await runStream(adaptor.streamConversion(input({ stream: true })), [
      new TextEncoder().encode(`data: ${fixtureText(import.meta.url, 'ask-error.json').trim()}\n\n`),
    ]);
    expect(text).toBe(
      'data: {"error":{"message":"library not found","type":"upstream_error","code":"4003"}}\n\ndata: [DONE]\n\n',
    );
  });

  it('reads errors of a non-2xx reply', () => {
    expect(
      adaptor.parseError({
        status: 401,
        headers: new Headers(),
        bodyText: '{"success":false,"errCode":401,"message":"invalid api key"}',
      }),
    ).toEqual({ status: 401, message: 'invalid api key', type: 'upstream_error', code: '401' });
  });

  it('queries the balance on aiproxy.io with Api-Key and reads data.totalPoints', () => {
    const [req] = adaptor.balanceRequests!(lib);
    expect(req!.url).toBe('https://aiproxy.io/api/report/getUserOverview');
    expect(req!.method).toBe('GET');
    expect(req!.headers.get('api-key')).toBe('ap-key');
    expect(adaptor.balanceRequests!(channel({ ...lib, baseUrl: 'https://api.aiproxy.io' }))[0]!.url).toBe(
      'https://aiproxy.io/api/report/getUserOverview',
    );
    expect(adaptor.parseBalance!([JSON.parse(fixtureText(import.meta.url, 'user-overview.json'))])).toBe(
      12.5,
    );
    expect(() => adaptor.parseBalance!([{ success: false, error_code: 401, message: 'bad key' }])).toThrow(
      'code: 401, message: bad key',
    );
  });
});
