import type { AppLoadContext } from '@remix-run/server-runtime';
import { Role } from '@switchyard/db/entities/user.ts';
import type { ChannelsCtx } from '#app/domain/channels/channels.server.ts';
import { domainApi, domainPageCtx } from '#app/domain/http.server.ts';

/** Admin JSON routes (/api/channel*): authenticateApi + role >= admin (401 / 403), then the handler. */
export function channelsApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: ChannelsCtx) => Promise<Response>,
): Promise<Response> {
  return domainApi(request, context, { minRole: Role.Admin }, handler);
}

/** Page guard: a signed-in user (else redirect to /login) who is an admin (else a 403 page). */
export function channelsPageCtx(request: Request, context: AppLoadContext) {
  return domainPageCtx(request, context, { minRole: Role.Admin });
}

export function parseId(value: string | null | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}

export function queryOf(request: Request): Record<string, string> {
  return Object.fromEntries(new URL(request.url).searchParams);
}
