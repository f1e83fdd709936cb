import { defineEntity, p } from '@mikro-orm/core';

/**
 * The in-process relay store's outbox on disk (no REDIS_URL: the embedded single-instance mode). One row per
 * settled call Billing has not acknowledged yet, written before the client's answer completes and deleted when
 * Billing acknowledges it; a relay that starts replays what is left (Billing is idempotent by request id through
 * usage_ledger). The Redis mode keeps the same entries in a Redis stream instead and never writes here. ADR 014.
 */
export const RelayOutboxSchema = defineEntity({
  name: 'RelayOutbox',
  tableName: 'relay_outbox',
  properties: {
    /** The store's entry id `<unix ms>-<seq>`. */
    id: p.string().length(32).primary(),
    requestId: p.string().length(64),
    userId: p.integer(),
    /** null: no token account (unlimited token, playground, channel test). */
    tokenId: p.integer().nullable(),
    /** Quota deducted (what Billing commits). */
    amount: p.bigint('number'),
    /** The encoded usage event (relay-service/src/core/usage-payload.ts). */
    payload: p.text(),
    /** unix ms when the call was settled */
    createdAt: p.bigint('number'),
  },
});

export class RelayOutbox extends RelayOutboxSchema.class {}
RelayOutboxSchema.setClass(RelayOutbox);
