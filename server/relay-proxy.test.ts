import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signClientIp } from '@switchyard/relay/http/client-ip.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayProxy, isRelayPath } from './relay-proxy.ts';

describe('isRelayPath', () => {
  it.each([
    ['/v1/chat/completions', true],
    ['/v1', true],
    ['/v1beta/models/gemini:generateContent', true],
    // Gemini's OpenAI-compatible API.
    ['/v1beta/openai/chat/completions', true],
    ['/mj/submit/imagine', true],
    ['/mj-fast/mj/submit/imagine', true],
    ['/mj-relax/mj/task/1/fetch', true],
    ['/mj-other/mj/submit/imagine', false],
    ['/suno/submit/music', true],
    // The playground is the console's (session-authenticated, ADR 008).
    ['/pg/chat/completions', false],
    ['/dashboard/billing/usage', true],
    ['/v10/x', false],
    ['/api/status', false],
    ['/', false],
    ['/pricing', false],
  ])('%s -> %s', (p, expected) => {
    expect(isRelayPath(p)).toBe(expected);
  });
});

describe('createRelayProxy', () => {
  let upstream: Server;
  let base: string;
  const frames: number[] = [];

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      if (req.url?.startsWith('/v1/stream')) {
        res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'keep-alive' });
        let n = 0;
        const timer = setInterval(() => {
          frames.push(Date.now());
          res.write(`data: ${n}\n\n`);
          if (++n === 3) {
            clearInterval(timer);
            res.end('data: [DONE]\n\n');
          }
        }, 30);
        return;
      }
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
        res.end(
          JSON.stringify({
            method: req.method,
            url: req.url,
            body,
            auth: req.headers.authorization,
            xff: req.headers['x-forwarded-for'],
            host: req.headers['x-forwarded-host'],
            client: req.headers['x-switchyard-client'],
          }),
        );
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => upstream.close(() => r())));

  it('forwards method, path, query, body and headers, and returns the upstream status', async () => {
    const proxy = createRelayProxy(base);
    const res = await proxy(
      new Request('http://console.local:3000/v1/chat/completions?x=1', {
        method: 'POST',
        headers: { authorization: 'Bearer sk-abc', 'content-type': 'application/json' },
        body: '{"model":"m"}',
      }),
      '10.1.2.3',
    );
    expect(res.status).toBe(201);
    expect(res.headers.get('x-upstream')).toBe('yes');
    expect(await res.json()).toEqual({
      method: 'POST',
      url: '/v1/chat/completions?x=1',
      body: '{"model":"m"}',
      auth: 'Bearer sk-abc',
      xff: '10.1.2.3',
      host: 'console.local:3000',
    });
  });

  it('sets X-Forwarded-For to the address it determined (never appends) and keys it for the relay', async () => {
    const forged = {
      'x-forwarded-for': '10.9.9.9',
      'x-switchyard-client': '10.9.9.9;forged',
      'content-type': 'application/json',
    };
    const send = (proxy: ReturnType<typeof createRelayProxy>, headers: Record<string, string>) =>
      proxy(
        new Request('http://console.local/v1/chat/completions', { method: 'POST', headers, body: '{}' }),
        '127.0.0.1',
      ).then((r) => r.json() as Promise<{ xff: string; client?: string }>);
    const plain = await send(createRelayProxy(base, { secret: 's3cret' }), forged);
    expect(plain.xff).toBe('127.0.0.1');
    expect(plain.client).toBe(signClientIp('s3cret', '127.0.0.1'));
    // Behind the console's own proxy (one trusted hop), the hop that proxy added is the client.
    const behind = await send(createRelayProxy(base, { trustProxy: 1 }), {
      ...forged,
      'x-forwarded-for': '10.9.9.9, 203.0.113.7',
    });
    expect(behind).toMatchObject({ xff: '203.0.113.7' });
    expect(behind.client).toBeUndefined();
  });

  it('streams frames as they arrive instead of buffering the response', async () => {
    const proxy = createRelayProxy(base);
    const res = await proxy(new Request('http://console.local/v1/stream'));
    const reader = res.body!.getReader();
    const received: number[] = [];
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received.push(Date.now());
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain('data: 0');
    expect(text).toContain('data: [DONE]');
    // The first frame reached us before the upstream wrote its last one.
    expect(received[0]).toBeLessThan(frames[frames.length - 1]!);
  });

  it('answers 502 in the OpenAI error shape when the relay is down', async () => {
    const proxy = createRelayProxy('http://127.0.0.1:9');
    const res = await proxy(new Request('http://console.local/v1/models'));
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string } };
    expect(body.error.code).toBe('relay_unavailable');
  });
});
