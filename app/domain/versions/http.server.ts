import { data } from '@remix-run/node';
import type { AppLoadContext } from '@remix-run/server-runtime';
import { Role } from '@switchyard/db/entities/user.ts';
import { authenticateApi, requireRole } from '#app/domain/auth/api-auth.server.ts';
import { requireUser } from '#app/domain/auth/session.server.ts';
import { clientIp } from '#app/domain/security/rate-limit.server.ts';
import type { VersionsCtx } from '#app/domain/versions/versions.server.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import { getServices } from '#app/services.server.ts';
import { envelope } from '#app/utils/envelope.server.ts';

/**
 * Transport glue of the admin version routes. JSON: authenticateApi + role >= admin (401 / 403), then the
 * handler; business and validation refusals answer HTTP 200 with success false (as new-api does).
 */
export function versionsApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: VersionsCtx) => Promise<Response>,
): Promise<Response> {
  return envelope(async () => {
    const services = getServices(context);
    const principal = await authenticateApi(request, services);
    requireRole(principal, Role.Admin);
    const ctx: VersionsCtx = {
      em: services.orm.em.fork(),
      actor: principal.user,
      t: await getFixedT(request),
      ip: clientIp(request, services).slice(0, 64),
    };
    return handler(ctx);
  });
}

/** Page guard: a signed-in user (else redirect to /login) who is an admin (else a 403 page). */
export async function versionsPageCtx(request: Request, context: AppLoadContext): Promise<VersionsCtx> {
  const services = getServices(context);
  const user = await requireUser(request, services);
  if (user.role < Role.Admin) throw data({ forbidden: true }, { status: 403 });
  return {
    em: services.orm.em.fork(),
    actor: user,
    t: await getFixedT(request),
    ip: clientIp(request, services).slice(0, 64),
  };
}

/** Public pages (/download): a forked EntityManager and `t`, no actor. */
export async function publicVersionsCtx(
  request: Request,
  context: AppLoadContext,
): Promise<Pick<VersionsCtx, 'em' | 't'>> {
  const services = getServices(context);
  return { em: services.orm.em.fork(), t: await getFixedT(request) };
}
