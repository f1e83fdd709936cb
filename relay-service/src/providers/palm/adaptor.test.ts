import { describe, expect, it } from 'vitest';
import { channel, fixture, fixtureText, relayInput, runStream, splitAt } from '../testing.ts';
import { createPalmAdaptor } from './adaptor.ts';

const NOW = 1_700_000_000_000;
const adaptor = createPalmAdaptor(() => NOW);
const palm = channel({ type: 11, key: 'AIza-palm' });
const input = (partial: Parameters<typeof relayInput>[0] = {}) =>
  relayInput({
    upstreamModel: 'chat-bison-001',
    body: {
      model: 'chat-bison-001',
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Say ' },
            { type: 'text', text: 'hello' },
          ],
        },
        { role: 'assistant', content: 'Hi.' },
        { role: 'user', content: 'Again' },
      ],
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      n: 2,
      max_tokens: 100,
    },
    ...partial,
  });

describe('PaLM 2 adaptor (type 11)', () => {
  it('serves chat only, on type 11', () => {
    expect(adaptor.channelTypes).toEqual([11]);
    expect(adaptor.supports('chat')).toBe(true);
    expect(adaptor.supports('embeddings')).toBe(false);
  });

  it('builds generateMessage: system → context, authors 0/1, sampling parameters, key header', async () => {
    const req = adaptor.buildRequest(palm, input());
    expect(req.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta2/models/chat-bison-001:generateMessage',
    );
    expect(req.method).toBe('POST');
    expect(req.headers.get('x-goog-api-key')).toBe('AIza-palm');
    expect(req.url).not.toContain('AIza');
    expect(JSON.parse(req.body as string)).toEqual({
      prompt: {
        context: 'Be brief.',
        messages: [
          { author: '0', content: 'Say hello' },
          { author: '1', content: 'Hi.' },
          { author: '0', content: 'Again' },
        ],
      },
      temperature: 0.3,
      candidateCount: 2,
      topP: 0.9,
      topK: 40,
    });
  });

  it('uses the channel base URL and merges param_override', () => {
    const req = adaptor.buildRequest(
      channel({ type: 11, baseUrl: 'http://127.0.0.1:9', paramOverride: { temperature: 0 } }),
      input({ body: { model: 'm', messages: [{ role: 'user', content: 'x' }] } }),
    );
    expect(req.url).toBe('http://127.0.0.1:9/v1beta2/models/chat-bison-001:generateMessage');
    expect(JSON.parse(req.body as string)).toEqual({
      prompt: { messages: [{ author: '0', content: 'x' }] },
      temperature: 0,
    });
  });

  it('turns a reply into a chat completion without usage (core counts locally)', () => {
    const res = adaptor.parseResponse(input(), {
      status: 200,
      headers: new Headers(),
      body: fixture(import.meta.url, 'generate-message.json'),
    });
    expect(res.usage).toBeNull();
    expect(res.completionText).toBe('Hello! How can I help you today?');
    expect(JSON.parse(res.body as string)).toEqual({
      id: 'chatcmpl-palm-1700000000',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'chat-bison-001',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello! How can I help you today?' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
    });
  });

  it('a filtered answer (no candidates) finishes with content_filter', () => {
    const res = adaptor.parseResponse(input(), {
      status: 200,
      headers: new Headers(),
      body: fixture(import.meta.url, 'generate-message-filtered.json'),
    });
    const body = JSON.parse(res.body as string);
    expect(body.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: '' },
        finish_reason: 'content_filter',
        logprobs: null,
      },
    ]);
    expect(res.completionText).toBe('');
  });

  it('streams the whole answer as one content chunk, a finish chunk and [DONE], however the bytes are split', async () => {
    const bytes = fixture(import.meta.url, 'generate-message.json');
    const { text, tally } = await runStream(
      adaptor.streamConversion(input({ stream: true })),
      splitAt(bytes, 3, 40),
    );
    const frames = text.split('\n\n').filter(Boolean);
    expect(frames).toHaveLength(3);
    const first = JSON.parse(frames[0]!.slice(6));
    expect(first.object).toBe('chat.completion.chunk');
    expect(first.choices[0]).toEqual({
      index: 0,
      delta: { role: 'assistant', content: 'Hello! How can I help you today?' },
      finish_reason: null,
      logprobs: null,
    });
    expect(JSON.parse(frames[1]!.slice(6)).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(frames[2]).toBe('data: [DONE]');
    expect(tally).toEqual({
      usage: null,
      completionText: 'Hello! How can I help you today?',
      sawFirstToken: true,
    });
  });

  it('a filtered streamed answer finishes with content_filter', async () => {
    const { text, tally } = await runStream(adaptor.streamConversion(input({ stream: true })), [
      fixture(import.meta.url, 'generate-message-filtered.json'),
    ]);
    expect(text).toContain('"finish_reason":"content_filter"');
    expect(tally.sawFirstToken).toBe(false);
  });

  it("reads Google's error envelope", () => {
    expect(
      adaptor.parseError({
        status: 400,
        headers: new Headers(),
        bodyText: fixtureText(import.meta.url, 'error-api-key.json'),
      }),
    ).toEqual({
      status: 400,
      message: 'API key not valid. Please pass a valid API key.',
      type: 'authentication_error',
      code: 'API_KEY_INVALID',
    });
  });
});
