import { defineEntity, p } from '@mikro-orm/core';

/** notification_outbox.status */
export const NotificationStatus = { Pending: 0, Delivered: 1, Abandoned: 2 } as const;
export type NotificationStatus = (typeof NotificationStatus)[keyof typeof NotificationStatus];

/**
 * Notifications decided in a transaction and delivered after it (ADR 028): the quota warning is written here in
 * Billing's own transaction, delivered after the commit and marked delivered; a sweeper retries what is still
 * pending once its lease ran out (a crash between commit and delivery, a failed attempt), with backoff, and
 * abandons a row after a bounded number of attempts.
 */
export const NotificationOutboxSchema = defineEntity({
  name: 'NotificationOutbox',
  tableName: 'notification_outbox',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    /** what to send, e.g. `quota_exceed` */
    kind: p.string().length(32),
    userId: p.integer(),
    /** JSON: what the delivery needs (for a quota warning: email, setting, quota, threshold) */
    payload: p.text(),
    status: p.smallint().default(0),
    /** delivery attempts started */
    attempts: p.integer().default(0),
    /** unix ms before which no sweeper takes the row (the lease of the attempt under way, or the backoff) */
    nextAttemptAt: p.bigint('number'),
    /** unix ms */
    createdAt: p.bigint('number'),
    /** unix ms; null until delivered */
    deliveredAt: p.bigint('number').nullable(),
    lastError: p.text().nullable(),
  },
  indexes: [{ name: 'notification_outbox_due_index', properties: ['status', 'nextAttemptAt'] }],
});

export class NotificationOutbox extends NotificationOutboxSchema.class {}
NotificationOutboxSchema.setClass(NotificationOutbox);
