/**
 * The edges of both processes (issue 13 items 4, 6 and 11; ADR 015), against a real relay and the real console
 * HTTP server (server/console.ts, Remix through Vite's dev server: no build needed) forwarding to it:
 * client addresses come from trusted hops only, bodies are bounded as they arrive and JSON depth is bounded,
 * and the model API answers browsers on any origin while the console's /api stays same-origin.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../../server/console.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import { signedInUser, startForwardingConsole } from './console-harness.ts';
import {
  lastLogOf,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

const SECRET = 'edges-internal-secret-0123456789abcdef';
const LIMIT = 1024 * 1024;
const MODEL = 'gpt-4o-mini';

let fake: FakeOpenAI;
let stack: Stack;
let relayUrl: string;
let console_: RunningConsole;
let consoleUrl: string;
let userId: number;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  stack = await startStack({
    suffix: 'edges',
    env: { INTERNAL_API_SECRET: SECRET, RELAY_MAX_BODY_BYTES: String(LIMIT) },
  });
  relayUrl = stack.relays[0]!.httpUrl;
  userId = (await seedUser(stack, { quota: 100_000_000 })).id;
  await seedChannel(stack, { baseUrl: fake.url, models: [MODEL] });
  await setOptions(stack, { ModelRatio: JSON.stringify({ [MODEL]: 0.075 }) });
  console_ = await startForwardingConsole(stack, {
    INTERNAL_API_SECRET: SECRET,
    MAX_BODY_BYTES: String(LIMIT),
    RELAY_MAX_BODY_BYTES: String(LIMIT),
  });
  consoleUrl = console_.url;
}, 120_000);

afterAll(async () => {
  await console_?.stop();
  await stack?.close();
  await fake?.close();
});

const chat = (key: string, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json', ...headers },
  body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
});

describe('client address (item 4)', () => {
  it('a forged X-Forwarded-For does not pass an IP allow-list, directly or through the console', async () => {
    const { key } = await seedToken(stack, userId, { unlimited: true, allowIps: '10.9.9.9' });
    for (const base of [relayUrl, consoleUrl]) {
      const res = await fetch(`${base}/v1/chat/completions`, chat(key, { 'x-forwarded-for': '10.9.9.9' }));
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect([base, res.status, body.error.code]).toEqual([base, 403, 'ip_not_allowed']);
      expect(body.error.message).toContain('127.0.0.1');
    }
    // Nor does a client's own copy of the console's keyed header.
    const forged = await fetch(
      `${relayUrl}/v1/chat/completions`,
      chat(key, { 'x-switchyard-client': '10.9.9.9;AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }),
    );
    expect(forged.status).toBe(403);
  });

  it('the log records the real address, directly and through the console', async () => {
    const { key } = await seedToken(stack, userId, { unlimited: true, allowIps: '127.0.0.1' });
    for (const base of [relayUrl, consoleUrl]) {
      const res = await fetch(
        `${base}/v1/chat/completions`,
        chat(key, { 'x-forwarded-for': '10.9.9.9', 'x-switchyard-client': '10.9.9.9;forged' }),
      );
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      expect((await lastLogOf(stack, userId, MODEL)).ip).toBe('127.0.0.1');
    }
  });
});

/** Streams `total` bytes as a chunked body (no Content-Length) until the server answers or closes. */
function sendChunked(
  url: string,
  headers: Record<string, string>,
  prefix: string,
  total: number,
  opts: { expectContinue?: boolean; suffix?: string } = {},
): Promise<{ status: number; body: string; headers: Record<string, unknown>; written: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: 'POST',
      headers: {
        ...headers,
        'transfer-encoding': 'chunked',
        // As curl asks for chunked and large uploads: the body follows the server's 100 Continue.
        ...(opts.expectContinue ? { expect: '100-continue' } : {}),
      },
    });
    const chunk = Buffer.alloc(64 * 1024, 'A');
    let written = 0;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers, written });
        req.destroy();
      });
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const start = () => {
      req.write(prefix);
      written += prefix.length;
      pump();
    };
    const pump = () => {
      while (!answered && written < total) {
        written += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered) req.end(opts.suffix);
    };
    if (opts.expectContinue) req.once('continue', start);
    else start();
  });
}

describe('body limits (item 6)', () => {
  const TOTAL = 96 * 1024 * 1024;
  // The limit, plus what the sockets buffer on loopback: far below what was sent.
  const READ_BOUND = 16 * 1024 * 1024;
  const jsonPrefix = `{"model":"${MODEL}","messages":[{"role":"user","content":"`;

  it('a chunked body over the limit is refused with 413 in each front envelope, without reading it all', async () => {
    const { key } = await seedToken(stack, userId, { unlimited: true });
    const auth = { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' };
    const cases: { base: string; path: string; headers: Record<string, string> }[] = [
      { base: relayUrl, path: '/v1/chat/completions', headers: auth },
      { base: consoleUrl, path: '/v1/chat/completions', headers: auth },
      { base: relayUrl, path: '/v1/messages', headers: { ...auth, 'anthropic-version': '2023-06-01' } },
      {
        base: consoleUrl,
        path: `/v1beta/models/${MODEL}:generateContent`,
        headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      },
    ];
    for (const { base, path, headers } of cases) {
      const res = await sendChunked(`${base}${path}`, headers, jsonPrefix, TOTAL);
      expect([base, path, res.status]).toEqual([base, path, 413]);
      expect(res.written).toBeLessThan(READ_BOUND);
      const body = JSON.parse(res.body);
      if (path === '/v1/messages') expect(body.error.type).toBe('request_too_large');
      else if (path.startsWith('/v1beta/')) expect(body.error.status).toBe('INVALID_ARGUMENT');
      else expect(body.error.code).toBe('request_too_large');
    }
  }, 60_000);

  it('an upload that asks for 100-continue (curl) gets the same 413, or its answer, through the console', async () => {
    // The console forwarded the client's `Expect` header and undici refuses it: every such upload was a 502.
    const { key } = await seedToken(stack, userId, { unlimited: true });
    const headers = { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' };
    for (const base of [relayUrl, consoleUrl]) {
      const big = await sendChunked(`${base}/v1/chat/completions`, headers, jsonPrefix, TOTAL, {
        expectContinue: true,
      });
      expect([base, big.status, big.body]).toEqual([
        base,
        413,
        expect.stringContaining('"code":"request_too_large"'),
      ]);
      expect(big.written).toBeLessThan(READ_BOUND);
      const small = await sendChunked(`${base}/v1/chat/completions`, headers, jsonPrefix, 0, {
        expectContinue: true,
        suffix: 'hi"}],"max_tokens":5}',
      });
      expect([base, small.status]).toEqual([base, 200]);
    }
  }, 60_000);

  it('the console refuses an oversized /api or page body with 413 in its own format', async () => {
    const api = await sendChunked(
      `${consoleUrl}/api/user/login`,
      { 'content-type': 'application/json', 'accept-language': 'en' },
      '{"username":"',
      TOTAL,
    );
    expect(api.status).toBe(413);
    expect(api.written).toBeLessThan(READ_BOUND);
    expect(JSON.parse(api.body)).toMatchObject({
      success: false,
      message: `Request body too large (limit ${LIMIT} bytes)`,
    });
    const page = await sendChunked(
      `${consoleUrl}/login`,
      { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': 'en' },
      'username=',
      TOTAL,
    );
    expect(page.status).toBe(413);
    expect(page.written).toBeLessThan(READ_BOUND);
    expect(page.body).toBe(`Request body too large (limit ${LIMIT} bytes)`);
  }, 60_000);

  it('JSON nested 8,000 levels deep is a 400 in the caller envelope, on the relay and the console', async () => {
    const { key } = await seedToken(stack, userId, { unlimited: true });
    const deep = `${'['.repeat(8000)}${']'.repeat(8000)}`;
    const body = `{"model":"${MODEL}","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"x":${deep}}`;
    const auth = { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' };
    for (const [base, path, headers] of [
      [relayUrl, '/v1/chat/completions', auth],
      [consoleUrl, '/v1/chat/completions', auth],
      [relayUrl, '/v1/messages', { ...auth, 'anthropic-version': '2023-06-01' }],
      [relayUrl, `/v1beta/models/${MODEL}:generateContent`, { 'x-goog-api-key': key }],
    ] as const) {
      const gemini = path.startsWith('/v1beta/');
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers,
        body: gemini ? `{"contents":[{"parts":[{"text":"hi"}]}],"x":${deep}}` : body,
      });
      const json = (await res.json()) as { error: { message: string } };
      expect([base, path, res.status]).toEqual([base, path, 400]);
      expect(json.error.message).toContain('deeper than 128 levels');
    }
    const api = await fetch(`${consoleUrl}/api/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-language': 'en' },
      body: `{"username":"a","password":${deep}}`,
    });
    expect(api.status).toBe(400);
    expect(await api.json()).toMatchObject({
      success: false,
      message: 'The JSON body nests deeper than 128 levels',
    });
  }, 60_000);
});

describe('CORS (item 11)', () => {
  const ORIGIN = 'https://app.example';
  const paths = [
    '/v1/chat/completions',
    '/v1/messages',
    `/v1beta/models/${MODEL}:generateContent`,
    '/mj/submit/imagine',
    '/suno/submit/music',
    '/dashboard/billing/usage',
  ];

  it('the model API answers preflights for any origin, without credentials, directly and through the console', async () => {
    for (const base of [relayUrl, consoleUrl])
      for (const path of paths) {
        const res = await fetch(`${base}${path}`, {
          method: 'OPTIONS',
          headers: {
            origin: ORIGIN,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'authorization, content-type, x-api-key',
          },
        });
        expect([base, path, res.status, res.headers.get('access-control-allow-origin')]).toEqual([
          base,
          path,
          204,
          '*',
        ]);
        expect(res.headers.get('access-control-allow-methods')).toContain('POST');
        expect(res.headers.get('access-control-allow-headers')).toContain('authorization');
        expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      }
  });

  it('answers and refusals on the model API carry Allow-Origin for a browser', async () => {
    const { key } = await seedToken(stack, userId, { unlimited: true });
    for (const base of [relayUrl, consoleUrl]) {
      const ok = await fetch(`${base}/v1/chat/completions`, chat(key, { origin: ORIGIN }));
      expect(ok.status).toBe(200);
      await ok.arrayBuffer();
      expect(ok.headers.get('access-control-allow-origin')).toBe('*');
      const refused = await fetch(`${base}/v1/models`, { headers: { origin: ORIGIN } });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('access-control-allow-origin')).toBe('*');
      expect(refused.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  it("the console's /api stays same-origin: no CORS headers", async () => {
    const preflight = await fetch(`${consoleUrl}/api/user/login`, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const status = await fetch(`${consoleUrl}/api/status`, { headers: { origin: ORIGIN } });
    expect(status.status).toBe(200);
    expect(status.headers.get('access-control-allow-origin')).toBeNull();
  }, 60_000);
});

describe('page forms with CR/LF/NUL (issue 23 item 9)', () => {
  /** A document post as a browser without JavaScript sends it, same-origin. */
  const post = (path: string, body: URLSearchParams | FormData, cookie = '') =>
    fetch(`${consoleUrl}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        origin: consoleUrl,
        'sec-fetch-site': 'same-origin',
        'sec-fetch-mode': 'navigate',
        'accept-language': 'en',
        ...(cookie ? { cookie } : {}),
      },
      body,
    });

  it('are a 400 naming the field, never a 500, and change nothing', async () => {
    const who = await signedInUser(stack, { quota: 1000 });
    const { id: tokenId } = await seedToken(stack, who.id, { remainQuota: 10 });
    const cookie = `sy_session=${who.session}`;
    const cases: [string, URLSearchParams | FormData, string, string][] = [
      // A line break in redirectTo reached the Location header (a 500 from Headers).
      [
        '/preferences',
        new URLSearchParams({ intent: 'theme', theme: 'dark', redirectTo: '/token\r\nSet-Cookie: x=1' }),
        '',
        'redirectTo',
      ],
      [
        '/token?index',
        new URLSearchParams({ intent: 'status', id: String(tokenId), status: '2', redirectTo: '/token\n' }),
        cookie,
        'redirectTo',
      ],
      // A NUL byte reached PostgreSQL (a 500 from the driver), form-encoded or multipart.
      ['/user/reset', new URLSearchParams({ email: 'a\u0000b@example.com', token: 'x' }), '', 'email'],
      [
        '/reset',
        (() => {
          const f = new FormData();
          f.set('email', 'fuzz\u0000@example.com');
          return f;
        })(),
        '',
        'email',
      ],
    ];
    for (const [path, body, c, field] of cases) {
      const res = await post(path, body, c);
      const text = await res.text();
      expect([path, res.status]).toEqual([path, 400]);
      expect(text).toContain(`Field “${field}”`);
    }
    // The token was not disabled; a clean post still works.
    const [row] = await stack.sql<{ status: number }>('select status from tokens where id = ?', [tokenId]);
    expect(row!.status).toBe(1);
    const ok = await post(
      '/preferences',
      new URLSearchParams({ intent: 'theme', theme: 'dark', redirectTo: '/token' }),
    );
    expect([ok.status, ok.headers.get('location')]).toEqual([302, '/token']);
  }, 60_000);
});
