import type { AppLoadContext } from '@remix-run/server-runtime';
import { Role } from '@switchyard/db/entities/user.ts';
import { type DomainCtx, domainApi, domainPageCtx } from '#app/domain/http.server.ts';
import type { LogsCtx } from '#app/domain/logs/logs.server.ts';

/**
 * JSON routes (/api/log*): authenticateApi (401), then role >= admin for the admin calls (403). The self calls
 * need only a signed-in user; the domain functions scope them to the actor.
 */
export function logsApi(
  request: Request,
  context: AppLoadContext,
  access: { admin: boolean },
  handler: (ctx: LogsCtx) => Promise<Response>,
): Promise<Response> {
  return domainApi(request, context, access.admin ? { minRole: Role.Admin } : {}, handler);
}

/** Page guard: any signed-in user (else a redirect to /login); `admin` pages answer 403 to others. */
export function logsPageCtx(
  request: Request,
  context: AppLoadContext,
  access: { admin: boolean } = { admin: false },
): Promise<DomainCtx> {
  return domainPageCtx(request, context, access.admin ? { minRole: Role.Admin } : {});
}
