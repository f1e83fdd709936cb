/**
 * Quota-warning notifications (ADR 022, ADR 028). Billing decides the crossing inside its transaction, writes the
 * warning into notification_outbox there, and hands the warnings of a committed batch to `push`, which only queues
 * them: delivery runs afterwards, a few at a time, and its outcome is recorded on the outbox row (never in
 * billing). What this queue loses (a restart, a crash, a full queue) or fails to deliver stays pending in the
 * outbox, where the sweeper (outbox.server.ts) retries it with backoff.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { formatQuota } from '#app/domain/account/quota-format.ts';
import { authTFor } from '#app/domain/auth/i18n.server.ts';
import type { QuotaWarning } from '#app/domain/billing/billing.server.ts';
import type { MailServices } from '#app/domain/mail/mailer.server.ts';
import {
  type Notification,
  type NotifyOptions,
  type NotifyResult,
  type NotifyServices,
  notifyUser,
} from './notifier.server.ts';
import { markAttempt } from './outbox.server.ts';

export const QUOTA_EXCEED = 'quota_exceed';

/** The notification (seed 000 §3 body): values are the title, the balance left and the top-up link. */
export function quotaWarningNotification(options: MailServices['options'], quota: number): Notification {
  const t = authTFor();
  const title = t('mail.quotaWarningTitle');
  const left = formatQuota(quota, {
    displayInCurrency: options.get('DisplayInCurrencyEnabled'),
    quotaPerUnit: options.get('QuotaPerUnit'),
  });
  const link = `${options.get('ServerAddress').replace(/\/+$/, '')}/topup`;
  // {{value}} is the notifier's placeholder: passed through i18next's own interpolation unchanged.
  return {
    type: QUOTA_EXCEED,
    title,
    content: t('mail.quotaWarningContent', { value: '{{value}}' }),
    values: [title, left, link],
  };
}

export type QuotaWarningQueue = {
  /** Queues the deliveries and returns at once; never throws. */
  push(warnings: QuotaWarning[]): void;
  /** Resolves when nothing is queued or in flight (tests, shutdown). */
  idle(): Promise<void>;
};

export type QuotaWarningQueueOptions = {
  /** Deliveries at once (default 4). */
  concurrency?: number;
  /** Warnings waiting beyond this are left to the outbox sweeper, and logged (default 10,000). */
  maxQueued?: number;
  notify?: NotifyOptions;
  log?: (message: string, detail?: unknown) => void;
  /** Called after each delivery (tests). */
  onResult?: (warning: QuotaWarning, result: NotifyResult) => void;
  /** Where the outcome of each delivery is recorded on its outbox row (attempt 1); none = not recorded. */
  em?: () => EntityManager;
};

/** Sends one quota warning to its user (e-mail or webhook, per their setting); never throws. */
export async function deliverQuotaWarning(
  services: NotifyServices,
  w: QuotaWarning,
  notify?: NotifyOptions,
): Promise<NotifyResult> {
  try {
    const note = quotaWarningNotification(services.options, w.quota);
    return await notifyUser(services, { id: w.userId, email: w.email, setting: w.setting }, note, notify);
  } catch (error) {
    return { ok: false, channel: 'email', error: error instanceof Error ? error.message : String(error) };
  }
}

export function createQuotaWarningQueue(
  services: NotifyServices,
  opts: QuotaWarningQueueOptions = {},
): QuotaWarningQueue {
  const concurrency = opts.concurrency ?? 4;
  const maxQueued = opts.maxQueued ?? 10_000;
  const log =
    opts.log ?? ((message: string, detail?: unknown) => console.warn(`[notify] ${message}`, detail ?? ''));
  const queue: QuotaWarning[] = [];
  let running = 0;
  let idleWaiters: Array<() => void> = [];

  const deliver = async (w: QuotaWarning): Promise<void> => {
    const result = await deliverQuotaWarning(services, w, opts.notify);
    if (!result.ok) log(`quota warning to user ${w.userId} by ${result.channel} failed: ${result.error}`);
    if (opts.em && w.outboxId !== undefined) {
      // A failed mark leaves the row pending: the sweeper sends it again once the lease ran out.
      await markAttempt(opts.em(), w.outboxId, 1, result).catch((error) =>
        log(`quota warning ${w.outboxId}: outcome not recorded`, error),
      );
    }
    opts.onResult?.(w, result);
  };

  const pump = () => {
    while (running < concurrency && queue.length > 0) {
      const w = queue.shift()!;
      running++;
      void deliver(w).finally(() => {
        running--;
        pump();
      });
    }
    if (running === 0 && queue.length === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  };

  return {
    push(warnings) {
      for (const w of warnings) {
        if (queue.length >= maxQueued) {
          log(`quota warning to user ${w.userId} left to the sweeper: ${maxQueued} deliveries are waiting`);
          continue;
        }
        queue.push(w);
      }
      // Delivery starts on a later turn of the event loop: never inside the billing call.
      setImmediate(pump);
    },
    idle() {
      if (running === 0 && queue.length === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
  };
}
