import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamRequest } from '../providers/types.ts';
import { fetchClient, type UpstreamClient, type UpstreamReply, undiciClient } from './upstream-client.ts';

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

describe('WebSocket transport (wsSend)', () => {
  type Peer = { path: string; received: string[]; closed: boolean };
  let http: Server;
  let wsBase = '';
  const peers: Peer[] = [];
  let wss: import('ws').WebSocketServer;

  beforeAll(async () => {
    const { WebSocketServer } = await import('ws');
    http = createServer((req, res) => {
      // What the probe of a refused handshake reads: the same refusal over plain HTTP.
      if (req.url?.startsWith('/refuse'))
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end('{"message":"HMAC signature does not match"}');
      else res.writeHead(426).end('upgrade required');
    });
    wss = new WebSocketServer({ noServer: true });
    http.on('upgrade', (req, socket, head) => {
      if (req.url?.startsWith('/refuse') || req.url?.startsWith('/broken')) {
        socket.end(
          'HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: 43\r\n\r\n{"message":"HMAC signature does not match"}',
        );
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        const peer: Peer = { path: req.url!, received: [], closed: false };
        peers.push(peer);
        ws.on('close', () => {
          peer.closed = true;
        });
        ws.on('message', (data) => {
          peer.received.push(String(data));
          if (req.url === '/whole') {
            ws.send('{"n":1}');
            ws.send(Buffer.from('{"n":2}'), { binary: true });
            setTimeout(() => ws.close(1000), 20);
          } else if (req.url === '/cut') {
            ws.send('{"n":1}');
            // Gone without a close frame, mid-answer.
            setTimeout(() => ws.terminate(), 20);
          } else if (req.url === '/open') {
            ws.send('{"n":1}');
          }
        });
      });
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    wsBase = `ws://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    for (const c of wss.clients) c.terminate();
    wss.close();
    http.closeAllConnections();
    http.close();
  });

  const wsReq = (path: string): UpstreamRequest => ({
    url: `${wsBase}${path}`,
    method: 'GET',
    headers: new Headers(),
    body: '{"hello":"upstream"}',
    transport: 'ws',
  });

  const readAll = async (chunks: ReturnType<UpstreamReply['chunks']>) => {
    const out: string[] = [];
    for (let r = await chunks!.read(); !r.done; r = await chunks!.read())
      out.push(new TextDecoder().decode(r.value));
    return out;
  };

  describe.each(clients)('through the %s client', (_name, client) => {
    it('sends the body as one message; the reply is every message newline-delimited until the close', async () => {
      peers.length = 0;
      const res = await client.send(wsReq('/whole'), AbortSignal.timeout(5000));
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('{"n":1}\n{"n":2}\n');
      expect(peers[0]!.received).toEqual(['{"hello":"upstream"}']);
    });

    it('streams message by message', async () => {
      const res = await client.send(wsReq('/whole'), AbortSignal.timeout(5000));
      expect(await readAll(res.chunks())).toEqual(['{"n":1}\n', '{"n":2}\n']);
    });

    it('a socket dropped mid-answer ends the reply with what came (the adaptor judges it)', async () => {
      const res = await client.send(wsReq('/cut'), AbortSignal.timeout(5000));
      expect(await readAll(res.chunks())).toEqual(['{"n":1}\n']);
      const whole = await client.send(wsReq('/cut'), AbortSignal.timeout(5000));
      expect(await whole.text()).toBe('{"n":1}\n');
    });

    it('cancelling a stream closes the socket and ends a pending read', async () => {
      peers.length = 0;
      const res = await client.send(wsReq('/open'), AbortSignal.timeout(5000));
      const chunks = res.chunks()!;
      expect(new TextDecoder().decode((await chunks.read()).value)).toBe('{"n":1}\n');
      const pending = chunks.read();
      await chunks.cancel();
      expect((await pending).done).toBe(true);
      await expect.poll(() => peers[0]?.closed).toBe(true);
    });

    it('a refused handshake becomes the upstream’s HTTP refusal (status and body), read by a probe', async () => {
      const res = await client.send(wsReq('/refuse?authorization=x'), AbortSignal.timeout(5000));
      expect(res.status).toBe(401);
      expect(await res.text()).toBe('{"message":"HMAC signature does not match"}');
      expect(res.chunks()).toBeNull();
    });

    it('a refused handshake whose probe shows no refusal, or no server at all, rejects as unreachable', async () => {
      await expect(client.send(wsReq('/broken'), AbortSignal.timeout(5000))).rejects.toThrow(
        'could not be opened',
      );
      const closedPort = createServer();
      await new Promise<void>((r) => closedPort.listen(0, '127.0.0.1', r));
      const port = (closedPort.address() as AddressInfo).port;
      await new Promise<void>((r) => closedPort.close(() => r()));
      await expect(
        client.send({ ...wsReq('/x'), url: `ws://127.0.0.1:${port}/x` }, AbortSignal.timeout(5000)),
      ).rejects.toThrow('could not be opened');
    });

    it('an aborted signal rejects before and while opening', async () => {
      const ctl = new AbortController();
      ctl.abort(new Error('client gone'));
      await expect(client.send(wsReq('/whole'), ctl.signal)).rejects.toThrow('client gone');
      const late = new AbortController();
      const p = client.send(wsReq('/whole'), late.signal);
      late.abort(new Error('client gone'));
      await expect(p).rejects.toThrow('client gone');
    });
  });
});
