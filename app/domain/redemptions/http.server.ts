import type { AppLoadContext } from '@remix-run/server-runtime';
import { Role } from '@switchyard/db/entities/user.ts';
import { TooManyRequestsError } from '#app/domain/errors.ts';
import { domainApi, domainPageCtx } from '#app/domain/http.server.ts';
import type { RedemptionsCtx } from '#app/domain/redemptions/redemptions.server.ts';
import {
  DEFAULT_CRITICAL_LIMIT,
  enforceCriticalLimit,
  limiterOf,
} from '#app/domain/security/rate-limit.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

/** Admin JSON routes (/api/redemption*): authenticateApi + role >= admin (401 / 403), then the handler. */
export function redemptionsApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: RedemptionsCtx) => Promise<Response>,
): Promise<Response> {
  return domainApi(request, context, { minRole: Role.Admin }, handler);
}

/** Page guard: a signed-in user (else redirect to /login) who is an admin (else a 403 page). */
export function redemptionsPageCtx(request: Request, context: AppLoadContext): Promise<RedemptionsCtx> {
  return domainPageCtx(request, context, { minRole: Role.Admin });
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
  return domainApi(request, context, {}, async (ctx, _principal, services) => {
    await enforceRedeemLimit(request, services, ctx);
    return handler(ctx);
  });
}
