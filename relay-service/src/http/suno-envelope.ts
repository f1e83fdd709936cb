/**
 * The Suno paths and their error envelope (new-api's task error `{"code","message","data"}`), apart from the
 * front so the console's forwarding (envelopes.ts) can answer in it without loading the task services.
 */
import type { FrontError } from './fronts.ts';

export function isSunoPath(pathname: string): boolean {
  return pathname === '/suno' || pathname.startsWith('/suno/');
}

export function sunoError(e: { status: number; code: string; message: string }): Response {
  return Response.json({ code: e.code, message: e.message, data: null }, { status: e.status });
}

export function sunoFrontError(e: FrontError): Response {
  return sunoError({ status: e.status, code: String(e.code ?? e.type), message: e.message });
}
