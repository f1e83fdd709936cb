/**
 * CORS for the model API (ADR 015): browser apps on any origin call the relay with a key, as new-api allows.
 * The relay honours no cookies, so any origin is allowed and `Access-Control-Allow-Credentials` is never sent.
 * Only model API paths get it (not /healthz, /readyz), and only requests that carry `Origin` pay for it:
 * SDKs and servers never send one, so the hot path costs one header lookup.
 */
import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';

/** The model API paths (the console forwards the same ones). */
const MODEL_API_PREFIXES = [
  '/v1/',
  '/v1beta/',
  '/mj/',
  '/mj-fast/mj/',
  '/mj-turbo/mj/',
  '/mj-relax/mj/',
  '/suno/',
  '/dashboard/billing/',
] as const;

export function isModelApiPath(pathname: string): boolean {
  if (pathname === '/v1' || pathname === '/v1beta') return true;
  return MODEL_API_PREFIXES.some((p) => pathname.startsWith(p));
}

export function modelApiCors(): MiddlewareHandler {
  const handler = cors({
    origin: '*',
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    // Allow-Headers echoes Access-Control-Request-Headers (Authorization, x-api-key, x-goog-api-key, ...).
    exposeHeaders: ['*'],
    maxAge: 86_400,
  });
  return (c, next) =>
    c.req.raw.headers.has('origin') && isModelApiPath(new URL(c.req.url).pathname)
      ? handler(c, next)
      : next();
}
