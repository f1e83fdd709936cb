/**
 * The input layer's rule (app/domain/input.ts) for every page form, once, in front of Remix (ADR 038): page
 * actions read `request.formData()` by hand, so a NUL byte reached PostgreSQL (500) and a line break in
 * `redirectTo` reached the `Location` header (500). A form post (urlencoded or multipart; document, `.data` or
 * `?_data=`) holding such text is refused here with a 400 naming the field, in the caller's envelope, before
 * any action runs. /api routes go through `parseInput`/`readBody`, which apply the same rule; the relay paths
 * never come here.
 */
import type { MiddlewareHandler } from 'hono';
import { findUnsafeText } from '#app/domain/input.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import { isApiPath, refusalFor } from './csrf.ts';

const FORM_TYPE = /^\s*(application\/x-www-form-urlencoded|multipart\/form-data)\b/i;

/** The 400 for a page form that the input layer refuses, or null when the form passes (or is not a form). */
export async function pageInputRefusal(request: Request): Promise<Response | null> {
  if (request.method === 'GET' || request.method === 'HEAD' || !request.body) return null;
  if (isApiPath(new URL(request.url).pathname)) return null;
  if (!FORM_TYPE.test(request.headers.get('content-type') ?? '')) return null;
  let form: FormData;
  try {
    form = await request.clone().formData();
  } catch {
    return null; // A malformed body is the action's to refuse, as before.
  }
  const unsafe = findUnsafeText(form);
  if (!unsafe) return null;
  const t = await getFixedT(request);
  const message = t('common:errors.badField', {
    field: unsafe.field,
    message: t(unsafe.problem === 'nul' ? 'common:errors.nulText' : 'common:errors.singleLine'),
    interpolation: { escapeValue: false },
  });
  return refusalFor(request, 400, message);
}

/** Mount after the body limit (the form is read whole, within MAX_BODY_BYTES) and before Remix. */
export function pageInputGuard(): MiddlewareHandler {
  return async (c, next) => {
    const refusal = await pageInputRefusal(c.req.raw);
    if (refusal) return refusal;
    await next();
  };
}
