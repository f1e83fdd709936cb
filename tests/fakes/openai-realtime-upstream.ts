/**
 * A fake of the OpenAI Realtime API over WebSocket (and Azure OpenAI's realtime route) on loopback, for relay
 * tests: the official SDK's realtime client or a plain `ws` client can talk to it directly.
 *
 * Wire format (OpenAI's Realtime docs): the handshake is `GET /v1/realtime?model=...` (Azure:
 * `/openai/realtime?api-version=...&deployment=...`); the key is `Authorization: Bearer <key>` or the
 * `openai-insecure-api-key.<key>` subprotocol (Azure: the `api-key` header). A wrong key is refused before the
 * switch with 401 and OpenAI's error body. After the switch the server sends `session.created`; a
 * `session.update` is answered with `session.updated`; a `response.create` streams `response.created`,
 * `response.output_text.delta` per word of the text and `response.output_audio.delta` chunks (beta names
 * `response.text.delta` / `response.audio.delta` when the client asked for `OpenAI-Beta: realtime=v1`), then
 * `response.done` whose `response.usage` has the script's figures. `response.cancel` stops a held response
 * with a `response.done` of status `cancelled` carrying the usage of what was sent.
 *
 * Scripts (`next`) set a response's text, audio chunks, usage and whether it holds open after its deltas (for
 * cancel tests), or a flood of audio deltas sent as fast as the reader takes them (backpressure tests: the fake
 * keeps at most 1 MiB waiting in its own socket, as a well-behaved server would); without a script: text "Hello there", one audio chunk, usage 10 text + 20 audio in, 2 text + 30
 * audio out. Binary frames are echoed back unchanged (a test hook: the real API speaks JSON text only).
 * Uses `ws` and node:http, so it also runs on Deno.
 */
import { Buffer } from 'node:buffer';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';

export type RealtimeUsageFigures = {
  textIn: number;
  audioIn: number;
  cachedIn?: number;
  textOut: number;
  audioOut: number;
};

export type RealtimeScript = {
  text?: string;
  audioChunks?: number;
  usage?: RealtimeUsageFigures;
  /** Stay in progress after the deltas until `response.cancel` (or the socket closes). */
  hold?: boolean;
  /** Close the socket (this code) after the deltas instead of finishing. */
  closeWith?: number;
  /**
   * Instead of the deltas: audio deltas of `chunkBytes` base64 characters (default 32 KiB) until `bytes` are
   * sent or `response.cancel` comes; `response.done` then reports one audio output token per delta sent.
   */
  flood?: { bytes: number; chunkBytes?: number };
};

export type RealtimeConnection = {
  path: string;
  query: Record<string, string>;
  auth: 'header' | 'subprotocol' | 'api-key';
  beta: boolean;
  protocol: string;
  /** Client events as received (parsed JSON; binary frames as `{binary: bytes}`). */
  received: unknown[];
  /** Bytes of client messages received. */
  receivedBytes: number;
  /** Stop / start reading the socket (an upstream that does not take the client's events). */
  pause(): void;
  resume(): void;
  /** Audio deltas of a flood sent so far. */
  flooded: number;
  closed: Promise<{ code: number }>;
};

export type FakeRealtime = {
  /** http://127.0.0.1:port (a channel's base URL). */
  url: string;
  connections: RealtimeConnection[];
  /** Queues the behaviour of the next responses, in order. */
  next(...scripts: RealtimeScript[]): void;
  /** Closes every open upstream socket with `code`. */
  closeAll(code?: number): void;
  reset(): void;
  close(): Promise<void>;
};

export const DEFAULT_REALTIME_USAGE: RealtimeUsageFigures = {
  textIn: 10,
  audioIn: 20,
  textOut: 2,
  audioOut: 30,
};

function usageJson(u: RealtimeUsageFigures) {
  return {
    total_tokens: u.textIn + u.audioIn + u.textOut + u.audioOut,
    input_tokens: u.textIn + u.audioIn,
    output_tokens: u.textOut + u.audioOut,
    input_token_details: {
      text_tokens: u.textIn,
      audio_tokens: u.audioIn,
      cached_tokens: u.cachedIn ?? 0,
      cached_tokens_details: { text_tokens: u.cachedIn ?? 0, audio_tokens: 0 },
    },
    output_token_details: { text_tokens: u.textOut, audio_tokens: u.audioOut },
  };
}

let seq = 0;
const id = (prefix: string) => `${prefix}_${(++seq).toString(36).padStart(6, '0')}fake`;

export async function startFakeRealtime(opts: { keys?: string[] } = {}): Promise<FakeRealtime> {
  const keys = new Set(opts.keys ?? ['sk-upstream-key']);
  const scripts: RealtimeScript[] = [];
  const connections: RealtimeConnection[] = [];
  const sockets = new Set<WebSocket>();
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => (offered.has('realtime') ? 'realtime' : false),
  });
  const server = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ error: { message: 'WebSocket upgrade required', type: 'invalid_request_error' } }),
    );
  });

  const refuse = (socket: Duplex, status: number, error: Record<string, unknown>) => {
    const body = JSON.stringify({ error: { param: null, ...error } });
    socket.end(
      `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Bad Request'}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  };

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const offered = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((s) => s.trim());
    const fromProtocol = offered.find((p) => p.startsWith('openai-insecure-api-key.'))?.slice(24);
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    let auth: RealtimeConnection['auth'];
    let key: string | undefined;
    if (url.pathname === '/v1/realtime') {
      if (!query.model)
        return refuse(socket, 400, {
          message: 'Missing required parameter: model',
          type: 'invalid_request_error',
        });
      auth = bearer ? 'header' : 'subprotocol';
      key = bearer ?? fromProtocol;
    } else if (url.pathname === '/openai/realtime') {
      if (!query['api-version'] || !query.deployment)
        return refuse(socket, 400, {
          message: 'api-version and deployment are required',
          type: 'invalid_request_error',
        });
      auth = 'api-key';
      key = req.headers['api-key'] as string | undefined;
    } else return refuse(socket, 400, { message: `no route ${url.pathname}`, type: 'invalid_request_error' });
    if (!key || !keys.has(key))
      return refuse(socket, 401, {
        message: `Incorrect API key provided: ${(key ?? '').slice(0, 6)}****.`,
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      });
    const beta =
      String(req.headers['openai-beta'] ?? '').includes('realtime=v1') ||
      offered.includes('openai-beta.realtime-v1');
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      let closedResolve!: (v: { code: number }) => void;
      const conn: RealtimeConnection = {
        path: url.pathname,
        query,
        auth,
        beta,
        protocol: ws.protocol,
        received: [],
        receivedBytes: 0,
        pause: () => ws.pause(),
        resume: () => ws.resume(),
        flooded: 0,
        closed: new Promise((r) => {
          closedResolve = r;
        }),
      };
      connections.push(conn);
      ws.on('close', (code) => {
        sockets.delete(ws);
        closedResolve({ code });
      });
      const send = (ev: Record<string, unknown>) => {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ event_id: id('event'), ...ev }));
      };
      const model = query.model ?? query.deployment ?? '';
      const session = { id: id('sess'), object: 'realtime.session', model, modalities: ['text', 'audio'] };
      send({ type: 'session.created', session });
      let active: { id: string; sent: RealtimeUsageFigures; finish: (status: string) => void } | null = null;

      ws.on('message', (data, isBinary) => {
        conn.receivedBytes += (data as Buffer).length;
        if (isBinary) {
          conn.received.push({ binary: new Uint8Array(data as Buffer) });
          ws.send(data, { binary: true });
          return;
        }
        let ev: { type?: string; session?: Record<string, unknown> };
        try {
          ev = JSON.parse(String(data));
        } catch {
          return send({
            type: 'error',
            error: { type: 'invalid_request_error', code: 'invalid_json', message: 'bad JSON' },
          });
        }
        conn.received.push(ev);
        if (ev.type === 'session.update')
          send({ type: 'session.updated', session: { ...session, ...ev.session } });
        if (ev.type === 'response.cancel' && active) active.finish('cancelled');
        if (ev.type !== 'response.create') return;
        const script = scripts.shift() ?? {};
        const text = script.text ?? 'Hello there';
        const full = script.usage ?? DEFAULT_REALTIME_USAGE;
        const responseId = id('resp');
        const response = {
          id: responseId,
          object: 'realtime.response',
          status: 'in_progress',
          output: [],
          usage: null,
        };
        send({ type: 'response.created', response });
        if (script.flood) {
          const { bytes, chunkBytes = 32 * 1024 } = script.flood;
          const delta = Buffer.alloc((chunkBytes / 4) * 3, 7).toString('base64');
          let cancelled = false;
          active = {
            id: responseId,
            sent: full,
            finish: () => {
              cancelled = true;
            },
          };
          void (async () => {
            for (let sent = 0; sent < bytes && !cancelled && ws.readyState === ws.OPEN; ) {
              // A server that keeps little in its own buffers: wait while the reader is behind.
              if (ws.bufferedAmount > 1 << 20) {
                await new Promise((r) => setTimeout(r, 2));
                continue;
              }
              send({ type: 'response.output_audio.delta', response_id: responseId, delta });
              sent += delta.length;
              conn.flooded++;
            }
            active = null;
            send({
              type: 'response.done',
              response: {
                ...response,
                status: cancelled ? 'cancelled' : 'completed',
                usage: usageJson({ ...full, textOut: 0, audioOut: conn.flooded }),
              },
            });
          })();
          return;
        }
        const words = text.split(/(?=\s)/);
        for (const w of words)
          send({
            type: beta ? 'response.text.delta' : 'response.output_text.delta',
            response_id: responseId,
            item_id: 'item_1',
            output_index: 0,
            content_index: 0,
            delta: w,
          });
        for (let i = 0; i < (script.audioChunks ?? 1); i++)
          send({
            type: beta ? 'response.audio.delta' : 'response.output_audio.delta',
            response_id: responseId,
            item_id: 'item_1',
            output_index: 0,
            content_index: 1,
            delta: Buffer.alloc(480, i).toString('base64'),
          });
        const finish = (status: string, figures: RealtimeUsageFigures) => {
          active = null;
          send({
            type: 'response.done',
            response: { ...response, status, usage: usageJson(figures) },
          });
        };
        if (script.closeWith !== undefined) return ws.close(script.closeWith, 'fake upstream closed');
        if (script.hold) {
          // What a cancel reports: the input, and the output streamed so far (half of the script's output).
          const sent = {
            ...full,
            textOut: Math.ceil(full.textOut / 2),
            audioOut: Math.ceil(full.audioOut / 2),
          };
          active = { id: responseId, sent, finish: (status) => finish(status, sent) };
          return;
        }
        finish('completed', full);
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections,
    next: (...s) => scripts.push(...s),
    closeAll(code = 1000) {
      for (const ws of sockets) ws.close(code, 'fake upstream closed');
    },
    reset() {
      scripts.length = 0;
      connections.length = 0;
    },
    async close() {
      for (const ws of sockets) ws.terminate();
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
