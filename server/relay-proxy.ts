/**
 * One origin for users (ARCHITECTURE.md §1): when the console is reached directly (locally, or without an
 * Ingress that splits traffic), the model API paths are forwarded to the relay unchanged and streamed back.
 */

import type { IncomingMessage } from 'node:http';
import { connect as netConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { bodyTooLargeMessage, DEFAULT_MAX_BODY_BYTES } from '@switchyard/relay/http/body.ts';
import {
  FORWARDED_CLIENT_HEADER,
  resolveClientIp,
  signClientIp,
  type TrustProxy,
} from '@switchyard/relay/http/client-ip.ts';
import { envelopeFor } from '@switchyard/relay/http/envelopes.ts';
import { CLIENT_IP_HEADER } from '#app/domain/security/rate-limit.server.ts';

// Not /pg/: the playground is served by the console itself (session auth, ADR 008).
export const RELAY_PATH_PREFIXES = [
  '/v1/',
  '/v1beta/',
  '/mj/',
  // Midjourney's mode prefixes (new-api's /:mode/mj/...).
  '/mj-fast/mj/',
  '/mj-turbo/mj/',
  '/mj-relax/mj/',
  '/suno/',
  '/dashboard/billing/',
] as const;

export function isRelayPath(pathname: string): boolean {
  if (pathname === '/v1' || pathname === '/v1beta') return true;
  return RELAY_PATH_PREFIXES.some((p) => pathname.startsWith(p));
}

// Hop-by-hop headers (RFC 9110 §7.6.1) are not forwarded. Nor is `Expect`: Node's server has already answered
// the client's `100-continue` (RFC 9110 §10.1.1), and undici refuses the header outright, which made every curl
// upload through the console (curl asks for 100-continue on chunked and large bodies) a 502.
const HOP_BY_HOP = new Set([
  'expect',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

/** Headers a client may not send through: the console sets them itself. */
const OWN = new Set(['x-forwarded-for', FORWARDED_CLIENT_HEADER, CLIENT_IP_HEADER]);

export type RelayProxyOptions = {
  /** The console's TRUST_PROXY: how the client address is found behind the console's own proxies. */
  trustProxy?: TrustProxy;
  /** INTERNAL_API_SECRET: keys the client address passed to the relay (ADR 015). */
  secret?: string;
  /** RELAY_MAX_BODY_BYTES: bodies are counted as they are forwarded and cut off above it (413). */
  maxBodyBytes?: number;
};

/**
 * Counts the bytes of a forwarded body; past `max` it errors the stream (the upload to the relay stops there)
 * and records it, so the forwarding answers 413 instead of the relay seeing an oversized body.
 */
function counted(body: ReadableStream<Uint8Array>, max: number, state: { exceeded: boolean }) {
  let size = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > max) {
          state.exceeded = true;
          controller.error(new Error('request body too large'));
        } else controller.enqueue(chunk);
      },
    }),
  );
}

function tooLarge(pathname: string, max: number): Response {
  const res = envelopeFor(pathname)({
    status: 413,
    message: bodyTooLargeMessage(max),
    type: 'invalid_request_error',
    code: 'request_too_large',
  });
  // The rest of the upload is not read: the connection closes after the answer.
  res.headers.set('connection', 'close');
  return res;
}

/**
 * The forwarding. The client address is the one the console determines (socket peer, or the trusted hops of
 * X-Forwarded-For under TRUST_PROXY): X-Forwarded-For is set to it, never appended to, and with a secret it is
 * also passed in FORWARDED_CLIENT_HEADER with its HMAC, the only form the relay believes from any peer.
 */
export function createRelayProxy(relayUrl: string, opts: RelayProxyOptions = {}) {
  const base = new URL(relayUrl);
  const trust = opts.trustProxy ?? false;
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return async function proxy(request: Request, socketAddress?: string): Promise<Response> {
    const incoming = new URL(request.url);
    const target = new URL(incoming.pathname + incoming.search, base);
    const headers = new Headers();
    for (const [k, v] of request.headers) if (!HOP_BY_HOP.has(k) && !OWN.has(k)) headers.set(k, v);
    const clientIp = socketAddress
      ? resolveClientIp(socketAddress, request.headers.get('x-forwarded-for'), trust)
      : '';
    if (clientIp) {
      headers.set('x-forwarded-for', clientIp);
      if (opts.secret) headers.set(FORWARDED_CLIENT_HEADER, signClientIp(opts.secret, clientIp));
    }
    headers.set('x-forwarded-host', incoming.host);
    headers.set('x-forwarded-proto', incoming.protocol.replace(':', ''));
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD' && request.body !== null;
    if (hasBody && Number(request.headers.get('content-length') ?? 0) > maxBody)
      return tooLarge(incoming.pathname, maxBody);
    const cut = { exceeded: false };
    try {
      const upstream = await fetch(target, {
        method: request.method,
        headers,
        body: hasBody && request.body ? counted(request.body, maxBody, cut) : null,
        redirect: 'manual',
        signal: request.signal,
        // Required by undici to send a streaming request body.
        ...(hasBody ? { duplex: 'half' } : {}),
      } as RequestInit);
      const out = new Headers();
      for (const [k, v] of upstream.headers) if (!HOP_BY_HOP.has(k)) out.set(k, v);
      return new Response(upstream.body, {
        status: upstream.status,
        statusText: upstream.statusText,
        headers: out,
      });
    } catch (err) {
      if (cut.exceeded) return tooLarge(incoming.pathname, maxBody);
      if (request.signal.aborted) return new Response(null, { status: 499 });
      const message = `relay unavailable: ${(err as Error).message}`;
      return Response.json(
        { error: { message, type: 'switchyard_error', param: null, code: 'relay_unavailable' } },
        { status: 502 },
      );
    }
  };
}

/** Headers the upgrade forwarding sets itself (the client's are dropped). */
const UPGRADE_OWN = new Set([
  'host',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  FORWARDED_CLIENT_HEADER,
  CLIENT_IP_HEADER,
]);

/**
 * WebSocket upgrades on the relay paths (`/v1/realtime`), for the server's 'upgrade' event: the handshake is
 * passed to the relay over a fresh connection with the same client-address headers as the HTTP forwarding, and
 * from then on bytes are copied both ways, so the relay's answer (101 with its selected subprotocol, or a
 * refusal in OpenAI's envelope) and every frame reach the client unchanged. Returns false for other paths.
 */
export function createRelayUpgradeProxy(relayUrl: string, opts: RelayProxyOptions = {}) {
  const base = new URL(relayUrl);
  const tls = base.protocol === 'https:';
  const port = Number(base.port || (tls ? 443 : 80));
  const trust = opts.trustProxy ?? false;
  return function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const incoming = new URL(req.url ?? '/', 'http://console');
    if (!isRelayPath(incoming.pathname)) return false;
    const clientIp = resolveClientIp(
      req.socket.remoteAddress ?? '',
      (req.headers['x-forwarded-for'] as string | undefined) ?? null,
      trust,
    );
    const lines = [
      `${req.method ?? 'GET'} ${incoming.pathname}${incoming.search} HTTP/1.1`,
      `host: ${base.host}`,
    ];
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!;
      if (!UPGRADE_OWN.has(name.toLowerCase())) lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
    }
    if (clientIp) {
      lines.push(`x-forwarded-for: ${clientIp}`);
      if (opts.secret) lines.push(`${FORWARDED_CLIENT_HEADER}: ${signClientIp(opts.secret, clientIp)}`);
    }
    lines.push(`x-forwarded-host: ${req.headers.host ?? ''}`, 'x-forwarded-proto: http');
    const relay = tls
      ? tlsConnect({ host: base.hostname, port, servername: base.hostname })
      : netConnect({ host: base.hostname, port });
    let connected = false;
    relay.once(tls ? 'secureConnect' : 'connect', () => {
      connected = true;
      relay.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) relay.write(head);
      socket.pipe(relay);
      relay.pipe(socket);
    });
    relay.on('error', () => {
      if (!connected && socket.writable) {
        const body = JSON.stringify({
          error: {
            message: 'relay unavailable',
            type: 'switchyard_error',
            param: null,
            code: 'relay_unavailable',
          },
        });
        socket.end(
          `HTTP/1.1 502 Bad Gateway\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
      } else socket.destroy();
    });
    socket.on('error', () => relay.destroy());
    socket.on('close', () => relay.destroy());
    relay.on('close', () => socket.destroy());
    return true;
  };
}
