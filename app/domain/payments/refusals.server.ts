/**
 * The record of refused payment notifications (ADR 038). Every refusal is answered as before, but its audit row
 * and console warning are rate-limited: anyone can post forged notifications to the notify URLs, and one row per
 * request let a flood grow `audit_entries` (and the log) without bound.
 *
 * Per gateway and window: at most PER_SOURCE rows for one source address and TOTAL rows in all (so many
 * addresses cannot multiply the bound), then ONE summary row `order.payment.refused.suppressed` that says from
 * when to when refusals go unrecorded; the rest of the window writes nothing. Only the record is limited: the
 * notification itself (refusal, or a genuine payment's credit) is handled whatever the limiter says, and a
 * limiter that fails (Redis down) costs the row, never the answer.
 */
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { PayMethod } from '@switchyard/db/entities/order.ts';
import type { RateLimiter } from '#app/domain/security/rate-limit.server.ts';
import type { PaymentDeps } from './orders.server.ts';

/** Rows one source address may add per gateway and window. */
export const REFUSAL_ROWS_PER_SOURCE = 20;
/** Rows all sources together may add per gateway and window. */
export const REFUSAL_ROWS_TOTAL = 100;
export const REFUSAL_WINDOW_MS = 10 * 60 * 1000;

export const REFUSED_ACTION = 'order.payment.refused';
export const SUPPRESSED_ACTION = 'order.payment.refused.suppressed';

/** Where the rate limit of the record lives and whom a refusal came from (the notify route fills both). */
export type RefusalSource = { limiter?: RateLimiter; sourceIp?: string };

type Verdict = 'record' | 'summary' | 'drop';

async function verdict(limiter: RateLimiter | undefined, gateway: string, ip: string): Promise<Verdict> {
  // Without a limiter (scripts, the order sweeper's own calls): every refusal is recorded, as before.
  if (!limiter) return 'record';
  const source = await limiter.hit(
    `rl:payment-refused:${gateway}:${ip || 'unknown'}`,
    REFUSAL_ROWS_PER_SOURCE,
    REFUSAL_WINDOW_MS,
  );
  if (source.allowed) {
    const total = await limiter.hit(`rl:payment-refused:${gateway}`, REFUSAL_ROWS_TOTAL, REFUSAL_WINDOW_MS);
    if (total.allowed) return 'record';
  }
  const summary = await limiter.hit(`rl:payment-refused-summary:${gateway}`, 1, REFUSAL_WINDOW_MS);
  return summary.allowed ? 'summary' : 'drop';
}

/** Records one refused payment (or says that further ones go unrecorded for a while); never throws. */
export async function recordRefusal(
  deps: PaymentDeps & RefusalSource,
  method: PayMethod,
  orderId: string,
  reason: string,
  detail: Record<string, unknown>,
): Promise<void> {
  const gateway = method === PayMethod.Alipay ? 'alipay' : 'wechatpay';
  const ip = (deps.sourceIp ?? '').slice(0, 64);
  try {
    const decision = await verdict(deps.limiter, gateway, ip);
    if (decision === 'drop') return;
    const em = deps.em.fork();
    if (decision === 'record') {
      console.warn(
        `[payments] payment for order ${orderId.slice(0, 64)} refused: ${reason} ${JSON.stringify(detail)}`,
      );
      em.create(AuditEntry, {
        actorId: null,
        action: REFUSED_ACTION,
        targetType: 'order',
        targetId: orderId.slice(0, 191),
        before: null,
        after: JSON.stringify({ reason, ...detail }).slice(0, 4000),
        ip,
      } as never);
    } else {
      const until = new Date(Date.now() + REFUSAL_WINDOW_MS).toISOString();
      console.warn(
        `[payments] too many refused ${gateway} notifications (last from ${ip || 'unknown'}: ${reason}); not recording them until ${until}`,
      );
      em.create(AuditEntry, {
        actorId: null,
        action: SUPPRESSED_ACTION,
        targetType: 'gateway',
        targetId: gateway,
        before: null,
        after: JSON.stringify({
          reason,
          until,
          rows_per_source: REFUSAL_ROWS_PER_SOURCE,
          rows_total: REFUSAL_ROWS_TOTAL,
          window_seconds: REFUSAL_WINDOW_MS / 1000,
        }),
        ip,
      } as never);
    }
    await em.flush();
  } catch (error) {
    console.error('[payments] could not record a refused payment', error);
  }
}
