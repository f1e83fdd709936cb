/** The Bedrock fake checks SigV4 as AWS does and answers in Bedrock's wire format (JSON, event stream, errors). */
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeBedrock, startFakeBedrock } from './aws-bedrock-upstream.ts';

const AK = 'AKIAFAKE';
const SK = 'secret/with+chars';
let fake: FakeBedrock;

beforeAll(async () => {
  fake = await startFakeBedrock({ credentials: { [AK]: SK }, apiKeys: ['ABSK-good'] });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

async function call(path: string, body: unknown, secret = SK, accessKeyId = AK) {
  const url = new URL(`${fake.url}${path}`);
  const text = JSON.stringify(body);
  const signer = new SignatureV4({
    service: 'bedrock',
    region: 'us-east-1',
    credentials: { accessKeyId, secretAccessKey: secret },
    sha256: Sha256,
  });
  const signed = await signer.sign({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query: {},
    headers: { host: url.host, 'content-type': 'application/json' },
    body: text,
  });
  const headers = { ...signed.headers } as Record<string, string>;
  delete headers.host;
  return fetch(url, { method: 'POST', headers, body: text });
}

const MODEL_PATH = `/model/${encodeURIComponent('us.anthropic.claude-3-7-sonnet-20250219-v1:0')}`;
const BODY = {
  anthropic_version: 'bedrock-2023-05-31',
  max_tokens: 50,
  messages: [{ role: 'user', content: 'hi' }],
};

describe('fake Bedrock Runtime', () => {
  it('answers a correctly signed InvokeModel with a Claude message', async () => {
    fake.on({ respond: { content: 'Hi there', usage: { input_tokens: 3, output_tokens: 2 } } });
    const res = await call(`${MODEL_PATH}/invoke`, BODY);
    expect(res.status).toBe(200);
    const msg = await res.json();
    expect(msg).toMatchObject({
      type: 'message',
      content: [{ type: 'text', text: 'Hi there' }],
      usage: { input_tokens: 3, output_tokens: 2 },
    });
    expect(fake.requests[0]?.scope).toEqual({ region: 'us-east-1', service: 'bedrock', accessKeyId: AK });
  });

  it('refuses a wrong secret, an unknown key, a bad API key, and extraneous body keys as Bedrock does', async () => {
    const wrong = await call(`${MODEL_PATH}/invoke`, BODY, 'not-it');
    expect(wrong.status).toBe(403);
    expect(wrong.headers.get('x-amzn-errortype')).toMatch(/^InvalidSignatureException/);
    expect((await wrong.json()).message).toMatch(/^The request signature we calculated does not match/);
    const unknown = await call(`${MODEL_PATH}/invoke`, BODY, SK, 'AKIAOTHER');
    expect(unknown.headers.get('x-amzn-errortype')).toMatch(/^UnrecognizedClientException/);
    const bearer = await fetch(`${fake.url}${MODEL_PATH}/invoke`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope', 'content-type': 'application/json' },
      body: JSON.stringify(BODY),
    });
    expect(bearer.status).toBe(403);
    const extra = await call(`${MODEL_PATH}/invoke`, { ...BODY, stream: true });
    expect(extra.status).toBe(400);
    expect((await extra.json()).message).toContain('extraneous key [stream]');
    const noVersion = await call(`${MODEL_PATH}/invoke`, { max_tokens: 5, messages: [] });
    expect(noVersion.headers.get('x-amzn-errortype')).toMatch(/^ValidationException/);
  });

  it('streams Claude events inside event-stream chunk messages, and exceptions as exception messages', async () => {
    fake.on({ streamException: { type: 'throttlingException', message: 'slow down' } });
    const res = await call(`${MODEL_PATH}/invoke-with-response-stream`, BODY);
    expect(res.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    const bytes = new Uint8Array(await res.arrayBuffer());
    const codec = new EventStreamCodec(toUtf8, fromUtf8);
    const messages = [];
    for (let at = 0; at < bytes.length; ) {
      const len = new DataView(bytes.buffer, at, 4).getUint32(0);
      messages.push(codec.decode(bytes.subarray(at, at + len)));
      at += len;
    }
    const first = messages[0]!;
    expect(first.headers[':event-type']?.value).toBe('chunk');
    const payload = JSON.parse(new TextDecoder().decode(first.body));
    expect(JSON.parse(Buffer.from(payload.bytes, 'base64').toString())).toMatchObject({
      type: 'message_start',
    });
    const last = messages.at(-1)!;
    expect(last.headers[':message-type']?.value).toBe('exception');
    expect(last.headers[':exception-type']?.value).toBe('throttlingException');
    expect(JSON.parse(new TextDecoder().decode(last.body))).toEqual({ message: 'slow down' });
  });
});
