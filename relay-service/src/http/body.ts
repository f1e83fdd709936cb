/**
 * Request body bounds of the relay (ADR 015): a byte limit counted as the bytes arrive, whatever the framing
 * (`Content-Length` or chunked), and a JSON nesting limit. Both answer in the envelope of the route's front.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { FrontError } from './fronts.ts';

/** Default of RELAY_MAX_BODY_BYTES: images and audio in a request can be large. */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

/**
 * Deepest JSON nesting accepted. Real requests stay far below (JSON schemas of tools are the deepest, a few
 * dozen levels); recursive code downstream (serialisers, token counting, bridges) is safe well above it.
 */
export const MAX_JSON_DEPTH = 128;

/** True when `value` nests objects/arrays deeper than `max` levels (the top level counts as one). */
export function jsonTooDeep(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max <= 0) return true;
  if (Array.isArray(value)) {
    for (const v of value) if (typeof v === 'object' && v !== null && jsonTooDeep(v, max - 1)) return true;
    return false;
  }
  for (const k in value) {
    const v = (value as Record<string, unknown>)[k];
    if (typeof v === 'object' && v !== null && jsonTooDeep(v, max - 1)) return true;
  }
  return false;
}

export const jsonTooDeepMessage = (max: number = MAX_JSON_DEPTH) =>
  `the request body nests JSON deeper than ${max} levels`;

export const bodyTooLargeMessage = (maxBytes: number) => `request body too large (limit ${maxBytes} bytes)`;

/**
 * Refuses bodies over `maxBytes` with 413 in the route's envelope. A declared `Content-Length` is compared up
 * front (Node's parser then delivers exactly that many bytes); a body without one (chunked, or HTTP/2) goes
 * through hono's bodyLimit, which counts the chunks as they arrive and buffers at most `maxBytes`, so it is cut
 * off at the limit instead of read whole. The answer closes the connection: the rest of the upload is never
 * read.
 *
 * The declared-length path touches only the headers: on @hono/node-server, reading `request.body` builds a
 * whole web Request and stream and loses the direct read that `json()` takes otherwise (measured: the relay's
 * CPU per call more than doubled in the bench when every request went through hono's bodyLimit).
 */
export function limitBodies(
  maxBytes: number,
  errorFor: (pathname: string) => (e: FrontError) => Response,
): MiddlewareHandler {
  const tooLarge = (c: Context) => {
    const res = errorFor(new URL(c.req.url).pathname)({
      status: 413,
      message: bodyTooLargeMessage(maxBytes),
      type: 'invalid_request_error',
      code: 'request_too_large',
    });
    res.headers.set('connection', 'close');
    return res;
  };
  const counting = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return (c, next) => {
    const { method, headers } = c.req.raw;
    if (method === 'GET' || method === 'HEAD') return next();
    const declared = headers.get('content-length');
    if (declared !== null && !headers.has('transfer-encoding'))
      return Number(declared) > maxBytes ? Promise.resolve(tooLarge(c)) : next();
    return counting(c, next);
  };
}
