import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseEncoding, compression } from './compression.ts';
import { createRelayProxy, isRelayPath } from './relay-proxy.ts';

describe('chooseEncoding', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['identity', null],
    ['gzip', 'gzip'],
    ['gzip, deflate, br', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['gzip;q=0, br;q=0', null],
    ['*', 'br'],
    ['deflate', null],
  ])('%s -> %s', (header, expected) => {
    expect(chooseEncoding(header)).toBe(expected);
  });
});

describe('compression middleware (in the console order: relay paths first, then compression)', () => {
  const js = `export const big = ${JSON.stringify('console.log("switchyard");'.repeat(2000))};`;
  let upstream: Server;
  let server: ReturnType<typeof serve>;
  let base: string;
  /** released by a test once the first part of a streamed answer has arrived */
  let release: () => void = () => {};

  beforeAll(async () => {
    // a relay playing the /v1 stream, one frame every 40 ms
    upstream = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let n = 0;
      const timer = setInterval(() => {
        res.write(`data: ${'x'.repeat(2000)} ${n}\n\n`);
        if (++n === 3) {
          clearInterval(timer);
          res.end('data: [DONE]\n\n');
        }
      }, 40);
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const proxy = createRelayProxy(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, {
      trustProxy: false,
      secret: 'test-secret',
      maxBodyBytes: 1 << 20,
    });
    const app = new Hono();
    app.use('*', async (c, next) => {
      if (isRelayPath(new URL(c.req.url).pathname)) return proxy(c.req.raw, '127.0.0.1');
      await next();
    });
    app.use('*', compression());
    app.get('/assets/app.js', (c) =>
      c.body(js, 200, { 'Content-Type': 'text/javascript; charset=utf-8', ETag: '"abc"' }),
    );
    app.get('/small.json', (c) =>
      c.body('{"ok":true}', 200, { 'Content-Type': 'application/json', 'Content-Length': '11' }),
    );
    app.get('/image.png', (c) => c.body(new Uint8Array(4096), 200, { 'Content-Type': 'image/png' }));
    // a page that streams: the shell first, the rest once the test has seen the shell
    app.get('/page', () => {
      const enc = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(
            enc.encode(`<!DOCTYPE html><html><body><h1>shell</h1>${'<p>a</p>'.repeat(300)}`),
          );
          await new Promise<void>((r) => {
            release = r;
          });
          controller.enqueue(enc.encode('<p id="late">late</p></body></html>'));
          controller.close();
        },
      });
      return new Response(body, { headers: { 'Content-Type': 'text/html; charset=utf-8' } });
    });
    // the playground's event stream (Remix answers /pg/chat/completions with text/event-stream)
    app.get('/pg/chat/completions', () => {
      const enc = new TextEncoder();
      let n = 0;
      let timer: NodeJS.Timeout;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          timer = setInterval(() => {
            controller.enqueue(enc.encode(`data: ${'y'.repeat(2000)} ${n}\n\n`));
            if (++n === 3) {
              clearInterval(timer);
              controller.close();
            }
          }, 40);
        },
        cancel() {
          clearInterval(timer);
        },
      });
      return new Response(body, { headers: { 'Content-Type': 'text/event-stream; charset=utf-8' } });
    });
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((r) => (server.listening ? r() : server.once('listening', () => r())));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await new Promise<void>((r) => upstream.close(() => r()));
  });

  it.each(['gzip', 'br'] as const)(
    'sends a JS asset %s-encoded, smaller, with Vary and a weak ETag',
    async (enc) => {
      const res = await fetch(`${base}/assets/app.js`, { headers: { 'Accept-Encoding': enc } });
      expect(res.headers.get('content-encoding')).toBe(enc);
      expect(res.headers.get('vary')).toBe('Accept-Encoding');
      expect(res.headers.get('etag')).toBe('W/"abc"');
      expect(res.headers.get('content-length')).toBeNull();
      const raw = new Uint8Array(await new Response(res.body).arrayBuffer());
      // fetch decodes the body: what arrived is the original text
      expect(new TextDecoder().decode(raw)).toBe(js);
    },
  );

  it('sends the asset compressed on the wire (raw bytes much smaller than the text)', async () => {
    const { request } = await import('node:http');
    const size = await new Promise<number>((resolve, reject) => {
      request(`${base}/assets/app.js`, { headers: { 'Accept-Encoding': 'br' } }, (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => resolve(n));
      })
        .on('error', reject)
        .end();
    });
    expect(size).toBeLessThan(js.length / 10);
  });

  it('sends plain text to a client that asks for no encoding, still with Vary', async () => {
    const res = await fetch(`${base}/assets/app.js`, { headers: { 'Accept-Encoding': 'identity' } });
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(res.headers.get('vary')).toBe('Accept-Encoding');
    expect(await res.text()).toBe(js);
  });

  it('leaves small answers (known length) and binary types alone', async () => {
    const small = await fetch(`${base}/small.json`, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(small.headers.get('content-encoding')).toBeNull();
    expect(await small.json()).toEqual({ ok: true });
    const png = await fetch(`${base}/image.png`, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(png.headers.get('content-encoding')).toBeNull();
    expect(png.headers.get('vary')).toBeNull();
  });

  it('compresses a streamed page without holding its first part back', async () => {
    const res = await fetch(`${base}/page`, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(res.headers.get('content-encoding')).toBe('gzip');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const dec = new TextDecoder();
    let text = '';
    // the page holds its end until the shell has arrived: without a flush this read never completes
    while (!text.includes('<h1>shell</h1>')) {
      const { done, value } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
    }
    expect(text).toContain('<h1>shell</h1>');
    expect(text).not.toContain('late');
    release();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
    }
    expect(text).toContain('<p id="late">late</p></body></html>');
  });

  it.each([
    ['the playground stream', '/pg/chat/completions'],
    ['a relay-forwarded /v1 stream', '/v1/chat/completions'],
  ])('never compresses %s, and its frames arrive one by one', async (_name, path) => {
    const res = await fetch(`${base}${path}`, { headers: { 'Accept-Encoding': 'gzip, br' } });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('content-encoding')).toBeNull();
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const arrivals: number[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value.length) arrivals.push(Date.now());
    }
    // three frames 40 ms apart: they arrive over time, not all at the end
    expect(arrivals.length).toBeGreaterThanOrEqual(3);
    expect((arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThanOrEqual(60);
  });
});
