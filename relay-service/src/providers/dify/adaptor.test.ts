import { describe, expect, it } from 'vitest';
import { usage } from '../../core/usage.ts';
import { channel, fixture, fixtureText, relayInput, runStream, splitAt } from '../testing.ts';
import { createDifyAdaptor } from './adaptor.ts';

const NOW = 1_700_000_000_000;
const adaptor = createDifyAdaptor(() => NOW);
const app = channel({ type: 37, key: 'app-key' });
const messages = [
  { role: 'system', content: 'Be helpful.' },
  { role: 'user', content: 'Hello' },
  { role: 'assistant', content: 'Hi!' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
    ],
  },
];
const input = (partial: Parameters<typeof relayInput>[0] = {}) =>
  relayInput({ upstreamModel: 'dify', body: { model: 'dify', messages }, ...partial });

describe('Dify adaptor (type 37)', () => {
  it('a new conversation: the transcript as query, blocking, default user, remote images as files', () => {
    const req = adaptor.buildRequest(app, input());
    expect(req.url).toBe('https://api.dify.ai/v1/chat-messages');
    expect(req.headers.get('authorization')).toBe('Bearer app-key');
    expect(JSON.parse(req.body as string)).toEqual({
      inputs: {},
      query: 'SYSTEM: \nBe helpful.\nUSER: \nHello\nASSISTANT: \nHi!\nUSER: \nWhat is this?\n',
      response_mode: 'blocking',
      user: 'switchyard',
      auto_generate_name: false,
      files: [{ type: 'image', transfer_mode: 'remote_url', url: 'https://example.com/cat.png' }],
    });
  });

  it('a continued conversation: conversation_id, user and inputs from the body, the last user message only, streaming', () => {
    const req = adaptor.buildRequest(
      channel({ ...app, baseUrl: 'http://dify.local' }),
      input({
        stream: true,
        body: {
          model: 'dify',
          messages: [
            { role: 'user', content: 'first' },
            { role: 'assistant', content: 'ok' },
            { role: 'user', content: 'second' },
          ],
          conversation_id: 'conv-1',
          user: 'alice',
          inputs: { lang: 'en' },
        },
      }),
    );
    expect(req.url).toBe('http://dify.local/v1/chat-messages');
    expect(JSON.parse(req.body as string)).toEqual({
      inputs: { lang: 'en' },
      query: 'second',
      response_mode: 'streaming',
      user: 'alice',
      auto_generate_name: false,
      conversation_id: 'conv-1',
    });
  });

  it('a blocking answer: id = conversation id, conversation_id field, usage from metadata', () => {
    const res = adaptor.parseResponse(input(), {
      status: 200,
      headers: new Headers(),
      body: fixture(import.meta.url, 'chat-blocking.json'),
    });
    expect(res.usage).toEqual(usage({ promptTokens: 1033, completionTokens: 128 }));
    expect(JSON.parse(res.body as string)).toEqual({
      id: '45701982-8118-4bc5-8e9b-64562b4555f2',
      object: 'chat.completion',
      created: 1705407629,
      model: 'dify',
      conversation_id: '45701982-8118-4bc5-8e9b-64562b4555f2',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'iPhone 13 Pro Max specs are listed here:...' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 1033, completion_tokens: 128, total_tokens: 1161 },
    });
  });

  it('streams answer pieces, thoughts as reasoning, skips workflow/node/ping, finishes with usage', async () => {
    const bytes = fixture(import.meta.url, 'chat-stream.sse');
    const body = { model: 'dify', messages, stream_options: { include_usage: true } };
    const { text, tally } = await runStream(
      adaptor.streamConversion(input({ stream: true, body })),
      splitAt(bytes, 11, 300, 301, 700),
    );
    const frames = text.split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toBe('data: [DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.slice(6)));
    expect(chunks.map((c) => c.choices[0]?.delta ?? null)).toEqual([
      { role: 'assistant', content: 'Hi' },
      { reasoning_content: 'The user greets me.' },
      { content: ' there!' },
      {},
      null,
    ]);
    expect(chunks[3].choices[0].finish_reason).toBe('stop');
    expect(chunks[4].usage).toEqual({ prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 });
    expect(chunks[0].id).toBe('45701982-8118');
    expect(chunks[0].conversation_id).toBe('45701982-8118');
    expect(tally).toEqual({
      usage: usage({ promptTokens: 40, completionTokens: 9 }),
      completionText: 'HiThe user greets me. there!',
      sawFirstToken: true,
    });
  });

  it('no usage chunk unless the client asked', async () => {
    const { text } = await runStream(adaptor.streamConversion(input({ stream: true })), [
      fixture(import.meta.url, 'chat-stream.sse'),
    ]);
    expect(text).not.toContain('"usage"');
  });

  it('an error event becomes an OpenAI error chunk', async () => {
    const { text, tally } = await runStream(adaptor.streamConversion(input({ stream: true })), [
      fixture(import.meta.url, 'stream-error.sse'),
    ]);
    expect(text).toContain(
      'data: {"error":{"message":"Your quota for Dify Hosted Model Provider has been exhausted.","type":"upstream_error","code":"provider_quota_exceeded"}}\n\n',
    );
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(tally.usage).toBeNull();
  });

  it("reads Dify's error body", () => {
    expect(
      adaptor.parseError({
        status: 404,
        headers: new Headers(),
        bodyText: fixtureText(import.meta.url, 'error-conversation.json'),
      }),
    ).toEqual({
      status: 404,
      message: 'Conversation Not Exists.',
      type: 'not_found_error',
      code: 'not_found',
    });
  });
});
