import type { AppLoadContext } from '@remix-run/server-runtime';
import { type ApiPrincipal, authenticateApi } from '#app/domain/auth/api-auth.server.ts';
import { currentSessionId } from '#app/domain/auth/session.server.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import { getServices } from '#app/services.server.ts';
import { envelope, fail } from '#app/utils/envelope.server.ts';

import type { AccountCtx } from './account.server.ts';

/**
 * Transport glue of the self-service /api/user/* routes: authenticateApi (session + New-Api-User, or the
 * system access token) -> 401 when missing; business and validation refusals answer HTTP 200 with
 * success false (as new-api does).
 */
export function accountApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: AccountCtx, principal: ApiPrincipal) => Promise<Response>,
): Promise<Response> {
  return envelope(async () => {
    const services = getServices(context);
    const principal = await authenticateApi(request, services);
    const ctx: AccountCtx = {
      em: services.orm.em.fork(),
      actor: principal.user,
      t: await getFixedT(request),
      options: services.options,
    };
    return handler(ctx, principal);
  });
}

/** The session this request came with (kept on password change), or undefined for access-token calls. */
export async function keptSessionId(request: Request, principal: ApiPrincipal): Promise<string | undefined> {
  return principal.via === 'session' ? ((await currentSessionId(request)) ?? undefined) : undefined;
}

export function methodNotAllowed(allow: string): Response {
  return fail('method not allowed', 405, { headers: { Allow: allow } });
}
