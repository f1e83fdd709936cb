/**
 * The upstream side of a realtime session: where a channel serves the Realtime API and how the relay opens it.
 * OpenAI (type 1): `wss://api.openai.com/v1/realtime?model=...` with `Authorization: Bearer <key>`; Azure OpenAI
 * (type 3): `wss://<resource>/openai/realtime?api-version=...&deployment=...` with the `api-key` header.
 * Both runtimes' clients send headers (`ws` on Node, Deno's WebSocket with its `headers` option), so the key
 * never travels as a subprotocol or in the URL.
 */
import { AZURE_DEFAULT_API_VERSION } from '../providers/azure/adaptor.ts';
import { channelBase } from '../providers/openai/channels.ts';
import type { ChannelConfig } from '../providers/types.ts';
import { runtime, type ServerWebSocket } from '../runtime.ts';

/** Channel types that serve the Realtime API. */
export const REALTIME_CHANNEL_TYPES: ReadonlySet<number> = new Set([1, 3]);

export type UpstreamTarget = { url: string; headers: Record<string, string>; protocols: string[] };

const toWs = (base: string) => base.replace(/^http(s?):\/\//i, (_m, s: string) => (s ? 'wss://' : 'ws://'));

/**
 * `beta`: the client asked for the beta protocol (`OpenAI-Beta: realtime=v1` or the `openai-beta.realtime-v1`
 * subprotocol); the upstream is asked for the same, so events pass through in the shape the client expects.
 */
export function realtimeTarget(channel: ChannelConfig, model: string, beta: boolean): UpstreamTarget {
  if (!REALTIME_CHANNEL_TYPES.has(channel.type))
    throw new Error(`channel type ${channel.type} does not serve the Realtime API`);
  const headers: Record<string, string> = {};
  if (beta) headers['openai-beta'] = 'realtime=v1';
  const protocols = beta ? ['realtime', 'openai-beta.realtime-v1'] : ['realtime'];
  if (channel.type === 3) {
    const base = channel.baseUrl.replace(/\/+$/, '');
    if (!base)
      throw new Error(`channel ${channel.id}: an Azure channel needs its resource endpoint as base URL`);
    const version = encodeURIComponent(channel.other.trim() || AZURE_DEFAULT_API_VERSION);
    // Deployment names cannot hold dots (as for Azure's HTTP paths).
    const deployment = encodeURIComponent(model.replaceAll('.', ''));
    headers['api-key'] = channel.key;
    return {
      url: `${toWs(base)}/openai/realtime?api-version=${version}&deployment=${deployment}`,
      headers,
      protocols,
    };
  }
  const base = channelBase(channel);
  const root = base.endsWith('/v1') ? base : `${base}/v1`;
  headers.authorization = `Bearer ${channel.key}`;
  if (channel.openaiOrganization) headers['openai-organization'] = channel.openaiOrganization;
  return { url: `${toWs(root)}/realtime?model=${encodeURIComponent(model)}`, headers, protocols };
}

/** The upstream refused or could not be reached; `status` is the HTTP status of a refused handshake. */
export class UpstreamOpenError extends Error {
  override name = 'UpstreamOpenError';
  readonly status: number | null;
  /** What the upstream said (for the relay's log only: it may quote the channel key, masked or not). */
  readonly detail: string;
  constructor(message: string, status: number | null, detail = '') {
    super(message);
    this.status = status;
    this.detail = detail;
  }
}

/**
 * An open upstream socket whose messages and close are kept until the session takes them: the upstream may
 * speak (session.created) before the client's handshake has completed.
 */
export type BufferedSocket = {
  socket: ServerWebSocket;
  /** Delivers queued and later messages to `onMessage`, then the close (once) to `onClose`. */
  attach(onMessage: (data: unknown) => void, onClose: (code: number, reason: string) => void): void;
};

function buffered(socket: ServerWebSocket): BufferedSocket {
  const queue: unknown[] = [];
  let closed: { code: number; reason: string } | null = null;
  let sink: ((data: unknown) => void) | null = null;
  let closeSink: ((code: number, reason: string) => void) | null = null;
  socket.addEventListener('message', (ev) => (sink ? sink(ev.data) : queue.push(ev.data)));
  socket.addEventListener('close', (ev) => {
    if (closeSink) closeSink(ev.code, ev.reason);
    else closed = { code: ev.code, reason: ev.reason };
  });
  socket.addEventListener('error', () => {});
  return {
    socket,
    attach(onMessage, onClose) {
      sink = onMessage;
      for (const d of queue.splice(0)) onMessage(d);
      closeSink = onClose;
      if (closed) onClose(closed.code, closed.reason);
    },
  };
}

/** Opens the upstream WebSocket; rejects with UpstreamOpenError when refused, unreachable or too slow. */
export async function openUpstream(
  target: UpstreamTarget,
  timeoutMs: number,
  maxPayload = 64 * 1024 * 1024,
): Promise<BufferedSocket> {
  if (runtime.name === 'node') return openNode(target, timeoutMs, maxPayload);
  return openStandard(target, timeoutMs);
}

async function openNode(
  target: UpstreamTarget,
  timeoutMs: number,
  maxPayload: number,
): Promise<BufferedSocket> {
  const { WebSocket } = await import('ws');
  return new Promise<BufferedSocket>((resolve, reject) => {
    const ws = new WebSocket(target.url, target.protocols, {
      headers: target.headers,
      perMessageDeflate: false,
      handshakeTimeout: timeoutMs,
      maxPayload,
    });
    ws.binaryType = 'arraybuffer';
    const socket = ws as unknown as ServerWebSocket;
    const ready = buffered(socket);
    ws.once('open', () => resolve(ready));
    ws.once('unexpected-response', (req, res) => {
      // The refusal's body (OpenAI's error envelope) says why; read a little of it, then drop the request.
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < 2048) body += chunk;
      });
      const done = () => {
        req.destroy();
        const status = res.statusCode ?? 0;
        reject(
          new UpstreamOpenError(
            `the upstream refused the realtime session with HTTP ${status}`,
            status,
            upstreamDetail(body),
          ),
        );
      };
      res.once('end', done);
      res.once('error', done);
    });
    ws.once('error', (err) =>
      reject(new UpstreamOpenError(`the upstream could not be reached (${err.message})`, null)),
    );
  });
}

/** Deno (and any runtime whose WebSocket takes `{ protocols, headers }`). */
async function openStandard(target: UpstreamTarget, timeoutMs: number): Promise<BufferedSocket> {
  const Ctor = WebSocket as unknown as new (
    url: string,
    opts: { protocols: string[]; headers: Record<string, string> },
  ) => WebSocket;
  const ws = new Ctor(target.url, { protocols: target.protocols, headers: target.headers });
  ws.binaryType = 'arraybuffer';
  const ready = buffered(ws);
  return new Promise<BufferedSocket>((resolve, reject) => {
    const timer = setTimeout(() => {
      ws.close();
      reject(new UpstreamOpenError('the upstream did not open the session in time', null));
    }, timeoutMs);
    ws.addEventListener('open', () => {
      clearTimeout(timer);
      resolve(ready);
    });
    ws.addEventListener('error', (ev) => {
      clearTimeout(timer);
      const message = (ev as ErrorEvent).message || 'the handshake failed';
      const status = /\b([1-5]\d\d)\b/.exec(message);
      reject(
        new UpstreamOpenError(
          `the upstream refused the session (${message})`,
          status ? Number(status[1]) : null,
        ),
      );
    });
  });
}

/** The upstream's reason, for the log, with anything that looks like a key (even masked) cut out. */
function upstreamDetail(body: string): string {
  let detail = body.slice(0, 200);
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') detail = parsed.error.message;
  } catch {
    // Not JSON.
  }
  return detail.replace(/\b(sk|key)-[\w*.-]+/gi, '$1-***');
}
