/**
 * The AWS Bedrock and Vertex AI adaptors under Deno (`npm run test:deno`): SigV4 signing (@smithy/signature-v4 with
 * @aws-crypto/sha256-js), the event-stream decoding (@smithy/eventstream-codec) and the service-account JWT
 * (jose on WebCrypto) run on Deno as on Node; the SigV4 signature is recomputed here with WebCrypto.
 */
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { decodeJwt } from 'jose';
import { createAwsAdaptor } from '../../src/providers/aws/adaptor.ts';
import { frameRunner } from '../../src/providers/frames.ts';
import type { ChannelConfig, RelayInput } from '../../src/providers/types.ts';
import { createVertexAdaptor } from '../../src/providers/vertex/adaptor.ts';

declare const Deno: { test(name: string, fn: () => Promise<void>): void };

function assertEquals<T>(actual: T, expected: T, what: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

const channel = (partial: Partial<ChannelConfig>): ChannelConfig => ({
  id: 1,
  type: 33,
  name: 'deno',
  key: '',
  baseUrl: '',
  other: '',
  openaiOrganization: null,
  setting: {},
  paramOverride: {},
  ...partial,
});
const input = (partial: Partial<RelayInput>): RelayInput => ({
  endpoint: 'chat',
  upstreamModel: 'claude-3-7-sonnet-20250219',
  stream: false,
  body: { messages: [{ role: 'user', content: 'hi' }] },
  clientHeaders: new Headers(),
  ...partial,
});

const enc = new TextEncoder();
const hex = (b: ArrayBuffer) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, '0')).join('');
const sha = async (s: string) => hex(await crypto.subtle.digest('SHA-256', enc.encode(s)));
async function hmac(key: Uint8Array | string, data: string): Promise<ArrayBuffer> {
  const k = await crypto.subtle.importKey(
    'raw',
    typeof key === 'string' ? enc.encode(key) : key,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return crypto.subtle.sign('HMAC', k, enc.encode(data));
}

Deno.test('aws adaptor on Deno: SigV4 signature as AWS computes it, event stream decoded', async () => {
  const now = Date.UTC(2025, 0, 15, 12, 30, 45);
  const adaptor = createAwsAdaptor(() => now);
  const req = await adaptor.buildRequest(channel({ key: 'AKID|SECRET|us-east-1' }), input({}));
  const url = new URL(req.url);
  const auth = req.headers.get('authorization') ?? '';
  const signed = /SignedHeaders=([^,]+)/.exec(auth)![1]!.split(';');
  const path = url.pathname
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/');
  const canonical = [
    'POST',
    path,
    '',
    signed.map((h) => `${h}:${h === 'host' ? url.host : req.headers.get(h)}\n`).join(''),
    signed.join(';'),
    await sha(req.body as string),
  ].join('\n');
  const toSign = [
    'AWS4-HMAC-SHA256',
    '20250115T123045Z',
    '20250115/us-east-1/bedrock/aws4_request',
    await sha(canonical),
  ].join('\n');
  let key = await hmac('AWS4SECRET', '20250115');
  for (const part of ['us-east-1', 'bedrock', 'aws4_request']) key = await hmac(new Uint8Array(key), part);
  assertEquals(
    /Signature=([0-9a-f]+)/.exec(auth)![1],
    hex(await hmac(new Uint8Array(key), toSign)),
    'signature',
  );

  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const event = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } };
  const frame = codec.encode({
    headers: {
      ':event-type': { type: 'string', value: 'chunk' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: enc.encode(JSON.stringify({ bytes: btoa(JSON.stringify(event)) })),
  });
  const conv = adaptor.streamConversion(input({ endpoint: 'messages', stream: true }));
  const runner = frameRunner([conv.transformer]);
  const out = [...runner.push(frame.subarray(0, 7)), ...runner.push(frame.subarray(7)), ...runner.end()];
  assertEquals(
    new TextDecoder().decode(out[0]),
    `event: content_block_delta\ndata: ${JSON.stringify(event)}\n\n`,
    'claude sse',
  );
  assertEquals(conv.tally().completionText, 'Hi', 'tally');
});

Deno.test('vertex adaptor on Deno: the JWT assertion is signed with the service-account key', async () => {
  const pair = (await crypto.subtle.generateKey(
    {
      name: 'RSASSA-PKCS1-v1_5',
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: 'SHA-256',
    },
    true,
    ['sign', 'verify'],
  )) as CryptoKeyPair;
  const pkcs8 = btoa(
    String.fromCharCode(...new Uint8Array(await crypto.subtle.exportKey('pkcs8', pair.privateKey))),
  );
  const pem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`;
  const key = JSON.stringify({
    type: 'service_account',
    project_id: 'p',
    private_key_id: 'k',
    private_key: pem,
    client_email: 'a@p.iam.gserviceaccount.com',
    token_uri: 'https://oauth2.googleapis.com/token',
  });
  const adaptor = createVertexAdaptor();
  const req = await adaptor.credential!.request(channel({ type: 41, key }), Date.now());
  const jwt = new URLSearchParams(req.body as string).get('assertion')!;
  const [h, p, s] = jwt.split('.') as [string, string, string];
  const sig = Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const ok = await crypto.subtle.verify('RSASSA-PKCS1-v1_5', pair.publicKey, sig, enc.encode(`${h}.${p}`));
  assertEquals(ok, true, 'signature verifies');
  assertEquals(decodeJwt(jwt).iss, 'a@p.iam.gserviceaccount.com', 'iss');
});
