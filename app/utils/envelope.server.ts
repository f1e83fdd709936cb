import { isDomainError } from '#app/domain/errors.ts';

/** The seeds' JSON contract: every /api response is `{ success, message, data }`. */
export type Envelope<T> = { success: boolean; message: string; data: T };

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

function withHeaders(init?: ResponseInit): Headers {
  const headers = new Headers(init?.headers);
  for (const [k, v] of Object.entries(JSON_HEADERS)) if (!headers.has(k)) headers.set(k, v);
  return headers;
}

export function ok<T>(data: T, message = '', init?: ResponseInit): Response {
  const body: Envelope<T> = { success: true, message, data };
  return new Response(JSON.stringify(body), {
    ...init,
    status: init?.status ?? 200,
    headers: withHeaders(init),
  });
}

export function fail(message: string, status = 400, init?: ResponseInit & { data?: unknown }): Response {
  const body: Envelope<unknown> = { success: false, message, data: init?.data ?? null };
  return new Response(JSON.stringify(body), { ...init, status, headers: withHeaders(init) });
}

/**
 * Maps a thrown value to an envelope. Typed domain errors become their 4xx; a thrown Response
 * (redirect, an explicit reply) passes through; anything else is logged and becomes a generic 500.
 */
export function toHttpResponse(error: unknown): Response {
  if (error instanceof Response) return error;
  if (isDomainError(error)) {
    const data = 'fieldErrors' in error ? { fieldErrors: error.fieldErrors } : undefined;
    return fail(error.message, error.status, data ? { data } : undefined);
  }
  console.error(error);
  return fail('internal server error', 500);
}

/** Runs an /api handler and maps anything it throws. Use in every `routes/api.*.ts` loader and action. */
export async function envelope(handler: () => Promise<Response> | Response): Promise<Response> {
  try {
    return await handler();
  } catch (error) {
    return toHttpResponse(error);
  }
}
