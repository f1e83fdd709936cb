/**
 * One origin for users (ARCHITECTURE.md §1): when the console is reached directly (locally, or without an
 * Ingress that splits traffic), the model API paths are forwarded to the relay unchanged and streamed back.
 */

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

// Hop-by-hop headers (RFC 9110 §7.6.1) are not forwarded.
const HOP_BY_HOP = new Set([
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
