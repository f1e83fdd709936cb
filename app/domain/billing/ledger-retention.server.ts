/**
 * Retention of `usage_ledger`, Billing's idempotency record (one row per applied usage event, about 100 bytes
 * with its index entries; a busy gateway writes millions a day). A row only has to outlive every replay of its
 * event: a relay reports an event until Billing acknowledges it, and a replay after the acknowledgement can only
 * come from a report that raced with another relay's outbox sweep (seconds to minutes). Rows older than the
 * retention are deleted in chunks of their own short transactions, so no statement holds row locks or keeps a
 * snapshot open for long; a transaction-level advisory lock lets one console replica prune at a time.
 *
 * Logs are not touched: their retention is the administrator's (the logs page deletes rows before a time).
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** pg advisory lock key of the pruning ("usage_ledger" as a fixed number; any replica uses the same). */
const PRUNE_LOCK_KEY = 7_304_117_501;

export type PruneResult = { deleted: number; cutoff: number; busy: boolean };

/**
 * Deletes the ledger rows created before `nowSec - retentionDays` days (created_at is unix seconds), `chunk`
 * rows per transaction. `busy` is true when another replica held the lock, in which case this call stopped.
 */
export async function pruneUsageLedger(
  em: () => EntityManager,
  opts: { retentionDays: number; nowSec?: number; chunk?: number },
): Promise<PruneResult> {
  const nowSec = opts.nowSec ?? Math.floor(Date.now() / 1000);
  const cutoff = nowSec - Math.round(opts.retentionDays * 86_400);
  const chunk = opts.chunk ?? 10_000;
  let deleted = 0;
  for (;;) {
    const step = await em().transactional(async (tx) => {
      const [lock] = (await tx.execute('select pg_try_advisory_xact_lock(?) as ok', [PRUNE_LOCK_KEY])) as {
        ok: boolean;
      }[];
      if (!lock?.ok) return null;
      const rows = (await tx.execute(
        `delete from usage_ledger where request_id in (
           select request_id from usage_ledger where created_at < ? limit ? for update skip locked
         ) returning 1`,
        [cutoff, chunk],
      )) as unknown[];
      return rows.length;
    });
    if (step === null) return { deleted, cutoff, busy: true };
    deleted += step;
    if (step < chunk) return { deleted, cutoff, busy: false };
  }
}

/**
 * Runs pruneUsageLedger once a minute after start and then every `everyMs` (hourly by default) until stopped.
 * A retention of 0 days keeps every row (nothing is scheduled).
 */
export function schedulePruning(
  em: () => EntityManager,
  opts: { retentionDays: number; everyMs?: number; firstAfterMs?: number; log: (msg: string) => void },
): { stop(): Promise<void> } {
  if (opts.retentionDays <= 0) return { stop: async () => {} };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | null = null;
  let stopped = false;
  const run = async () => {
    try {
      const r = await pruneUsageLedger(em, { retentionDays: opts.retentionDays });
      if (r.deleted > 0)
        opts.log(`usage_ledger: deleted ${r.deleted} rows older than ${opts.retentionDays} days`);
    } catch (err) {
      opts.log(`usage_ledger pruning failed: ${(err as Error).message}`);
    }
    if (!stopped) arm(opts.everyMs ?? 3_600_000);
  };
  const arm = (ms: number) => {
    timer = setTimeout(() => {
      running = run().finally(() => {
        running = null;
      });
    }, ms);
    timer.unref?.();
  };
  arm(opts.firstAfterMs ?? 60_000);
  return {
    /** Cancels the next run and waits for one in progress (so the ORM can be closed after). */
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
