/**
 * Request body bounds of the relay (ADR 015): a byte limit counted as the bytes arrive, whatever the framing
 * (`Content-Length` or chunked), and a JSON nesting limit. Both answer in the envelope of the route's front.
 */
import type { MiddlewareHandler } from 'hono';
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
 * Refuses bodies over `maxBytes` with 413 in the route's envelope. hono's bodyLimit checks a declared
 * Content-Length up front and otherwise counts the chunks as they arrive, buffering at most `maxBytes`, so a
 * chunked body is cut off at the limit instead of read whole. The answer closes the connection: the rest of
 * the upload is never read.
 */
export function limitBodies(
  maxBytes: number,
  errorFor: (pathname: string) => (e: FrontError) => Response,
): MiddlewareHandler {
  return bodyLimit({
    maxSize: maxBytes,
    onError: (c) => {
      const res = errorFor(new URL(c.req.url).pathname)({
        status: 413,
        message: bodyTooLargeMessage(maxBytes),
        type: 'invalid_request_error',
        code: 'request_too_large',
      });
      res.headers.set('connection', 'close');
      return res;
    },
  });
}
