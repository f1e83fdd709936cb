/**
 * One origin for users (ARCHITECTURE.md §1): when the console is reached directly (locally, or without an
 * Ingress that splits traffic), the model API paths are forwarded to the relay unchanged and streamed back.
 */
// Not /pg/: the playground is served by the console itself (session auth, ADR 008).
export const RELAY_PATH_PREFIXES = ['/v1/', '/v1beta/', '/mj/', '/suno/', '/dashboard/billing/'] as const;

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

export function createRelayProxy(relayUrl: string) {
  const base = new URL(relayUrl);
  return async function proxy(request: Request, clientIp?: string): Promise<Response> {
    const incoming = new URL(request.url);
    const target = new URL(incoming.pathname + incoming.search, base);
    const headers = new Headers();
    for (const [k, v] of request.headers) if (!HOP_BY_HOP.has(k)) headers.set(k, v);
    if (clientIp) {
      const prior = request.headers.get('x-forwarded-for');
      headers.set('x-forwarded-for', prior ? `${prior}, ${clientIp}` : clientIp);
    }
    headers.set('x-forwarded-host', incoming.host);
    headers.set('x-forwarded-proto', incoming.protocol.replace(':', ''));
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    try {
      const upstream = await fetch(target, {
        method: request.method,
        headers,
        body: hasBody ? request.body : null,
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
      if (request.signal.aborted) return new Response(null, { status: 499 });
      const message = `relay unavailable: ${(err as Error).message}`;
      return Response.json(
        { error: { message, type: 'switchyard_error', param: null, code: 'relay_unavailable' } },
        { status: 502 },
      );
    }
  };
}
