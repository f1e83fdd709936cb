import { decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { RelayError } from '../../core/errors.ts';
import { ZERO_USAGE } from '../../core/usage.ts';
import { channel, fixture, relayInput, runStream, splitAt } from '../testing.ts';
import type { UpstreamFailure } from '../types.ts';
import { createZhipuAdaptor } from './adaptor.ts';
import { TOKEN_TTL_MS } from './request.ts';
import { ZhipuSseDecoder } from './stream.ts';

const NOW = 1_760_000_000_000;
const adaptor = createZhipuAdaptor(() => NOW);
const base = import.meta.url;
const zhipu = channel({ type: 16, key: 'a1b2c3d4e5.s3cr3tPart', baseUrl: '' });
const bodyOf = (req: { body: BodyInit | null }) => JSON.parse(String(req.body));
const ok = (body: Uint8Array) => ({ status: 200, headers: new Headers(), body });
const enc = new TextEncoder();

const chunksOf = (text: string) =>
  text
    .split('\n\n')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => s.replace(/^data: /, ''))
    .map((s) => (s === '[DONE]' ? s : JSON.parse(s)));

describe('zhipu adaptor: requests', () => {
  it('signs the key into an HS256 JWT with sign_type SIGN and millisecond exp/timestamp, sent bare', async () => {
    const req = await adaptor.buildRequest(
      zhipu,
      relayInput({
        upstreamModel: 'chatglm_turbo',
        body: {
          temperature: 1.7,
          top_p: 0.7,
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'hello' }] },
            { role: 'assistant', content: 'hi' },
            { role: 'user', content: 'again' },
          ],
        },
      }),
    );
    expect(req.url).toBe('https://open.bigmodel.cn/api/paas/v3/model-api/chatglm_turbo/invoke');
    const jwt = req.headers.get('authorization')!;
    expect(jwt.startsWith('Bearer')).toBe(false);
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'HS256', sign_type: 'SIGN' });
    const { payload } = await jwtVerify(jwt, enc.encode('s3cr3tPart'), { algorithms: ['HS256'] });
    expect(payload).toEqual({ api_key: 'a1b2c3d4e5', exp: NOW + TOKEN_TTL_MS, timestamp: NOW });
    await expect(jwtVerify(jwt, enc.encode('wrong'))).rejects.toThrow();
    // temperature is clamped into Zhipu's [0, 1]; no `incremental` outside streams.
    expect(bodyOf(req)).toEqual({
      prompt: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'hi' },
        { role: 'user', content: 'again' },
      ],
      temperature: 1,
      top_p: 0.7,
    });
  });

  it('streams via sse-invoke with incremental: true; embeddings go to text_embedding with one prompt', async () => {
    const req = await adaptor.buildRequest(
      { ...zhipu, baseUrl: 'http://127.0.0.1:9' },
      relayInput({ upstreamModel: 'chatglm_pro', stream: true }),
    );
    expect(req.url).toBe('http://127.0.0.1:9/api/paas/v3/model-api/chatglm_pro/sse-invoke');
    expect(req.headers.get('accept')).toBe('text/event-stream');
    expect(bodyOf(req)).toEqual({ prompt: [{ role: 'user', content: 'hi' }], incremental: true });
    const embed = await adaptor.buildRequest(
      zhipu,
      relayInput({ endpoint: 'embeddings', upstreamModel: 'text_embedding', body: { input: ['only one'] } }),
    );
    expect(embed.url).toBe('https://open.bigmodel.cn/api/paas/v3/model-api/text_embedding/invoke');
    expect(bodyOf(embed)).toEqual({ prompt: 'only one' });
  });

  it('a key without exactly one dot and several embedding inputs are clear errors', async () => {
    for (const key of ['nodotkey', 'p1.p2.p3', '.zzhidden', 'idonly.']) {
      const err = await adaptor.buildRequest({ ...zhipu, key }, relayInput()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RelayError);
      expect(err).toMatchObject({ code: 'channel_key_invalid' });
      expect((err as Error).message).toBe(
        'the channel key cannot be used: expected "id.secret" (the Zhipu API key, two parts joined by a dot)',
      );
    }
    const many = await adaptor
      .buildRequest(
        zhipu,
        relayInput({ endpoint: 'embeddings', upstreamModel: 'text_embedding', body: { input: ['a', 'b'] } }),
      )
      .catch((e: unknown) => e);
    expect(many).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'input' });
  });
});

describe('zhipu adaptor: answers', () => {
  it('unquotes the v3 content and reads usage', () => {
    const parsed = adaptor.parseResponse(
      relayInput({ upstreamModel: 'chatglm_turbo' }),
      ok(fixture(base, 'invoke.json')),
    );
    expect(JSON.parse(String(parsed.body))).toEqual({
      id: '8305986882425703351',
      object: 'chat.completion',
      created: NOW / 1000,
      model: 'chatglm_turbo',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: ' 你好👋！我是人工智能助手智谱清言，可以叫我小智🤖。' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 4, completion_tokens: 22, total_tokens: 26 },
    });
    expect(parsed.usage).toMatchObject({ promptTokens: 4, completionTokens: 22 });
  });

  it('success: false is thrown with its code: 1002 as 401, 1302 as 429', () => {
    const thrown = (name: string) => {
      try {
        adaptor.parseResponse(relayInput(), ok(fixture(base, name)));
      } catch (err) {
        return (err as UpstreamFailure).error;
      }
      return null;
    };
    expect(thrown('error-token.json')).toEqual({
      status: 401,
      message: 'Authorization Token非法，请确认Authorization Token正确传递。',
      type: 'authentication_error',
      code: '1002',
    });
    expect(thrown('error-concurrency.json')).toMatchObject({
      status: 429,
      type: 'rate_limit_error',
      code: '1302',
    });
    expect(
      adaptor.parseError({
        status: 401,
        headers: new Headers(),
        bodyText: new TextDecoder().decode(fixture(base, 'error-token.json')),
      }),
    ).toMatchObject({ status: 401, code: '1002' });
  });

  it('converts an embedding (floats or base64), usage as prompt tokens', () => {
    const input = relayInput({
      endpoint: 'embeddings',
      upstreamModel: 'text_embedding',
      body: { input: 'x' },
    });
    const parsed = adaptor.parseResponse(input, ok(fixture(base, 'embedding.json')));
    expect(JSON.parse(String(parsed.body))).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.25, -0.5, 0.125] }],
      model: 'text_embedding',
      usage: { prompt_tokens: 5, total_tokens: 5 },
    });
    expect(parsed.usage).toMatchObject({ promptTokens: 5, completionTokens: 0 });
    const b64 = adaptor.parseResponse(
      { ...input, body: { input: 'x', encoding_format: 'base64' } },
      ok(fixture(base, 'embedding.json')),
    );
    expect(typeof JSON.parse(String(b64.body)).data[0].embedding).toBe('string');
  });
});

describe('zhipu adaptor: stream', () => {
  it('decodes event/id/data/meta fields, multi-line data joined by \\n, CRLF split anywhere', () => {
    const d = new ZhipuSseDecoder();
    const text =
      'event: add\r\ndata: a\r\ndata: b\r\n\r\nevent: finish\r\ndata:\r\nmeta: {"usage":{}}\r\n\r\n';
    const bytes = enc.encode(text);
    const events = [
      ...d.push(bytes.subarray(0, 11)),
      ...d.push(bytes.subarray(11, 12)),
      ...d.push(bytes.subarray(12)),
      ...d.end(),
    ];
    expect(events).toEqual([
      { event: 'add', id: '', data: 'a\nb', meta: '' },
      { event: 'finish', id: '', data: '', meta: '{"usage":{}}' },
    ]);
  });

  it('add events become content chunks, finish closes with stop and the meta usage', async () => {
    const input = relayInput({
      upstreamModel: 'chatglm_turbo',
      stream: true,
      body: { messages: [], stream_options: { include_usage: true } },
    });
    const bytes = fixture(base, 'sse-invoke.sse');
    const { text, tally } = await runStream(adaptor.streamConversion(input), splitAt(bytes, 3, 50, 90, 200));
    const chunks = chunksOf(text);
    expect(chunks.map((c) => (c === '[DONE]' ? c : (c.choices[0] ?? { usage: c.usage })))).toEqual([
      expect.objectContaining({ delta: { role: 'assistant', content: '' } }),
      expect.objectContaining({ delta: { content: '你好' } }),
      expect.objectContaining({ delta: { content: '第一行\n第二行' } }),
      expect.objectContaining({ delta: { content: '！' } }),
      expect.objectContaining({ delta: {}, finish_reason: 'stop' }),
      { usage: { prompt_tokens: 4, completion_tokens: 8, total_tokens: 12 } },
      '[DONE]',
    ]);
    expect(chunks[1].id).toBe('8305986882425703351');
    expect(tally).toEqual({
      usage: expect.objectContaining({ promptTokens: 4, completionTokens: 8 }),
      completionText: '你好第一行\n第二行！',
      sawFirstToken: true,
    });
  });

  it('interrupted ends with content_filter (usage left to local counting); a refusal body is an error event', async () => {
    const cut = await runStream(adaptor.streamConversion(relayInput({ stream: true })), [
      fixture(base, 'sse-interrupted.sse'),
    ]);
    const chunks = chunksOf(cut.text);
    expect(chunks.at(-2).choices[0]).toMatchObject({ delta: {}, finish_reason: 'content_filter' });
    expect(cut.tally).toEqual({ usage: null, completionText: '好的', sawFirstToken: true });
    const refused = await runStream(adaptor.streamConversion(relayInput({ stream: true })), [
      fixture(base, 'error-token.json'),
    ]);
    expect(chunksOf(refused.text)).toEqual([
      {
        error: {
          message: 'Authorization Token非法，请确认Authorization Token正确传递。',
          type: 'authentication_error',
          code: '1002',
        },
      },
      '[DONE]',
    ]);
    expect(refused.tally.usage).toEqual(ZERO_USAGE);
  });
});
