import { generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { channel, fixture, fixtureText, relayInput, runStream } from '../testing.ts';
import type { ChannelConfig } from '../types.ts';
import { createVertexAdaptor, vertexRegion } from './adaptor.ts';
import { parseServiceAccount } from './credential.ts';

const NOW = 1_760_000_000_000;
const adaptor = createVertexAdaptor(() => NOW);
const base = import.meta.url;
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const SPKI = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const ACCOUNT = {
  type: 'service_account',
  project_id: 'proj-1',
  private_key_id: 'kid-123',
  private_key: PEM,
  client_email: 'relay@proj-1.iam.gserviceaccount.com',
  token_uri: 'https://oauth2.googleapis.com/token',
};
const vertex = (over: Partial<ChannelConfig> = {}) =>
  channel({ type: 41, key: JSON.stringify(ACCOUNT), other: 'us-east5', credential: 'ya29.token', ...over });

const chunksOf = (text: string) =>
  text
    .split('\n\n')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => s.replace(/^data: /, ''))
    .map((s) => (s === '[DONE]' ? s : JSON.parse(s)));

describe('vertex credential', () => {
  it('posts a jwt-bearer grant whose RS256 assertion carries iss, scope, aud, iat and exp (+1h)', async () => {
    const req = await adaptor.credential!.request(vertex(), NOW);
    expect(req.url).toBe('https://oauth2.googleapis.com/token');
    expect(req.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(req.body as string);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const jwt = form.get('assertion')!;
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'kid-123' });
    const { payload } = await jwtVerify(jwt, await importSPKI(SPKI, 'RS256'), {
      currentDate: new Date(NOW),
      audience: 'https://oauth2.googleapis.com/token',
      issuer: ACCOUNT.client_email,
    });
    expect(payload.scope).toBe('https://www.googleapis.com/auth/cloud-platform');
    expect(payload.iat).toBe(NOW / 1000);
    expect(payload.exp).toBe(NOW / 1000 + 3600);
  });

  it('reads the token answer into a credential expiring with expires_in', () => {
    expect(
      adaptor.credential!.parse({ status: 200, bodyText: fixtureText(base, 'token.json') }, NOW),
    ).toEqual({
      value: 'ya29.c.b0AXv0zTOfakeTokenForRelayTests',
      expiresAtMs: NOW + 3599_000,
    });
    expect(() => adaptor.credential!.parse({ status: 200, bodyText: '{}' }, NOW)).toThrow(/access_token/);
  });

  it('a key that is not a usable service-account credential is a clear error, never echoing the key', async () => {
    const cases: [string, RegExp][] = [
      ['not json', /not JSON/],
      ['[1]', /not a JSON object/],
      [JSON.stringify({ ...ACCOUNT, type: 'authorized_user' }), /not "service_account"/],
      [JSON.stringify({ project_id: 'p' }), /private_key, client_email missing/],
      [JSON.stringify({ ...ACCOUNT, token_uri: 'file:///etc/passwd' }), /token_uri/],
    ];
    for (const [key, message] of cases) expect(() => parseServiceAccount(key)).toThrow(message);
    const badPem = JSON.stringify({
      ...ACCOUNT,
      private_key: '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----',
    });
    await expect(adaptor.credential!.request(vertex({ key: badPem }), NOW)).rejects.toThrow(
      /not a PEM PKCS#8 RSA private key/,
    );
    // Escaped newlines (a key pasted through a form) still work.
    const escaped = JSON.stringify({ ...ACCOUNT, private_key: PEM.replace(/\n/g, '\\n') });
    await expect(adaptor.credential!.request(vertex({ key: escaped }), NOW)).resolves.toBeTruthy();
  });
});

describe('vertex regions and URLs', () => {
  it('reads a plain region or the per-model JSON map; global without one', () => {
    expect(vertexRegion('us-east5', 'x')).toBe('us-east5');
    const map = JSON.stringify({ default: 'us-central1', 'claude-sonnet-4-20250514': 'europe-west1' });
    expect(vertexRegion(map, 'claude-sonnet-4-20250514')).toBe('europe-west1');
    expect(vertexRegion(map, 'gemini-2.5-flash')).toBe('us-central1');
    expect(vertexRegion('{"other":"x"}', 'm')).toBe('global');
    expect(vertexRegion('', 'm')).toBe('global');
    expect(() => vertexRegion('us-east5/../../x', 'm')).toThrow(/not a region name/);
  });

  it('Claude: rawPredict on the regional host, Vertex model name, Bearer token, body with vertex-2023-10-16', async () => {
    const req = await adaptor.buildRequest(
      vertex({ baseUrl: '' }),
      relayInput({
        upstreamModel: 'claude-3-5-sonnet-20241022',
        body: { model: 'x', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
        clientHeaders: new Headers({ 'anthropic-beta': 'output-128k-2025-02-19' }),
      }),
    );
    expect(req.url).toBe(
      'https://us-east5-aiplatform.googleapis.com/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/claude-3-5-sonnet-v2@20241022:rawPredict',
    );
    expect(req.headers.get('authorization')).toBe('Bearer ya29.token');
    expect(req.headers.get('x-goog-user-project')).toBe('proj-1');
    expect(req.headers.get('anthropic-beta')).toBe('output-128k-2025-02-19');
    expect(JSON.parse(req.body as string)).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 50,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
  });

  it('Claude stream: streamRawPredict with stream:true; global region on aiplatform.googleapis.com', async () => {
    const req = await adaptor.buildRequest(
      vertex({ baseUrl: '', other: 'global' }),
      relayInput({
        endpoint: 'messages',
        upstreamModel: 'claude-sonnet-4-20250514-thinking',
        stream: true,
        body: { model: 'x', max_tokens: 4000, messages: [] },
      }),
    );
    expect(req.url).toBe(
      'https://aiplatform.googleapis.com/v1/projects/proj-1/locations/global/publishers/anthropic/models/claude-sonnet-4@20250514:streamRawPredict',
    );
    const body = JSON.parse(req.body as string);
    expect(body).toMatchObject({
      anthropic_version: 'vertex-2023-10-16',
      stream: true,
      thinking: { type: 'enabled', budget_tokens: 3200 },
    });
    expect(body).not.toHaveProperty('model');
  });

  it('Gemini: generateContent / streamGenerateContent?alt=sse on the channel base URL', async () => {
    const chat = await adaptor.buildRequest(
      vertex({ baseUrl: 'http://127.0.0.1:9/' }),
      relayInput({
        upstreamModel: 'gemini-2.5-flash',
        stream: true,
        body: { model: 'x', messages: [{ role: 'user', content: 'hi' }] },
      }),
    );
    expect(chat.url).toBe(
      'http://127.0.0.1:9/v1/projects/proj-1/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(JSON.parse(chat.body as string).contents).toEqual([{ role: 'user', parts: [{ text: 'hi' }] }]);
    const native = await adaptor.buildRequest(
      vertex({ baseUrl: 'http://127.0.0.1:9' }),
      relayInput({
        endpoint: 'generate',
        upstreamModel: 'gemini-2.5-pro',
        body: { model: 'x', contents: [{ role: 'user', parts: [{ text: 'yo' }] }], cachedContent: 'c1' },
      }),
    );
    expect(native.url).toBe(
      'http://127.0.0.1:9/v1/projects/proj-1/locations/us-east5/publishers/google/models/gemini-2.5-pro:generateContent',
    );
    expect(JSON.parse(native.body as string)).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'yo' }] }],
      cachedContent: 'c1',
    });
  });

  it('without a token or with a broken key the request is refused before sending', async () => {
    await expect(
      adaptor.buildRequest(
        vertex({ credential: undefined }),
        relayInput({ upstreamModel: 'gemini-2.5-flash' }),
      ),
    ).rejects.toThrow(/OAuth token/);
    await expect(
      adaptor.buildRequest(vertex({ key: '{}' }), relayInput({ upstreamModel: 'gemini-2.5-flash' })),
    ).rejects.toThrow(/service-account/);
  });
});

describe('vertex answers', () => {
  it('Claude answers: chat completion for OpenAI clients, untouched for Claude clients', () => {
    const body = fixture(base, 'claude-message.json');
    const chat = adaptor.parseResponse(relayInput({ upstreamModel: 'claude-sonnet-4-20250514' }), {
      status: 200,
      headers: new Headers(),
      body,
    });
    expect(JSON.parse(chat.body as string).choices[0].message.content).toBe('Hello from Vertex.');
    expect(chat.usage).toMatchObject({ promptTokens: 314, completionTokens: 6, cachedTokens: 300 });
    const native = adaptor.parseResponse(
      relayInput({ endpoint: 'messages', upstreamModel: 'claude-sonnet-4-20250514' }),
      { status: 200, headers: new Headers(), body },
    );
    expect(native.body).toBe(body);
  });

  it('Gemini answers: chat completion, or passed through for the native endpoint', () => {
    const body = fixture(base, 'gemini-generate.json');
    const chat = adaptor.parseResponse(relayInput({ upstreamModel: 'gemini-2.5-flash' }), {
      status: 200,
      headers: new Headers(),
      body,
    });
    expect(JSON.parse(chat.body as string).choices[0].message.content).toBe('Hello from Gemini on Vertex.');
    expect(chat.usage).toMatchObject({ promptTokens: 9, completionTokens: 7 });
    const native = adaptor.parseResponse(
      relayInput({ endpoint: 'generate', upstreamModel: 'gemini-2.5-flash' }),
      { status: 200, headers: new Headers(), body },
    );
    expect(native.body).toBe(body);
  });

  it('a Claude client asking for a Gemini model is bridged: Claude message back, Gemini request out', async () => {
    const input = relayInput({
      endpoint: 'messages',
      upstreamModel: 'gemini-2.5-flash',
      body: {
        model: 'gemini-2.5-flash',
        max_tokens: 10,
        system: 'S',
        messages: [{ role: 'user', content: 'hi' }],
      },
    });
    const req = await adaptor.buildRequest(vertex(), input);
    expect(req.url).toContain('/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(JSON.parse(req.body as string).systemInstruction).toEqual({ parts: [{ text: 'S' }] });
    const parsed = adaptor.parseResponse(input, {
      status: 200,
      headers: new Headers(),
      body: fixture(base, 'gemini-generate.json'),
    });
    expect(JSON.parse(parsed.body as string)).toMatchObject({
      type: 'message',
      content: [{ type: 'text', text: 'Hello from Gemini on Vertex.' }],
    });
    expect(parsed.usage?.promptTokens).toBe(9);
  });

  it('streams Claude events as OpenAI chunks, or as they are for Claude clients', async () => {
    const sse = fixture(base, 'claude-stream.sse');
    const chat = await runStream(
      adaptor.streamConversion(
        relayInput({
          upstreamModel: 'claude-sonnet-4-20250514',
          stream: true,
          body: { stream_options: { include_usage: true } },
        }),
      ),
      [sse],
    );
    const chunks = chunksOf(chat.text);
    expect(chunks.at(-1)).toBe('[DONE]');
    expect(
      chunks
        .slice(0, -1)
        .map((c) => c.choices[0]?.delta?.content ?? '')
        .join(''),
    ).toBe('Hello from Vertex.');
    expect(chat.tally.usage).toMatchObject({ promptTokens: 14, completionTokens: 6 });
    const native = await runStream(
      adaptor.streamConversion(
        relayInput({ endpoint: 'messages', upstreamModel: 'claude-sonnet-4-20250514', stream: true }),
      ),
      [sse],
    );
    expect(native.text).toBe(new TextDecoder().decode(sse));
  });

  it('streams Gemini SSE as OpenAI chunks, or passes it through for Gemini clients', async () => {
    const sse = fixture(new URL('../gemini/', base).href, 'stream-text.sse');
    const chat = await runStream(
      adaptor.streamConversion(relayInput({ upstreamModel: 'gemini-2.5-flash', stream: true })),
      [sse],
    );
    expect(chunksOf(chat.text).at(-1)).toBe('[DONE]');
    expect(chat.tally.usage?.promptTokens).toBe(310);
    const native = await runStream(
      adaptor.streamConversion(
        relayInput({ endpoint: 'generate', upstreamModel: 'gemini-2.5-flash', stream: true }),
      ),
      [sse],
    );
    expect(native.text).toBe(new TextDecoder().decode(sse));
  });

  it('reads errors in Google’s, Anthropic’s and the token endpoint’s envelopes', () => {
    const h = new Headers();
    expect(
      adaptor.parseError({ status: 403, headers: h, bodyText: fixtureText(base, 'error-permission.json') }),
    ).toMatchObject({
      status: 403,
      type: 'permission_error',
      code: 'IAM_PERMISSION_DENIED',
    });
    expect(
      adaptor.parseError({
        status: 529,
        headers: h,
        bodyText: fixtureText(base, 'error-claude-overloaded.json'),
      }),
    ).toEqual({
      status: 529,
      message: 'Overloaded',
      type: 'overloaded_error',
      code: 'overloaded_error',
    });
    expect(
      adaptor.parseError({
        status: 400,
        headers: h,
        bodyText: fixtureText(base, 'error-token-invalid-grant.json'),
      }),
    ).toEqual({
      status: 400,
      message: 'Invalid JWT Signature.',
      type: 'authentication_error',
      code: 'invalid_grant',
    });
  });
});
