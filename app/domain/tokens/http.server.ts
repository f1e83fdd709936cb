import type { AppLoadContext } from '@remix-run/server-runtime';
import { authenticateApi } from '#app/domain/auth/api-auth.server.ts';
import { requireUser } from '#app/domain/auth/session.server.ts';
import { clientIp } from '#app/domain/security/rate-limit.server.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import { getServices } from '#app/services.server.ts';
import { envelope, fail } from '#app/utils/envelope.server.ts';
import type { TokensCtx } from './tokens.server.ts';

/**
 * Transport glue of /api/token*: authenticateApi (session + New-Api-User, or the system access token) -> 401
 * when missing; business and validation refusals answer HTTP 200 with success false (as new-api does).
 */
export function tokensApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: TokensCtx) => Promise<Response>,
): Promise<Response> {
  return envelope(async () => {
    const services = getServices(context);
    const principal = await authenticateApi(request, services);
    const ctx: TokensCtx = {
      em: services.orm.em.fork(),
      actor: principal.user,
      t: await getFixedT(request),
      options: services.options,
      ip: clientIp(request, services).slice(0, 64),
    };
    return handler(ctx);
  });
}

/** Page guard of /token*: any signed-in user (else a redirect to /login). */
export async function tokensPageCtx(request: Request, context: AppLoadContext): Promise<TokensCtx> {
  const services = getServices(context);
  const user = await requireUser(request, services);
  return {
    em: services.orm.em.fork(),
    actor: user,
    t: await getFixedT(request),
    options: services.options,
    ip: clientIp(request, services).slice(0, 64),
  };
}

export function methodNotAllowed(allow: string): Response {
  return fail('method not allowed', 405, { headers: { Allow: allow } });
}

/** A route param as a positive id, else 0 (NotFound downstream). */
export function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}
