import type { AppLoadContext } from '@remix-run/server-runtime';
import { Role } from '@switchyard/db/entities/user.ts';
import { domainApi, domainPageCtx } from '#app/domain/http.server.ts';
import type { VersionsCtx } from '#app/domain/versions/versions.server.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import { getServices } from '#app/services.server.ts';

/** Admin JSON routes of the versions area: authenticateApi + role >= admin (401 / 403), then the handler. */
export function versionsApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: VersionsCtx) => Promise<Response>,
): Promise<Response> {
  return domainApi(request, context, { minRole: Role.Admin }, handler);
}

/** Page guard: a signed-in user (else redirect to /login) who is an admin (else a 403 page). */
export function versionsPageCtx(request: Request, context: AppLoadContext): Promise<VersionsCtx> {
  return domainPageCtx(request, context, { minRole: Role.Admin });
}

/** Public pages (/download): a forked EntityManager and `t`, no actor. */
export async function publicVersionsCtx(
  request: Request,
  context: AppLoadContext,
): Promise<Pick<VersionsCtx, 'em' | 't'>> {
  const services = getServices(context);
  return { em: services.orm.em.fork(), t: await getFixedT(request) };
}
