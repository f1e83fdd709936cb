/**
 * Quota-warning notifications (ADR 022). Billing decides the crossing inside its transaction and hands the
 * warnings of a committed batch to `push`, which only queues them: delivery runs afterwards, a few at a time,
 * and a failure is logged, never retried into billing. The queue lives in memory: a restart loses the deliveries
 * still queued or in flight (the marker in users.quota_warned is already set, so they are not sent again).
 */
import { formatQuota } from '#app/domain/account/quota-format.ts';
import { authTFor } from '#app/domain/auth/i18n.server.ts';
import type { QuotaWarning } from '#app/domain/billing/billing.server.ts';
import type { MailServices } from '#app/domain/mail/mailer.server.ts';
import { type Notification, type NotifyOptions, type NotifyResult, notifyUser } from './notifier.server.ts';

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
  /** Warnings waiting beyond this are dropped and logged (default 10,000). */
  maxQueued?: number;
  notify?: NotifyOptions;
  log?: (message: string, detail?: unknown) => void;
  /** Called after each delivery (tests). */
  onResult?: (warning: QuotaWarning, result: NotifyResult) => void;
};

export function createQuotaWarningQueue(
  services: MailServices,
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
    let result: NotifyResult;
    try {
      const note = quotaWarningNotification(services.options, w.quota);
      result = await notifyUser(
        services,
        { id: w.userId, email: w.email, setting: w.setting },
        note,
        opts.notify,
      );
    } catch (error) {
      result = { ok: false, channel: 'email', error: error instanceof Error ? error.message : String(error) };
    }
    if (!result.ok) log(`quota warning to user ${w.userId} by ${result.channel} failed: ${result.error}`);
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
          log(`quota warning to user ${w.userId} dropped: ${maxQueued} deliveries are waiting`);
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
