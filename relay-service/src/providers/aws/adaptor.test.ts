import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { channel, fixture, fixtureText, relayInput, runStream, splitAt } from '../testing.ts';
import { bedrockBody, createAwsAdaptor, parseAwsKey } from './adaptor.ts';
import { bedrockModelId } from './models.ts';

const NOW = Date.UTC(2025, 0, 15, 12, 30, 45);
const adaptor = createAwsAdaptor(() => NOW);
const base = import.meta.url;
const AK = 'AKIDEXAMPLE';
const SK = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const aws = channel({ type: 33, key: `${AK}|${SK}|us-east-1` });
const MODEL = 'claude-3-7-sonnet-20250219';

const chunksOf = (text: string) =>
  text
    .split('\n\n')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => s.replace(/^data: /, ''))
    .map((s) => (s === '[DONE]' ? s : JSON.parse(s)));

/** SigV4 recomputed by hand (AWS's documented algorithm) for what the adaptor built. */
function expectedSignature(url: URL, headers: Headers, body: string, signed: string[]): string {
  const enc = (s: string) =>
    encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const canonical = [
    'POST',
    url.pathname.split('/').map(enc).join('/'),
    '',
    signed.map((h) => `${h}:${h === 'host' ? url.host : headers.get(h)}\n`).join(''),
    signed.join(';'),
    createHash('sha256').update(body).digest('hex'),
  ].join('\n');
  const scope = '20250115/us-east-1/bedrock/aws4_request';
  const toSign = [
    'AWS4-HMAC-SHA256',
    '20250115T123045Z',
    scope,
    createHash('sha256').update(canonical).digest('hex'),
  ].join('\n');
  const h = (k: string | Buffer, d: string) => createHmac('sha256', k).update(d).digest();
  const key = h(h(h(h(`AWS4${SK}`, '20250115'), 'us-east-1'), 'bedrock'), 'aws4_request');
  return createHmac('sha256', key).update(toSign).digest('hex');
}

describe('aws key and model ids', () => {
  it('parses Ak|Sk|Region and ApiKey|Region; anything else is a clear error that does not echo the key', () => {
    expect(parseAwsKey(`${AK}|${SK}|eu-central-1`)).toEqual({
      kind: 'sigv4',
      accessKeyId: AK,
      secretAccessKey: SK,
      region: 'eu-central-1',
    });
    expect(parseAwsKey('ABSKbedrockkey|us-west-2')).toEqual({
      kind: 'bearer',
      apiKey: 'ABSKbedrockkey',
      region: 'us-west-2',
    });
    for (const bad of [
      `${AK}|${SK}`,
      `${AK}|${SK}|`,
      `${AK}|${SK}|not a region`,
      `${AK}:${SK}:us-east-1`,
      '',
      `a|b|c|us-east-1`,
    ]) {
      expect(() => parseAwsKey(bad)).toThrow(/AccessKeyId\|SecretAccessKey\|Region/);
      try {
        parseAwsKey(bad);
      } catch (e) {
        expect((e as Error).message).not.toContain(SK);
      }
    }
  });

  it('maps Claude names to Bedrock ids with the cross-region inference profile of the key’s region', () => {
    expect(bedrockModelId('claude-3-5-sonnet-20241022', 'us-east-1')).toBe(
      'us.anthropic.claude-3-5-sonnet-20241022-v2:0',
    );
    expect(bedrockModelId('claude-3-5-sonnet-20241022', 'ap-northeast-1')).toBe(
      'apac.anthropic.claude-3-5-sonnet-20241022-v2:0',
    );
    // No eu. profile for this one: the plain id from Europe.
    expect(bedrockModelId('claude-3-5-sonnet-20241022', 'eu-west-1')).toBe(
      'anthropic.claude-3-5-sonnet-20241022-v2:0',
    );
    expect(bedrockModelId('claude-sonnet-4-20250514', 'eu-west-3')).toBe(
      'eu.anthropic.claude-sonnet-4-20250514-v1:0',
    );
    expect(bedrockModelId('claude-3-haiku-20240307', 'ca-central-1')).toBe(
      'anthropic.claude-3-haiku-20240307-v1:0',
    );
    // Already a Bedrock id or profile (a model mapping): unchanged; prototype names are not table entries.
    expect(bedrockModelId('us.anthropic.claude-opus-4-20250514-v1:0', 'us-east-1')).toBe(
      'us.anthropic.claude-opus-4-20250514-v1:0',
    );
    expect(bedrockModelId('constructor', 'us-east-1')).toBe('constructor');
  });
});

describe('aws adaptor: requests', () => {
  it('signs InvokeModel with SigV4 (service bedrock) exactly as AWS computes it', async () => {
    const req = await adaptor.buildRequest(
      aws,
      relayInput({
        upstreamModel: MODEL,
        body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }] },
      }),
    );
    const url = new URL(req.url);
    expect(req.url).toBe(
      'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/invoke',
    );
    expect(req.headers.get('x-amz-date')).toBe('20250115T123045Z');
    expect(req.headers.has('host')).toBe(false);
    const auth = req.headers.get('authorization')!;
    const m =
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20250115\/us-east-1\/bedrock\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
        auth,
      );
    expect(m).not.toBeNull();
    const signed = m![1]!.split(';');
    expect(signed).toEqual(expect.arrayContaining(['host', 'x-amz-date', 'content-type']));
    expect(m![2]).toBe(expectedSignature(url, req.headers, req.body as string, signed));
    expect(JSON.stringify([...req.headers])).not.toContain(SK);
  });

  it('builds the Bedrock body from OpenAI chat: Claude’s fields, anthropic_version, no model/stream/metadata', async () => {
    const req = await adaptor.buildRequest(
      channel({ ...aws, baseUrl: 'http://127.0.0.1:9/', paramOverride: { top_k: 5 } }),
      relayInput({
        upstreamModel: MODEL,
        stream: true,
        body: {
          model: MODEL,
          user: 'u1',
          max_tokens: 100,
          messages: [
            { role: 'system', content: 'S' },
            { role: 'user', content: 'hi' },
          ],
        },
        clientHeaders: new Headers({ 'anthropic-beta': 'a-1, b-2' }),
      }),
    );
    expect(req.url).toBe(
      'http://127.0.0.1:9/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/invoke-with-response-stream',
    );
    expect(req.headers.get('accept')).toBe('application/vnd.amazon.eventstream');
    expect(JSON.parse(req.body as string)).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['a-1', 'b-2'],
      max_tokens: 100,
      system: 'S',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      top_k: 5,
    });
  });

  it('passes a Claude Messages body through for /v1/messages; -thinking picks the base model id', async () => {
    const body = bedrockBody(
      aws,
      relayInput({
        endpoint: 'messages',
        upstreamModel: `${MODEL}-thinking`,
        body: {
          model: MODEL,
          max_tokens: 4000,
          system: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }],
          messages: [{ role: 'user', content: 'hi' }],
        },
      }),
    );
    expect(body).toMatchObject({
      anthropic_version: 'bedrock-2023-05-31',
      thinking: { type: 'enabled', budget_tokens: 3200 },
    });
    expect(body.system).toEqual([{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }]);
    expect(body).not.toHaveProperty('model');
    const req = await adaptor.buildRequest(
      aws,
      relayInput({
        endpoint: 'messages',
        upstreamModel: `${MODEL}-thinking`,
        body: { model: MODEL, max_tokens: 10, messages: [] },
      }),
    );
    expect(req.url).toContain('/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/invoke');
  });

  it('sends a Bedrock API key as a Bearer token, unsigned', async () => {
    const req = await adaptor.buildRequest(
      channel({ type: 33, key: 'ABSKkey|eu-west-1' }),
      relayInput({ upstreamModel: MODEL }),
    );
    expect(req.url).toBe(
      'https://bedrock-runtime.eu-west-1.amazonaws.com/model/eu.anthropic.claude-3-7-sonnet-20250219-v1%3A0/invoke',
    );
    expect(req.headers.get('authorization')).toBe('Bearer ABSKkey');
    expect(req.headers.has('x-amz-date')).toBe(false);
  });

  it('rejects a malformed key before anything is sent', async () => {
    await expect(
      adaptor.buildRequest(channel({ type: 33, key: 'only-one-part' }), relayInput()),
    ).rejects.toThrow(/AccessKeyId\|SecretAccessKey\|Region/);
  });
});

describe('aws adaptor: answers', () => {
  it('turns the InvokeModel answer (a Claude message) into a chat completion with Claude’s usage', () => {
    const input = relayInput({ upstreamModel: MODEL });
    const parsed = adaptor.parseResponse(input, {
      status: 200,
      headers: new Headers(),
      body: fixture(base, 'message-text.json'),
    });
    const out = JSON.parse(parsed.body as string);
    expect(out.choices[0].message.content).toBe('Hello! How can I help you today?');
    expect(out.usage).toMatchObject({
      prompt_tokens: 2112,
      completion_tokens: 10,
      prompt_tokens_details: { cached_tokens: 2000 },
    });
    expect(parsed.usage).toMatchObject({
      promptTokens: 2112,
      completionTokens: 10,
      cachedTokens: 2000,
      cacheWriteTokens: 100,
    });
  });

  it('returns the message untouched to Claude clients', () => {
    const body = fixture(base, 'message-text.json');
    const parsed = adaptor.parseResponse(relayInput({ endpoint: 'messages', upstreamModel: MODEL }), {
      status: 200,
      headers: new Headers(),
      body,
    });
    expect(parsed.body).toBe(body);
    expect(parsed.usage?.promptTokens).toBe(2112);
  });

  it('decodes the event stream into OpenAI chunks, whatever the read boundaries', async () => {
    const bytes = fixture(base, 'stream-text.eventstream');
    for (const cuts of [
      [],
      [1, 5, 13, 100, 101, 700],
      Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
    ]) {
      const input = relayInput({
        upstreamModel: MODEL,
        stream: true,
        body: { model: MODEL, messages: [], stream_options: { include_usage: true } },
      });
      const { text, tally } = await runStream(adaptor.streamConversion(input), splitAt(bytes, ...cuts));
      const chunks = chunksOf(text);
      expect(chunks.at(-1)).toBe('[DONE]');
      expect(
        chunks
          .slice(0, -1)
          .map((c) => c.choices[0]?.delta?.content ?? '')
          .join(''),
      ).toBe('Hello from Bedrock');
      expect(chunks.find((c) => c.usage)?.usage).toMatchObject({
        prompt_tokens: 1065,
        completion_tokens: 15,
      });
      expect(tally.usage).toMatchObject({
        promptTokens: 1065,
        completionTokens: 15,
        cachedTokens: 1000,
        cacheWriteTokens: 40,
      });
      expect(tally.sawFirstToken).toBe(true);
    }
  });

  it('gives Claude clients Claude’s own SSE events out of the event stream', async () => {
    const { text, tally } = await runStream(
      adaptor.streamConversion(relayInput({ endpoint: 'messages', upstreamModel: MODEL, stream: true })),
      [fixture(base, 'stream-text.eventstream')],
    );
    expect(text.startsWith('event: message_start\ndata: {"type":"message_start"')).toBe(true);
    expect(text.match(/^event: /gm)).toHaveLength(7);
    expect(text).toContain('"amazon-bedrock-invocationMetrics"');
    expect(tally.completionText).toBe('Hello from Bedrock');
    expect(tally.usage?.completionTokens).toBe(15);
  });

  it('an exception message ends the stream with an error (OpenAI error chunk, Claude error event)', async () => {
    const bytes = fixture(base, 'stream-throttled.eventstream');
    const chat = await runStream(
      adaptor.streamConversion(relayInput({ upstreamModel: MODEL, stream: true })),
      [bytes],
    );
    const err = chunksOf(chat.text).find((c) => c !== '[DONE]' && c.error);
    expect(err.error).toMatchObject({ message: 'Too many tokens, please wait before trying again.' });
    const native = await runStream(
      adaptor.streamConversion(relayInput({ endpoint: 'messages', upstreamModel: MODEL, stream: true })),
      [bytes],
    );
    expect(native.text).toContain(
      'event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"Too many tokens',
    );
  });

  it('a damaged or cut stream is reported, not crashed on', async () => {
    const bytes = fixture(base, 'stream-text.eventstream').slice();
    bytes[200] = bytes[200]! ^ 0xff;
    const damaged = await runStream(
      adaptor.streamConversion(relayInput({ endpoint: 'messages', upstreamModel: MODEL, stream: true })),
      [bytes],
    );
    expect(damaged.text).toContain('event: error');
    const whole = fixture(base, 'stream-text.eventstream');
    const cut = await runStream(
      adaptor.streamConversion(relayInput({ endpoint: 'messages', upstreamModel: MODEL, stream: true })),
      [whole.subarray(0, whole.length - 10)],
    );
    expect(cut.text).toContain('ended inside an event stream message');
  });

  it('reads Bedrock errors: {message} with the name in x-amzn-errortype', () => {
    const headers = new Headers({
      'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/',
    });
    expect(
      adaptor.parseError({ status: 400, headers, bodyText: fixtureText(base, 'error-validation.json') }),
    ).toEqual({
      status: 400,
      message:
        'Malformed input request: #: extraneous key [stream] is not permitted, please reformat your input and try again.',
      type: 'invalid_request_error',
      code: 'ValidationException',
    });
    const sig = adaptor.parseError({
      status: 403,
      headers: new Headers({ 'x-amzn-errortype': 'InvalidSignatureException' }),
      bodyText: '{"message":"The request signature we calculated does not match"}',
    });
    expect(sig.type).toBe('authentication_error');
    expect(
      adaptor.parseError({
        status: 429,
        headers: new Headers({ 'x-amzn-errortype': 'ThrottlingException' }),
        bodyText: '{"Message":"slow down"}',
      }),
    ).toMatchObject({ type: 'rate_limit_error', message: 'slow down' });
    expect(
      adaptor.parseError({ status: 502, headers: new Headers(), bodyText: '<html>bad gateway</html>' })
        .message,
    ).toContain('bad gateway');
  });
});
