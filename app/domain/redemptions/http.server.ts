import { data } from '@remix-run/node';
import type { AppLoadContext } from '@remix-run/server-runtime';
import { Role } from '@switchyard/db/entities/user.ts';
import { authenticateApi, requireRole } from '#app/domain/auth/api-auth.server.ts';
import { requireUser } from '#app/domain/auth/session.server.ts';
import { TooManyRequestsError } from '#app/domain/errors.ts';
import type { RedemptionsCtx } from '#app/domain/redemptions/redemptions.server.ts';
import {
  clientIp,
  DEFAULT_CRITICAL_LIMIT,
  enforceCriticalLimit,
  limiterOf,
} from '#app/domain/security/rate-limit.server.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import { type ConsoleServices, getServices } from '#app/services.server.ts';
import { envelope } from '#app/utils/envelope.server.ts';

/**
 * Transport glue of the redemption routes. Admin JSON (/api/redemption*): authenticateApi + role >= admin
 * (401 / 403), then the handler; refusals answer HTTP 200 with success false (as new-api does).
 */
export function redemptionsApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: RedemptionsCtx) => Promise<Response>,
): Promise<Response> {
  return envelope(async () => {
    const services = getServices(context);
    const principal = await authenticateApi(request, services);
    requireRole(principal, Role.Admin);
    return handler(await buildCtx(request, services, principal.user));
  });
}

async function buildCtx(
  request: Request,
  services: ConsoleServices,
  actor: RedemptionsCtx['actor'],
): Promise<RedemptionsCtx> {
  return {
    em: services.orm.em.fork(),
    actor,
    t: await getFixedT(request),
    options: services.options,
    ip: clientIp(request, services).slice(0, 64),
  };
}

/** Page guard: a signed-in user (else redirect to /login) who is an admin (else a 403 page). */
export async function redemptionsPageCtx(request: Request, context: AppLoadContext): Promise<RedemptionsCtx> {
  const services = getServices(context);
  const user = await requireUser(request, services);
  if (user.role < Role.Admin) throw data({ forbidden: true }, { status: 403 });
  return buildCtx(request, services, user);
}

/**
 * Redeem attempts are limited twice, against key guessing: per client IP (the critical limit's own `redeem`
 * bucket) and per user (the same numbers, whatever address the user comes from).
 */
export async function enforceRedeemLimit(
  request: Request,
  services: ConsoleServices,
  ctx: RedemptionsCtx,
): Promise<void> {
  await enforceCriticalLimit(request, services, 'redeem');
  const { max, windowSeconds } = services.auth?.criticalLimit ?? DEFAULT_CRITICAL_LIMIT;
  if (max <= 0 || !ctx.actor) return;
  const decision = await limiterOf(services).hit(
    `rl:critical:redeem-user:${ctx.actor.id}`,
    max,
    windowSeconds * 1000,
  );
  if (!decision.allowed)
    throw new TooManyRequestsError(
      ctx.t('redemptions:errors.tooManyRequests'),
      Math.ceil(decision.retryAfterMs / 1000),
    );
}

/**
 * Self-service JSON (POST /api/user/topup): authenticateApi (session + New-Api-User, or the system access
 * token) -> 401 when missing, then the redeem limits, then the handler. Any signed-in user may redeem.
 */
export function redeemApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: RedemptionsCtx) => Promise<Response>,
): Promise<Response> {
  return envelope(async () => {
    const services = getServices(context);
    const principal = await authenticateApi(request, services);
    const ctx = await buildCtx(request, services, principal.user);
    await enforceRedeemLimit(request, services, ctx);
    return handler(ctx);
  });
}
