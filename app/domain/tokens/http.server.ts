import type { AppLoadContext } from '@remix-run/server-runtime';
import { domainApi, domainPageCtx } from '#app/domain/http.server.ts';
import type { TokensCtx } from './tokens.server.ts';

/** JSON routes of /api/token*: any signed-in user (session + New-Api-User, or the system access token). */
export function tokensApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: TokensCtx) => Promise<Response>,
): Promise<Response> {
  return domainApi(request, context, {}, handler);
}

/** Page guard of /token*: any signed-in user (else a redirect to /login). */
export function tokensPageCtx(request: Request, context: AppLoadContext): Promise<TokensCtx> {
  return domainPageCtx(request, context, {});
}

/** A route param as a positive id, else 0 (NotFound downstream). */
export function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}
