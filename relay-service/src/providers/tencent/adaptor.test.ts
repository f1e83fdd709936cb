import { describe, expect, it } from 'vitest';
import { RelayError } from '../../core/errors.ts';
import { ZERO_USAGE } from '../../core/usage.ts';
import { channel, fixture, relayInput, runStream, splitAt } from '../testing.ts';
import { UpstreamFailure } from '../types.ts';
import { createTencentAdaptor } from './adaptor.ts';
import { tc3Date } from './sign.ts';

const NOW = 1_760_000_000_000;
const adaptor = createTencentAdaptor(() => NOW);
const base = import.meta.url;
const hunyuan = channel({ type: 23, key: '1300000000|AKIDtest123|SecretKeyTest456', baseUrl: '' });
const ok = (body: Uint8Array) => ({ status: 200, headers: new Headers(), body });

const chunksOf = (text: string) =>
  text
    .split('\n\n')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => s.replace(/^data: /, ''))
    .map((s) => (s === '[DONE]' ? s : JSON.parse(s)));

describe('tencent adaptor: signed request', () => {
  it('builds the ChatCompletions body and signs it with TC3-HMAC-SHA256 (signature computed independently)', () => {
    const req = adaptor.buildRequest(
      hunyuan,
      relayInput({
        upstreamModel: 'hunyuan-lite',
        body: {
          temperature: 0.5,
          top_p: 0.9,
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: [{ type: 'text', text: 'hi' }] },
          ],
        },
      }),
    );
    expect(req.url).toBe('https://hunyuan.tencentcloudapi.com/');
    expect(req.method).toBe('POST');
    // Byte for byte: the signature covers this exact payload.
    expect(req.body).toBe(
      '{"Model":"hunyuan-lite","Messages":[{"Role":"system","Content":"Be brief."},{"Role":"user","Content":"hi"}],"Stream":false,"TopP":0.9,"Temperature":0.5}',
    );
    expect(Object.fromEntries(req.headers)).toEqual({
      authorization:
        'TC3-HMAC-SHA256 Credential=AKIDtest123/2025-10-09/hunyuan/tc3_request, SignedHeaders=content-type;host;x-tc-action, Signature=0e165e90b5b0e6d2b642f6b74b575f7f5b79e3aaf51268341610e35aadeb7d86',
      'content-type': 'application/json',
      'x-tc-action': 'ChatCompletions',
      'x-tc-version': '2023-09-01',
      'x-tc-timestamp': '1760000000',
    });
  });

  it('signs the host of a custom base, sends X-TC-Region from `other`, streams with Stream: true', () => {
    const req = adaptor.buildRequest(
      { ...hunyuan, baseUrl: 'http://127.0.0.1:8123', other: 'ap-guangzhou' },
      relayInput({ upstreamModel: 'hunyuan-pro', stream: true }),
    );
    expect(req.url).toBe('http://127.0.0.1:8123/');
    expect(req.headers.get('x-tc-region')).toBe('ap-guangzhou');
    expect(JSON.parse(String(req.body))).toEqual({
      Model: 'hunyuan-pro',
      Messages: [{ Role: 'user', Content: 'hi' }],
      Stream: true,
    });
    expect(req.headers.get('authorization')).toMatch(
      /^TC3-HMAC-SHA256 Credential=AKIDtest123\/2025-10-09\/hunyuan\/tc3_request, SignedHeaders=content-type;host;x-tc-action, Signature=[0-9a-f]{64}$/,
    );
  });

  it('the credential date is the UTC date of the timestamp', () => {
    expect(tc3Date(1551113065)).toBe('2019-02-25');
    expect(tc3Date(1704067199)).toBe('2023-12-31');
  });

  it('a key that is not AppId|SecretId|SecretKey is a clear error without the key', () => {
    for (const key of ['onlyonepart', 'app|sid', 'app||skey', 'a|b|c|d']) {
      let err: unknown;
      try {
        adaptor.buildRequest({ ...hunyuan, key }, relayInput());
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(RelayError);
      expect((err as RelayError).message).toBe(
        'the channel key cannot be used: expected "AppId|SecretId|SecretKey" (three parts joined by |)',
      );
      expect((err as RelayError).code).toBe('channel_key_invalid');
    }
  });
});

describe('tencent adaptor: answers', () => {
  it('converts an answer with usage', () => {
    const parsed = adaptor.parseResponse(
      relayInput({ upstreamModel: 'hunyuan-lite' }),
      ok(fixture(base, 'chat.json')),
    );
    expect(JSON.parse(String(parsed.body))).toEqual({
      id: 'e9c1d5a8-6d0b-4c8f-9f40-23a1f8c3b2aa',
      object: 'chat.completion',
      created: 1715154742,
      model: 'hunyuan-lite',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: '你好！有什么我可以帮你的吗？' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 },
    });
    expect(parsed.usage).toMatchObject({ promptTokens: 3, completionTokens: 9 });
  });

  it('Response.Error in a 200 is thrown: AuthFailure.* as 401, LimitExceeded as 429', () => {
    const thrown = (name: string) => {
      try {
        adaptor.parseResponse(relayInput(), ok(fixture(base, name)));
      } catch (err) {
        expect(err).toBeInstanceOf(UpstreamFailure);
        return (err as UpstreamFailure).error;
      }
      return null;
    };
    expect(thrown('error-signature.json')).toEqual({
      status: 401,
      message: 'The provided credentials could not be validated. Please check your signature is correct.',
      type: 'authentication_error',
      code: 'AuthFailure.SignatureFailure',
    });
    expect(thrown('error-limit.json')).toMatchObject({
      status: 429,
      type: 'rate_limit_error',
      code: 'LimitExceeded',
    });
  });
});

describe('tencent adaptor: stream', () => {
  it('Delta frames become chunks, FinishReason closes, the last Usage counts', async () => {
    const input = relayInput({
      upstreamModel: 'hunyuan-lite',
      stream: true,
      body: { messages: [], stream_options: { include_usage: true } },
    });
    const { text, tally } = await runStream(
      adaptor.streamConversion(input),
      splitAt(fixture(base, 'stream.sse'), 5, 100, 400),
    );
    const chunks = chunksOf(text);
    expect(chunks.map((c) => (c === '[DONE]' ? c : (c.choices[0] ?? { usage: c.usage })))).toEqual([
      expect.objectContaining({ delta: { role: 'assistant', content: '' } }),
      expect.objectContaining({ delta: { content: '你好' } }),
      expect.objectContaining({ delta: { content: '！有什么可以帮你？' } }),
      expect.objectContaining({ delta: {}, finish_reason: 'stop' }),
      { usage: { prompt_tokens: 3, completion_tokens: 6, total_tokens: 9 } },
      '[DONE]',
    ]);
    expect(chunks[0]).toMatchObject({
      id: '0e9b7a1c-2f4d-4a6b-8c3e-5d7f9a1b2c3d',
      created: 1715154742,
      model: 'hunyuan-lite',
    });
    expect(tally).toEqual({
      usage: expect.objectContaining({ promptTokens: 3, completionTokens: 6 }),
      completionText: '你好！有什么可以帮你？',
      sawFirstToken: true,
    });
  });

  it('an error body instead of a stream becomes an OpenAI error event', async () => {
    const { text, tally } = await runStream(adaptor.streamConversion(relayInput({ stream: true })), [
      fixture(base, 'error-signature.json'),
    ]);
    expect(chunksOf(text)).toEqual([
      {
        error: {
          message: 'The provided credentials could not be validated. Please check your signature is correct.',
          type: 'authentication_error',
          code: 'AuthFailure.SignatureFailure',
        },
      },
      '[DONE]',
    ]);
    expect(tally.usage).toEqual(ZERO_USAGE);
  });
});
