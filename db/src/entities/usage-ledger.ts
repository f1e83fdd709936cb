import { defineEntity, p } from '@mikro-orm/core';

/** usage_ledger.kind: mirrors switchyard.billing.v1.UsageKind. */
export const UsageLedgerKind = { Consume: 1, ChannelTest: 2, TaskRefund: 3 } as const;
export type UsageLedgerKind = (typeof UsageLedgerKind)[keyof typeof UsageLedgerKind];

/**
 * One row per usage event Billing has applied, keyed by the relay's request id: the idempotency record of
 * ReportUsage. It is written even when LogConsumeEnabled is off (then no consume log row exists), so a replayed
 * event is recognised either way.
 */
export const UsageLedgerSchema = defineEntity({
  name: 'UsageLedger',
  tableName: 'usage_ledger',
  properties: {
    requestId: p.string().length(64).primary(),
    userId: p.integer(),
    tokenId: p.integer().default(0),
    quota: p.bigint('number').default(0),
    kind: p.smallint(),
    /** unix seconds (when the call finished); indexed for pruning old rows */
    createdAt: p.bigint('number').index('usage_ledger_created_at_index'),
  },
});

export class UsageLedger extends UsageLedgerSchema.class {}
UsageLedgerSchema.setClass(UsageLedger);
