import type { AppLoadContext } from '@remix-run/server-runtime';
import type { ApiPrincipal } from '#app/domain/auth/api-auth.server.ts';
import { currentSessionId } from '#app/domain/auth/session.server.ts';
import { domainApi } from '#app/domain/http.server.ts';

import type { AccountCtx } from './account.server.ts';

/** Self-service /api/user/* routes: any signed-in user (session + New-Api-User, or the system access token). */
export function accountApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: AccountCtx, principal: ApiPrincipal) => Promise<Response>,
): Promise<Response> {
  return domainApi(request, context, {}, handler);
}

/** The session this request came with (kept on password change), or undefined for access-token calls. */
export async function keptSessionId(request: Request, principal: ApiPrincipal): Promise<string | undefined> {
  return principal.via === 'session' ? ((await currentSessionId(request)) ?? undefined) : undefined;
}
