/** Transport glue of the payment routes: the orders ctx (a DomainCtx plus the gateway env and mail). */
import type { AppLoadContext } from '@remix-run/server-runtime';
import { authTFor } from '#app/domain/auth/i18n.server.ts';
import type { DomainCtx } from '#app/domain/http.server.ts';
import { clientIp, limiterOf } from '#app/domain/security/rate-limit.server.ts';
import { type ConsoleServices, getServices } from '#app/services.server.ts';
import type { OrdersCtx, PaymentDeps } from './orders.server.ts';

export function ordersCtx(ctx: DomainCtx, services: ConsoleServices): OrdersCtx {
  return { ...ctx, payments: services.payments, mail: services };
}

/**
 * Notifies come from the gateways, not from a user: no session, logs in the default language. The source
 * address and the limiter bound the audit rows that refused (forged) notifications may write.
 */
export function notifyDeps(context: AppLoadContext, request: Request): PaymentDeps {
  const services = getServices(context);
  return {
    limiter: limiterOf(services),
    sourceIp: clientIp(request, services),
    em: services.orm.em.fork(),
    options: services.options,
    t: authTFor(),
    payments: services.payments,
    relay: services.relay,
    mail: services,
  };
}
