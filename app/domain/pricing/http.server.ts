import type { AppLoadContext } from '@remix-run/server-runtime';
import { Role } from '@switchyard/db/entities/user.ts';
import { authenticateApi } from '#app/domain/auth/api-auth.server.ts';
import { getSessionUser, type SessionUser } from '#app/domain/auth/session.server.ts';
import { type DomainCtx, domainApi } from '#app/domain/http.server.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import { type ConsoleServices, getServices } from '#app/services.server.ts';
import { envelope } from '#app/utils/envelope.server.ts';
import type { PricingCtx } from './pricing.server.ts';

/**
 * Who views the public pricing: a caller that names itself (New-Api-User or an access token) is authenticated
 * as any /api caller (401 on a mismatch); otherwise the session cookie, if any; otherwise a visitor (null).
 */
async function viewer(
  request: Request,
  services: ConsoleServices,
  api: boolean,
): Promise<SessionUser | null> {
  if (api && (request.headers.has('Authorization') || request.headers.has('New-Api-User')))
    return (await authenticateApi(request, services)).user;
  return getSessionUser(request, services);
}

export async function pricingCtx(
  request: Request,
  context: AppLoadContext,
  api: boolean,
): Promise<PricingCtx> {
  const services = getServices(context);
  return {
    em: services.orm.em.fork(),
    options: services.options,
    actor: await viewer(request, services, api),
    t: await getFixedT(request),
  };
}

/** A public JSON route (visitors allowed), inside the shared envelope. */
export function publicPricingApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: PricingCtx) => Promise<Response>,
): Promise<Response> {
  return envelope(async () => handler(await pricingCtx(request, context, true)));
}

/** An admin JSON route (401 / 403 as every admin call). */
export function adminPricingApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: DomainCtx, services: ConsoleServices) => Promise<Response>,
): Promise<Response> {
  return domainApi(request, context, { minRole: Role.Admin }, (ctx, _p, services) => handler(ctx, services));
}

/** A signed-in JSON route (401 otherwise). */
export function userPricingApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: DomainCtx) => Promise<Response>,
): Promise<Response> {
  return domainApi(request, context, {}, (ctx) => handler(ctx));
}
