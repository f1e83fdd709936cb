/**
 * The console's JSON contract at its edge (issue 14, ADR 021): whatever the console answers under `/api` is the
 * envelope `{success:false, message}` when it is a refusal, never Remix's own replies.
 *
 * - OPTIONS is answered here, 204 without a body and without CORS headers: the console's `/api` is same-origin
 *   (a cross-origin preflight gets nothing to allow it, ADR 016), and Remix would otherwise run the route's GET
 *   loader for it, or log an error for a route with only an action.
 * - A path without a route reaches `routes/api.$.ts` (404 in the envelope).
 * - A method a route does not serve is refused by Remix's router itself (400 "no loader" for GET on an action-only
 *   route, 405 "no action"), as a JSON body marked `X-Remix-Error`; so is a thrown non-Response (500). Those are
 *   rewritten here into the envelope: 405 "method not allowed", or the generic 500 that reveals nothing.
 */
import type { MiddlewareHandler } from 'hono';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import { fail } from '#app/utils/envelope.server.ts';
import { isApiPath } from './csrf.ts';

export function apiContract(): MiddlewareHandler {
  return async (c, next) => {
    if (!isApiPath(new URL(c.req.url).pathname)) return next();
    if (c.req.method === 'OPTIONS') return new Response(null, { status: 204 });
    await next();
    if (c.res.headers.get('X-Remix-Error') !== 'yes') return;
    const t = await getFixedT(c.req.raw);
    const status = c.res.status;
    await c.res.body?.cancel();
    c.res = undefined;
    c.res =
      status === 400 || status === 405
        ? fail(t('common:errors.methodNotAllowed'), 405)
        : status === 404
          ? fail(t('common:errors.apiNotFound'), 404)
          : fail(t('common:errors.internal'), 500);
  };
}
