/**
 * The one transport glue for console use cases: who is asking (JSON: session + New-Api-User or the system
 * access token; pages: the session cookie), the role they need, and the per-request context every domain
 * function takes (a forked EntityManager, the actor, `t`, options, client IP).
 */
import { data } from '@remix-run/node';
import type { AppLoadContext } from '@remix-run/server-runtime';
import { type ApiPrincipal, authenticateApi, requireRole } from '#app/domain/auth/api-auth.server.ts';
import { requireUser, type SessionUser } from '#app/domain/auth/session.server.ts';
import type { RequestCtx } from '#app/domain/context.server.ts';
import { findNulText } from '#app/domain/input.ts';
import { clientIp } from '#app/domain/security/rate-limit.server.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import { type ConsoleServices, getServices } from '#app/services.server.ts';
import { envelope } from '#app/utils/envelope.server.ts';

/** RequestCtx with a signed-in actor and the client address (for audit rows). */
export type DomainCtx = Pick<RequestCtx, 'em' | 't' | 'options' | 'relay' | 'secrets'> & {
  actor: SessionUser;
  ip: string;
};

export type Access = { minRole?: number };

export async function buildDomainCtx(
  request: Request,
  services: ConsoleServices,
  actor: SessionUser,
): Promise<DomainCtx> {
  return {
    em: services.orm.em.fork(),
    actor,
    t: await getFixedT(request),
    options: services.options,
    relay: services.relay,
    secrets: services.secrets,
    ip: clientIp(request, services).slice(0, 64),
  };
}

/**
 * A JSON route: authenticate (401), check the role (403), build the ctx, run the handler inside the shared
 * envelope (refusals 200 + success false).
 */
export function domainApi(
  request: Request,
  context: AppLoadContext,
  access: Access,
  handler: (ctx: DomainCtx, principal: ApiPrincipal, services: ConsoleServices) => Promise<Response>,
): Promise<Response> {
  return envelope(async () => {
    const services = getServices(context);
    const principal = await authenticateApi(request, services);
    if (access.minRole) requireRole(principal, access.minRole);
    return handler(await buildDomainCtx(request, services, principal.user), principal, services);
  }, request);
}

/**
 * A page: a signed-in user (else a redirect to /login) with the role (else a 403 page), and the ctx. A query
 * string (list filters) with text the database cannot store (U+0000) is a 400 page: page loaders read their
 * filters by hand, so the input layer's check is made here once for all of them.
 */
export async function domainPageCtx(
  request: Request,
  context: AppLoadContext,
  access: Access,
): Promise<DomainCtx> {
  const services = getServices(context);
  const user = await requireUser(request, services);
  if (access.minRole && user.role < access.minRole) throw data({ forbidden: true }, { status: 403 });
  const ctx = await buildDomainCtx(request, services, user);
  const field = findNulText(Object.fromEntries(new URL(request.url).searchParams));
  if (field !== null)
    throw data({ badInput: true, field, message: ctx.t('common:errors.nulText') }, { status: 400 });
  return ctx;
}
