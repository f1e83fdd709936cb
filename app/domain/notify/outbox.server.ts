/**
 * The durable side of quota-warning notifications (ADR 028, on top of ADR 022). Billing writes each warning into
 * `notification_outbox` in its own transaction, as attempt 1 with a lease; after the commit the in-memory queue
 * delivers it and marks the row. A row still pending when its lease or backoff ran out (the console died between
 * commit and delivery, or the attempt failed) is claimed by a sweeper with `for update skip locked` (any number of
 * console replicas may sweep: each row goes to one of them), delivered again, and abandoned after
 * MAX_NOTIFY_ATTEMPTS. Delivery is at least once: a console dying after the receiver accepted and before the row
 * was marked sends it again at the next sweep.
 *
 * Nothing here runs inside Billing except `recordQuotaWarnings` (one INSERT, only for batches that warn); every
 * failure of marking or sweeping is logged and left to the next sweep.
 */

import type { EntityManager } from '@mikro-orm/postgresql';
import { NotificationStatus } from '@switchyard/db/entities/notification-outbox.ts';
import type { QuotaWarning } from '#app/domain/billing/billing.server.ts';
import type { NotifyResult } from './notifier.server.ts';

export const QUOTA_EXCEED_KIND = 'quota_exceed';

/** How long an attempt owns its row: no sweeper takes it before (deliveries time out after 5 s). */
export const NOTIFY_LEASE_MS = 60_000;
/** Attempts (the one after commit included) before a row is abandoned. */
export const MAX_NOTIFY_ATTEMPTS = 6;

/** Wait after failed attempt `attempts` (1-based): 1 min, 4 min, 16 min, ... at most 6 h. */
export function retryDelayMs(attempts: number): number {
  return Math.min(60_000 * 4 ** Math.max(0, attempts - 1), 6 * 3600_000);
}

type Payload = { email: string; setting: string; quota: number; threshold: number };

/**
 * Writes the warnings of a batch in Billing's transaction (attempt 1, leased to the delivery after commit) and
 * sets their `outboxId`. One statement for the whole batch.
 */
export async function recordQuotaWarnings(
  tx: EntityManager,
  warnings: QuotaWarning[],
  nowMs: number,
): Promise<void> {
  if (warnings.length === 0) return;
  const rows = (await tx.execute(
    'insert into notification_outbox (kind, user_id, payload, status, attempts, next_attempt_at, created_at) ' +
      'select ?, v.u, v.p, 0, 1, ?, ? from json_to_recordset(?::json) as v(u int, p text) ' +
      'returning id, user_id',
    [
      QUOTA_EXCEED_KIND,
      nowMs + NOTIFY_LEASE_MS,
      nowMs,
      JSON.stringify(
        warnings.map((w) => ({
          u: w.userId,
          p: JSON.stringify({
            email: w.email,
            setting: w.setting,
            quota: w.quota,
            threshold: w.threshold,
          } satisfies Payload),
        })),
      ),
    ],
  )) as { id: number | string; user_id: number }[];
  // One warning per user per batch: the user id finds its row.
  const ids = new Map(rows.map((r) => [Number(r.user_id), Number(r.id)]));
  for (const w of warnings) w.outboxId = ids.get(w.userId);
}

/**
 * Records the outcome of an attempt on a pending row: delivered, or failed (retried after the backoff, abandoned
 * after MAX_NOTIFY_ATTEMPTS). `attempts` is the number of the attempt that ended: a late outcome of an attempt the
 * sweeper has since replaced changes nothing.
 */
export async function markAttempt(
  em: EntityManager,
  id: number,
  attempts: number,
  result: NotifyResult,
  nowMs = Date.now(),
): Promise<void> {
  if (result.ok) {
    await em.execute(
      'update notification_outbox set status = ?, delivered_at = ? where id = ? and status = ? and attempts = ?',
      [NotificationStatus.Delivered, nowMs, id, NotificationStatus.Pending, attempts],
    );
    return;
  }
  const status = attempts >= MAX_NOTIFY_ATTEMPTS ? NotificationStatus.Abandoned : NotificationStatus.Pending;
  await em.execute(
    'update notification_outbox set status = ?, next_attempt_at = ?, last_error = ? ' +
      'where id = ? and status = ? and attempts = ?',
    [
      status,
      nowMs + retryDelayMs(attempts),
      result.error.slice(0, 1000),
      id,
      NotificationStatus.Pending,
      attempts,
    ],
  );
}

export type SweepResult = { claimed: number; delivered: number; failed: number; abandoned: number };

/**
 * Claims the due pending rows (lease or backoff over), `limit` at a time, and delivers them with `deliver`.
 * Rows another sweeper holds are skipped; a claimed row is leased for NOTIFY_LEASE_MS.
 */
export async function sweepNotifications(
  em: () => EntityManager,
  deliver: (warning: QuotaWarning) => Promise<NotifyResult>,
  opts: { nowMs?: number; limit?: number } = {},
): Promise<SweepResult> {
  const now = opts.nowMs ?? Date.now();
  const result: SweepResult = { claimed: 0, delivered: 0, failed: 0, abandoned: 0 };
  // Rows whose last attempt never reported back (a console died during attempt MAX) are abandoned here.
  const stale = (await em().execute(
    'update notification_outbox set status = ?, last_error = coalesce(last_error, ?) ' +
      'where status = ? and next_attempt_at <= ? and attempts >= ? returning id',
    [NotificationStatus.Abandoned, 'no attempt left', NotificationStatus.Pending, now, MAX_NOTIFY_ATTEMPTS],
  )) as unknown[];
  result.abandoned += stale.length;
  const claimed = (await em().execute(
    'update notification_outbox set attempts = attempts + 1, next_attempt_at = ? where id in (' +
      'select id from notification_outbox where status = ? and next_attempt_at <= ? ' +
      'order by next_attempt_at limit ? for update skip locked) ' +
      'returning id, kind, user_id, payload, attempts',
    [now + NOTIFY_LEASE_MS, NotificationStatus.Pending, now, opts.limit ?? 100],
  )) as { id: number | string; kind: string; user_id: number; payload: string; attempts: number }[];
  result.claimed = claimed.length;
  for (const row of claimed) {
    const id = Number(row.id);
    let outcome: NotifyResult;
    try {
      const p = JSON.parse(row.payload) as Payload;
      outcome = await deliver({
        userId: Number(row.user_id),
        email: p.email,
        setting: p.setting,
        quota: p.quota,
        threshold: p.threshold,
        outboxId: id,
      });
    } catch (error) {
      outcome = {
        ok: false,
        channel: 'email',
        error: error instanceof Error ? error.message : String(error),
      };
    }
    const attempts = Number(row.attempts);
    await markAttempt(em(), id, attempts, outcome, opts.nowMs ?? Date.now());
    if (outcome.ok) result.delivered++;
    else if (attempts >= MAX_NOTIFY_ATTEMPTS) result.abandoned++;
    else result.failed++;
  }
  return result;
}

/**
 * Sweeps every `everyMs` (30 s by default; the first sweep `firstAfterMs` after start, picking up what a previous
 * run left) until stopped. Sweeps never overlap in one process.
 */
export function scheduleNotificationSweep(
  em: () => EntityManager,
  deliver: (warning: QuotaWarning) => Promise<NotifyResult>,
  opts: { everyMs?: number; firstAfterMs?: number; log: (msg: string, detail?: unknown) => void },
): { stop(): Promise<void> } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | null = null;
  let stopped = false;
  const run = () => {
    running = sweepNotifications(em, deliver)
      .then((r) => {
        if (r.claimed > 0 || r.abandoned > 0)
          opts.log(
            `notification sweep: ${r.delivered} delivered, ${r.failed} to retry, ${r.abandoned} abandoned`,
          );
      })
      .catch((error) => opts.log('notification sweep failed', error))
      .finally(() => {
        running = null;
        if (!stopped) timer = setTimeout(run, opts.everyMs ?? 30_000);
        timer?.unref?.();
      });
  };
  timer = setTimeout(run, opts.firstAfterMs ?? 10_000);
  timer.unref?.();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
