/**
 * Cross-origin protection of the console (ARCHITECTURE.md §6, ADR 016): one middleware in front of everything
 * the console serves, so every way a browser can reach a state-changing handler is judged once: document form
 * posts, Remix single-fetch `.data` posts, legacy `?_data=` posts (which Remix's own origin check skips) and the
 * JSON API with a cookie session.
 *
 * The rule (`isSameOriginRequest`), for any method other than GET, HEAD and OPTIONS:
 * 1. relay paths (/v1, /v1beta, /mj, /suno, /dashboard/billing) are not judged: the relay honours no cookies;
 * 2. `/api/*` with an `Authorization` header is allowed: the JSON contract then authenticates by the system
 *    access token alone and ignores the cookie (api-auth.server.ts), and a page on another origin cannot add
 *    that header without a CORS preflight, which the console never grants;
 * 3. `Sec-Fetch-Site: same-origin` (or `none`, a request the user typed) is allowed: browsers set it and pages
 *    cannot forge it;
 * 4. an `Origin` in TRUSTED_ORIGINS is allowed (sibling origins or a public host the console cannot see);
 * 5. any other `Sec-Fetch-Site` (same-site, cross-site) is refused;
 * 6. without `Sec-Fetch-Site` (browsers before 2023), an `Origin` is allowed only when its host is the request's
 *    Host (or, with TRUST_PROXY, the proxy's X-Forwarded-Host); `Origin: null` is refused;
 * 7. with neither header the request is allowed: every browser sends at least one of them on a cross-origin
 *    POST, so such a request comes from a program (curl, an SDK), which cannot ride a victim's cookies.
 *
 * A refusal is a 403 in the caller's envelope: `{success:false,message}` under /api, a JSON body Remix treats
 * as a thrown response for `?_data=`, a turbo-stream `ErrorResponse` for single fetch, a small page otherwise.
 */
import type { MiddlewareHandler } from 'hono';
// Remix's own single-fetch wire format (a dependency of @remix-run/server-runtime, pinned by it).
import { encode as encodeTurboStream } from 'turbo-stream';
import { getFixedT, getLocale } from '#app/i18n/i18n.server.ts';
import { fail } from '#app/utils/envelope.server.ts';
import { isRelayPath } from './relay-proxy.ts';

export type OriginPolicy = {
  /** Normalised origins (`scheme://host[:port]`) allowed besides the console's own (TRUSTED_ORIGINS). */
  trustedOrigins: readonly string[];
  /** TRUST_PROXY is set (any value but false / 0): the proxy in front sets X-Forwarded-Host to the public host. */
  trustProxy: boolean;
};

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isApiPath(pathname: string): boolean {
  return pathname === '/api' || pathname.startsWith('/api/');
}

function originOf(value: string): URL | null {
  if (value === 'null') return null;
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/** The hosts this request was addressed to: Host, plus the first X-Forwarded-Host behind a trusted proxy. */
function ownHosts(request: Request, policy: OriginPolicy): string[] {
  const hosts = [(request.headers.get('host') ?? new URL(request.url).host).toLowerCase()];
  if (policy.trustProxy) {
    const forwarded = request.headers.get('x-forwarded-host')?.split(',')[0]?.trim().toLowerCase();
    if (forwarded) hosts.push(forwarded);
  }
  return hosts;
}

/** The decision of the module comment; true lets the request through. */
export function isSameOriginRequest(request: Request, policy: OriginPolicy): boolean {
  if (SAFE_METHODS.has(request.method.toUpperCase())) return true;
  const { pathname } = new URL(request.url);
  if (isRelayPath(pathname)) return true;
  if (isApiPath(pathname) && request.headers.get('authorization')?.trim()) return true;
  const site = request.headers.get('sec-fetch-site')?.trim().toLowerCase();
  if (site === 'same-origin' || site === 'none') return true;
  const originHeader = request.headers.get('origin');
  const origin = originHeader === null ? null : originOf(originHeader.trim());
  if (origin && policy.trustedOrigins.includes(origin.origin)) return true;
  if (site !== undefined) return false;
  if (originHeader === null) return true;
  return origin !== null && ownHosts(request, policy).includes(origin.host);
}

/**
 * Remix's document and single-fetch actions (not resource routes such as /api) compare `Origin` with Host / X-Forwarded-Host themselves and throw
 * (a 500) on a mismatch. Once this module has allowed a request (a trusted origin, or a browser's
 * `Sec-Fetch-Site: same-origin` behind a proxy that rewrites Host), that narrower check must not contradict it.
 */
function withoutForeignOrigin(request: Request): Request {
  const origin = request.headers.get('origin');
  if (origin === null) return request;
  const host =
    request.headers.get('x-forwarded-host')?.split(',')[0]?.trim() ?? request.headers.get('host') ?? '';
  if (originOf(origin)?.host === host) return request;
  try {
    request.headers.delete('origin');
    return request;
  } catch {
    const headers = new Headers(request.headers);
    headers.delete('origin');
    return new Request(request, { headers, duplex: 'half' } as RequestInit);
  }
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? '&#39;');

/** The 403 in the envelope the caller expects (see the module comment). */
export async function crossOriginRefusal(request: Request): Promise<Response> {
  const t = await getFixedT(request);
  return refusalFor(request, 403, t('common:errors.crossOrigin'), {
    Vary: 'Origin, Sec-Fetch-Site',
  });
}

/**
 * A refusal made in front of Remix, in the envelope the caller expects: `{success:false,message}` under /api,
 * a thrown response for `?_data=`, a turbo-stream `ErrorResponse` for single fetch (`.data`, the route's error
 * boundary shows it), a small page for a document request. Shared with server/page-input.ts.
 */
export async function refusalFor(
  request: Request,
  status: 400 | 403,
  message: string,
  extraHeaders: Record<string, string> = {},
): Promise<Response> {
  const t = await getFixedT(request);
  const headers = { 'Cache-Control': 'no-store', ...extraHeaders };
  const url = new URL(request.url);
  if (isApiPath(url.pathname)) return fail(message, status, { headers });
  if (url.searchParams.has('_data')) {
    // What Remix answers a `?_data=` request whose action threw `json({message}, status)`.
    return Response.json({ message }, { status, headers: { ...headers, 'X-Remix-Catch': 'yes' } });
  }
  const statusText = status === 403 ? 'Forbidden' : 'Bad Request';
  if (url.pathname.endsWith('.data')) {
    // A single-fetch action result `{ error: ErrorResponse(status) }`, encoded as Remix's server does.
    const refusal = { status, statusText, data: { message } };
    const body = encodeTurboStream(
      { error: refusal },
      {
        plugins: [
          (value: unknown) =>
            value === refusal
              ? ['ErrorResponse', refusal.data, refusal.status, refusal.statusText]
              : undefined,
        ],
      },
    );
    return new Response(body, {
      status,
      headers: { ...headers, 'Content-Type': 'text/x-script', 'X-Remix-Response': 'yes' },
    });
  }
  const lang = (await getLocale(request)) === 'en' ? 'en' : 'zh-CN';
  const title = escapeHtml(t('common:errors.crossOriginTitle'));
  const html = `<!DOCTYPE html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title></head><body><main><h1>${title}</h1><p role="alert">${escapeHtml(message)}</p><p><a href="/">${escapeHtml(t('common:nav.home'))}</a></p></main></body></html>`;
  return new Response(html, {
    status,
    headers: { ...headers, 'Content-Type': 'text/html; charset=utf-8' },
  });
}

/** The Hono middleware: refuses what `isSameOriginRequest` refuses, lets the rest through. */
export function crossOriginGuard(policy: OriginPolicy): MiddlewareHandler {
  return async (c, next) => {
    if (!isSameOriginRequest(c.req.raw, policy)) return crossOriginRefusal(c.req.raw);
    const { pathname } = new URL(c.req.url);
    if (!SAFE_METHODS.has(c.req.method) && !isRelayPath(pathname) && !isApiPath(pathname))
      c.req.raw = withoutForeignOrigin(c.req.raw);
    await next();
  };
}
