import { Hono } from 'hono';
import { decode } from 'turbo-stream';
import { describe, expect, it } from 'vitest';
import { crossOriginGuard, isSameOriginRequest, type OriginPolicy } from './csrf.ts';

const policy: OriginPolicy = { trustedOrigins: ['https://admin.example.com'], trustProxy: false };
const CONSOLE = 'http://console.example.com';

function req(path: string, headers: Record<string, string> = {}, method = 'POST'): Request {
  return new Request(`${CONSOLE}${path}`, {
    method,
    headers: { host: 'console.example.com', ...headers },
    body: method === 'GET' || method === 'HEAD' ? undefined : 'intent=password',
  });
}

const EVIL = { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' };
const SIBLING = { origin: 'http://evil.console.example.com', 'sec-fetch-site': 'same-site' };

describe('isSameOriginRequest (the origin rule of ADR 016)', () => {
  it.each([
    // safe methods are never judged
    ['GET cross-site', req('/setting', EVIL, 'GET'), true],
    ['HEAD cross-site', req('/setting', EVIL, 'HEAD'), true],
    ['OPTIONS cross-site', req('/api/user/self', EVIL, 'OPTIONS'), true],
    // browsers: Sec-Fetch-Site decides
    ['same-origin', req('/setting', { origin: CONSOLE, 'sec-fetch-site': 'same-origin' }), true],
    ['same-origin behind a Host-rewriting proxy', req('/setting', { 'sec-fetch-site': 'same-origin' }), true],
    ['user-initiated (none)', req('/setting', { 'sec-fetch-site': 'none' }), true],
    ['cross-site', req('/setting', EVIL), false],
    ['cross-site ?_data', req('/setting?_data=routes%2Fsetting', EVIL), false],
    ['cross-site single fetch', req('/setting.data', EVIL), false],
    ['same-site sibling', req('/setting?_data=routes%2Fsetting', SIBLING), false],
    ['same-site sibling without Origin', req('/user/edit/1', { 'sec-fetch-site': 'same-site' }), false],
    ['unknown Sec-Fetch-Site', req('/setting', { 'sec-fetch-site': 'bogus' }), false],
    ['PUT cross-site', req('/api/user/self', EVIL, 'PUT'), false],
    ['DELETE cross-site', req('/api/user/self', EVIL, 'DELETE'), false],
    ['PATCH cross-site', req('/api/token/', EVIL, 'PATCH'), false],
    // trusted origins
    [
      'trusted origin, same-site',
      req('/setting', { origin: 'https://admin.example.com', 'sec-fetch-site': 'same-site' }),
      true,
    ],
    [
      'trusted origin written differently',
      req('/setting', { origin: 'HTTPS://Admin.Example.com:443' }),
      true,
    ],
    [
      'untrusted scheme of a trusted host',
      req('/setting', { origin: 'http://admin.example.com', 'sec-fetch-site': 'cross-site' }),
      false,
    ],
    // browsers without Sec-Fetch-Site: Origin against Host
    ['old browser, same host', req('/setting', { origin: CONSOLE }), true],
    ['old browser, same host over https', req('/setting', { origin: 'https://console.example.com' }), true],
    ['old browser, other host', req('/setting', { origin: 'http://evil.example' }), false],
    ['old browser, other port', req('/setting', { origin: 'http://console.example.com:8080' }), false],
    ['Origin: null', req('/setting', { origin: 'null' }), false],
    ['malformed Origin', req('/setting', { origin: 'not a url' }), false],
    [
      'X-Forwarded-Host without TRUST_PROXY',
      req('/setting', { origin: 'https://public.example', 'x-forwarded-host': 'public.example' }),
      false,
    ],
    // programs
    ['neither header (curl, SDKs)', req('/api/user/login'), true],
    // access tokens on the JSON API are not cookie-authenticated
    [
      '/api with Authorization from anywhere',
      req('/api/user/self', { ...EVIL, authorization: 'Bearer abc' }, 'PUT'),
      true,
    ],
    [
      '/api with an empty Authorization',
      req('/api/user/self', { ...EVIL, authorization: ' ' }, 'PUT'),
      false,
    ],
    [
      'a page with Authorization (pages use the cookie)',
      req('/setting', { ...EVIL, authorization: 'Basic eDp5' }),
      false,
    ],
    // relay paths are forwarded, never cookie-authenticated
    ['/v1', req('/v1/chat/completions', EVIL), true],
    ['/v1beta', req('/v1beta/models/g:generateContent', EVIL), true],
    ['/mj', req('/mj/submit/imagine', EVIL), true],
    ['/suno', req('/suno/submit/music', EVIL), true],
    ['/dashboard/billing', req('/dashboard/billing/usage', EVIL), true],
    ["the playground is the console's", req('/pg/chat/completions', EVIL), false],
  ])('%s', (_name, request, allowed) => {
    expect(isSameOriginRequest(request, policy)).toBe(allowed);
  });

  it('accepts the forwarded host only behind a trusted proxy', () => {
    const r = () =>
      req('/setting', { origin: 'https://public.example', 'x-forwarded-host': 'public.example, x' });
    expect(isSameOriginRequest(r(), { ...policy, trustProxy: true })).toBe(true);
    expect(isSameOriginRequest(r(), policy)).toBe(false);
  });
});

describe('crossOriginGuard', () => {
  function app() {
    const seen: { url: string; origin: string | null; body: string }[] = [];
    const a = new Hono();
    a.use('*', crossOriginGuard(policy));
    a.all('*', async (c) => {
      seen.push({ url: c.req.url, origin: c.req.raw.headers.get('origin'), body: await c.req.raw.text() });
      return c.text('handled');
    });
    return { a, seen };
  }

  it('answers /api refusals in the JSON envelope, in the caller language, and runs nothing', async () => {
    const { a, seen } = app();
    const res = await a.fetch(req('/api/user/self', { ...EVIL, 'accept-language': 'en' }, 'PUT'));
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      success: false,
      message:
        "request from another site refused: changes can only be submitted from this console's own pages",
      data: null,
    });
    const zh = await a.fetch(req('/api/token/', SIBLING));
    expect(zh.status).toBe(403);
    expect((await zh.json()).message).toBe('已拒绝来自其他站点的请求：修改操作只能在本控制台的页面上提交');
    expect(seen).toEqual([]);
  });

  it('answers ?_data= as a thrown Remix response', async () => {
    const { a, seen } = app();
    const res = await a.fetch(
      req('/setting?_data=routes%2Fsetting', { ...SIBLING, 'accept-language': 'en' }),
    );
    expect(res.status).toBe(403);
    expect(res.headers.get('x-remix-catch')).toBe('yes');
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect((await res.json()).message).toMatch(/refused/);
    expect(seen).toEqual([]);
  });

  it('answers single fetch with an ErrorResponse the Remix client decodes', async () => {
    const { a } = app();
    const res = await a.fetch(req('/setting.data', { ...EVIL, 'accept-language': 'en' }));
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toBe('text/x-script');
    // The decoder plugin of @remix-run/react's single-fetch client.
    const decoded = await decode(res.body!, {
      plugins: [
        (type: string, ...rest: unknown[]) =>
          type === 'ErrorResponse'
            ? { value: { kind: 'ErrorResponse', data: rest[0], status: rest[1], statusText: rest[2] } }
            : undefined,
      ],
    });
    await decoded.done;
    expect(decoded.value).toEqual({
      error: {
        kind: 'ErrorResponse',
        data: { message: expect.stringMatching(/refused/) },
        status: 403,
        statusText: 'Forbidden',
      },
    });
  });

  it('answers a document post with a small 403 page', async () => {
    const { a } = app();
    const res = await a.fetch(req('/user/edit/1', EVIL));
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const html = await res.text();
    expect(html).toContain('<html lang="zh-CN">');
    expect(html).toContain('请求被拒绝');
    expect(html).toContain('已拒绝来自其他站点的请求');
  });

  it('passes allowed requests on, without an Origin Remix would refuse with a 500', async () => {
    const { a, seen } = app();
    expect(
      (await a.fetch(req('/setting', { origin: 'https://admin.example.com', 'sec-fetch-site': 'same-site' })))
        .status,
    ).toBe(200);
    expect(
      (await a.fetch(req('/setting', { origin: CONSOLE, 'sec-fetch-site': 'same-origin' }))).status,
    ).toBe(200);
    expect((await a.fetch(req('/v1/chat/completions', EVIL))).status).toBe(200);
    expect(seen.map((s) => [s.url, s.origin, s.body])).toEqual([
      [`${CONSOLE}/setting`, null, 'intent=password'],
      [`${CONSOLE}/setting`, CONSOLE, 'intent=password'],
      [`${CONSOLE}/v1/chat/completions`, 'http://evil.example', 'intent=password'],
    ]);
  });
});
