import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamRequest } from '../providers/types.ts';
import { fetchClient, type UpstreamClient, undiciClient } from './upstream-client.ts';

type Seen = { method: string; url: string; headers: IncomingMessage['headers']; body: string };

let server: Server;
let base = '';
const seen: Seen[] = [];
const closed: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      if (req.url === '/moved') {
        res.writeHead(307, { location: '/json' }).end();
      } else if (req.url === '/open') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: 1\n\n');
        res.on('close', () => closed.push(req.url!));
      } else if (req.url?.startsWith('/stream')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: 1\n\n');
        setTimeout(() => res.end('data: 2\n\n'), 30);
      } else if (req.url === '/fail') {
        res
          .writeHead(429, { 'retry-after': '3', 'content-type': 'application/json' })
          .end('{"error":"slow"}');
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'x-multi': ['a', 'b'] });
        res.end(JSON.stringify({ ok: true, url: req.url }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const req = (path: string, init: Partial<UpstreamRequest> = {}): UpstreamRequest => ({
  url: `${base}${path}`,
  method: 'POST',
  headers: new Headers({ 'content-type': 'application/json', authorization: 'Bearer k' }),
  body: '{"model":"m"}',
  ...init,
});

const clients: [string, UpstreamClient][] = [
  ['undici', undiciClient(fetchClient(fetch))],
  ['fetch', fetchClient(fetch)],
];

describe.each(clients)('upstream client (%s)', (_name, client) => {
  it('sends method, path with query, headers and body; reads status, headers and the whole body', async () => {
    seen.length = 0;
    const res = await client.send(req('/json?a=1'), AbortSignal.timeout(5000));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-multi')).toBe('a, b');
    expect(JSON.parse(new TextDecoder().decode(await res.bytes()))).toEqual({ ok: true, url: '/json?a=1' });
    const s = seen[0]!;
    expect(s).toMatchObject({ method: 'POST', url: '/json?a=1', body: '{"model":"m"}' });
    expect(s.headers.authorization).toBe('Bearer k');
    expect(s.headers['content-type']).toBe('application/json');
    // Both paths present the same defaults to the upstream.
    expect(s.headers['user-agent']).toBe('node');
    expect(s.headers.accept).toBe('*/*');
  });

  it('reads an error reply as text with its headers', async () => {
    const res = await client.send(req('/fail'), AbortSignal.timeout(5000));
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(await res.text()).toBe('{"error":"slow"}');
  });

  it('streams frames as they arrive', async () => {
    const res = await client.send(req('/stream'), AbortSignal.timeout(5000));
    const reader = res.chunks()!;
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: 1\n\n');
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read())
      rest += new TextDecoder().decode(r.value);
    expect(rest).toBe('data: 2\n\n');
  });

  it('cancelling a stream mid-read closes the upstream connection', async () => {
    closed.length = 0;
    const res = await client.send(req('/open'), AbortSignal.timeout(5000));
    const reader = res.chunks()!;
    await reader.read();
    const pending = reader.read();
    await reader.cancel();
    expect((await pending).done).toBe(true);
    await expect.poll(() => closed).toEqual(['/open']);
  });

  it('follows a redirect like fetch does', async () => {
    const res = await client.send(req('/moved'), AbortSignal.timeout(5000));
    expect(res.status).toBe(200);
    expect(JSON.parse(await res.text())).toEqual({ ok: true, url: '/json' });
  });

  it('sends multipart bodies (fetch encodes the form)', async () => {
    seen.length = 0;
    const form = new FormData();
    form.set('model', 'whisper-1');
    const res = await client.send(
      req('/form', { headers: new Headers(), body: form }),
      AbortSignal.timeout(5000),
    );
    expect(res.status).toBe(200);
    await res.bytes();
    expect(seen[0]!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(seen[0]!.body).toContain('whisper-1');
  });

  it('rejects when the signal aborts', async () => {
    const ctl = new AbortController();
    ctl.abort();
    await expect(client.send(req('/json'), ctl.signal)).rejects.toBeTruthy();
  });
});
