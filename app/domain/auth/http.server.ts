import type { AppLoadContext } from '@remix-run/server-runtime';
import { type ConsoleServices, getServices } from '#app/services.server.ts';
import { envelope } from '#app/utils/envelope.server.ts';

/** Transport glue of the auth JSON routes: the services, then the shared envelope and status mapping. */
export function authApi(
  context: AppLoadContext,
  handler: (services: ConsoleServices) => Promise<Response>,
): Promise<Response> {
  return envelope(() => handler(getServices(context)));
}

/** Keeps only string values (a JSON number where a string is expected becomes its text). */
export function stringFields(body: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) {
    if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'number' && Number.isFinite(v)) out[k] = String(v);
  }
  return out;
}
