import type { AppLoadContext } from '@remix-run/server-runtime';
import { Role } from '@switchyard/db/entities/user.ts';
import { domainApi, domainPageCtx } from '#app/domain/http.server.ts';
import type { UsersCtx } from '#app/domain/users/users.server.ts';

/** Admin JSON routes of the users area: authenticateApi + role >= admin (401 / 403), then the handler. */
export function usersApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: UsersCtx) => Promise<Response>,
): Promise<Response> {
  return domainApi(request, context, { minRole: Role.Admin }, handler);
}

/** Page guard: a signed-in user (else redirect to /login) who is an admin (else a 403 page). */
export function usersPageCtx(request: Request, context: AppLoadContext): Promise<UsersCtx> {
  return domainPageCtx(request, context, { minRole: Role.Admin });
}
