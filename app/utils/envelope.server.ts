import { DriverException } from '@mikro-orm/core';
import type { TFunction } from 'i18next';
import { ZodError } from 'zod';
import { InputError, isDomainError, TooManyRequestsError } from '#app/domain/errors.ts';
import { refuseUnstorableText } from '#app/domain/validation.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';

/** The seeds' JSON contract: every /api response is `{ success, message, data }`. */
export type Envelope<T> = { success: boolean; message: string; data: T };

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

function withHeaders(init?: ResponseInit): Headers {
  const headers = new Headers(init?.headers);
  for (const [k, v] of Object.entries(JSON_HEADERS)) if (!headers.has(k)) headers.set(k, v);
  return headers;
}

/**
 * Top-level members beside the envelope's three, where new-api's client reads a value there (`time` of a
 * channel test, `balance` of a balance update): the envelope keys always win.
 */
export type ExtraFields = Record<string, unknown>;

export function ok<T>(data: T, message = '', init?: ResponseInit & { fields?: ExtraFields }): Response {
  const body: Envelope<T> = { ...init?.fields, success: true, message, data };
  return new Response(JSON.stringify(body), {
    ...init,
    status: init?.status ?? 200,
    headers: withHeaders(init),
  });
}

export function fail(
  message: string,
  status = 400,
  init?: ResponseInit & { data?: unknown; fields?: ExtraFields },
): Response {
  const body: Envelope<unknown> = { ...init?.fields, success: false, message, data: init?.data ?? null };
  return new Response(JSON.stringify(body), { ...init, status, headers: withHeaders(init) });
}

/** HTTP statuses that keep their meaning in the JSON contract; every other refusal is HTTP 200. */
const TRANSPORT_STATUSES = new Set([401, 403, 405, 429]);

/**
 * Maps a thrown value to an envelope, the one place that decides statuses for every /api route:
 * - authentication (401), role (403) and rate-limit (429, with Retry-After) errors keep their status, so the
 *   shared client handling of seed 000 §8 can act on them;
 * - business and validation refusals (InputError, NotFoundError, ...) answer HTTP 200 with success false and
 *   the message, as new-api does; an InputError carries `data.fieldErrors` (possibly empty);
 * - a ZodError that escaped a parser, or a PostgreSQL data exception (SQLSTATE class 22: a value out of a
 *   column's range or type), is bad input too: refused like an InputError, never a 500;
 * - a thrown Response (redirect, explicit reply) passes through; anything else is logged and becomes a
 *   generic 500 that reveals nothing.
 */
export function toHttpResponse(error: unknown, t?: TFunction): Response {
  if (error instanceof Response) return error;
  if (isBadInput(error)) {
    const message = t ? t('common:errors.invalidInput') : 'invalid input';
    const fieldErrors =
      error instanceof ZodError
        ? Object.fromEntries(error.issues.map((i) => [i.path.join('.') || '_', [i.message]]))
        : {};
    return fail(message, 200, { data: { fieldErrors } });
  }
  if (isDomainError(error)) {
    const data = error instanceof InputError ? { fieldErrors: error.fieldErrors } : undefined;
    const headers =
      error instanceof TooManyRequestsError && error.retryAfter
        ? { 'Retry-After': String(error.retryAfter) }
        : undefined;
    const status = TRANSPORT_STATUSES.has(error.status) ? error.status : 200;
    return fail(error.message, status, { ...(data ? { data } : {}), ...(headers ? { headers } : {}) });
  }
  console.error(error);
  return fail('internal server error', 500);
}

/** 405 with the allowed methods. */
export function methodNotAllowed(allow: string): Response {
  return fail('method not allowed', 405, { headers: { Allow: allow } });
}

/**
 * A ZodError, or SQLSTATE class 22 (data exception: out of range, invalid text representation, too long): the
 * database refused a value, so the input was bad. MikroORM wraps driver errors of entity queries in a
 * DriverException; raw queries (`connection.execute`) throw the pg driver's DatabaseError (an Error with the
 * SQLSTATE in `code` and a `severity`).
 */
function isBadInput(error: unknown): boolean {
  if (error instanceof ZodError) return true;
  if (!(error instanceof Error)) return false;
  const fromDriver = error instanceof DriverException || 'severity' in error;
  const code = (error as { code?: unknown }).code;
  return fromDriver && typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
}

/**
 * Runs an /api handler and maps anything it throws. Use in every `routes/api.*.ts` loader and action; with the
 * request, refusals of bad input are in the caller's language.
 */
export async function envelope(
  handler: () => Promise<Response> | Response,
  request?: Request,
): Promise<Response> {
  try {
    return await handler();
  } catch (error) {
    return toHttpResponse(error, request && isBadInput(error) ? await getFixedT(request) : undefined);
  }
}

/**
 * Reads a request body as an object: JSON, or form-encoded (string fields only). An empty, malformed or
 * non-object body is `{}`, so validation reports what is missing instead of the parser failing. Text the
 * database cannot store (U+0000, in any field or key) is refused here as an InputError, so a route that reads a
 * field without a schema cannot send it to PostgreSQL either.
 */
export async function readBody(request: Request): Promise<Record<string, unknown>> {
  const body = await parseBody(request);
  refuseUnstorableText(await getFixedT(request), body);
  return body;
}

async function parseBody(request: Request): Promise<Record<string, unknown>> {
  const type = request.headers.get('Content-Type') ?? '';
  try {
    if (type.includes('application/x-www-form-urlencoded') || type.includes('multipart/form-data')) {
      const form = await request.formData();
      return Object.fromEntries([...form.entries()].filter(([, v]) => typeof v === 'string'));
    }
    const text = await request.text();
    if (!text.trim()) return {};
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
