/**
 * A small realtime test client on `ws` (what a Node program would use): opens a session, collects server events,
 * waits for them by type, and reads a refused handshake's status and body.
 */
import WebSocket from 'ws';

export type RealtimeClient = {
  ws: WebSocket;
  /** Parsed text events, in order; binary frames as `{binary: bytes}`. */
  events: Array<Record<string, unknown>>;
  /** Resolves once `n` events of `type` have arrived (rejects after `timeoutMs`). */
  waitFor(type: string, n?: number, timeoutMs?: number): Promise<Array<Record<string, unknown>>>;
  send(event: Record<string, unknown>): void;
  closed: Promise<{ code: number; reason: string }>;
};

export type ConnectOptions = { headers?: Record<string, string>; protocols?: string[] };

export function openRealtime(url: string, opts: ConnectOptions = {}): Promise<RealtimeClient> {
  const ws = new WebSocket(url, opts.protocols ?? [], { headers: opts.headers ?? {} });
  const events: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data, isBinary) => {
    events.push(isBinary ? { binary: new Uint8Array(data as Buffer) } : JSON.parse(String(data)));
    for (const w of waiters.slice()) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  const client: RealtimeClient = {
    ws,
    events,
    closed,
    send: (event) => ws.send(JSON.stringify(event)),
    waitFor(type, n = 1, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hits = events.filter((e) => e.type === type);
          if (hits.length >= n) {
            waiters.splice(waiters.indexOf(check), 1);
            clearTimeout(timer);
            resolve(hits);
            return true;
          }
          return false;
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(check), 1);
          reject(
            new Error(`timed out waiting for ${n} × ${type}; got ${events.map((e) => e.type).join(', ')}`),
          );
        }, timeoutMs);
        if (!check()) waiters.push(check);
      });
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => {
      reject(new Error(`unexpected response ${res.statusCode}`));
      res.resume();
    });
    ws.once('error', reject);
  });
}

/** A handshake the server refuses: its HTTP status and JSON body. */
export function refusedHandshake(
  url: string,
  opts: ConnectOptions = {},
): Promise<{ status: number; body: { error?: { message: string; type: string; code: string | null } } }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, opts.protocols ?? [], { headers: opts.headers ?? {} });
    ws.once('open', () => {
      ws.close();
      reject(new Error('the handshake was accepted'));
    });
    ws.once('unexpected-response', (req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => {
        req.destroy();
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) });
        } catch {
          reject(new Error(`status ${res.statusCode} with a body that is not JSON: ${body}`));
        }
      });
    });
    ws.once('error', (err) => reject(err));
  });
}
