/**
 * Delivers settled usage to Billing (ARCHITECTURE.md §4 step 5). Each settle already put the event in the
 * store's outbox atomically with the balance change; this forwarder reports this relay's fresh entries at once
 * (batched) and sweeps entries older than `sweepAfterMs` whoever wrote them — a relay that died leaves its
 * entries behind and another relay reports them. Billing is idempotent by request id, so a report that raced
 * with another one is acknowledged as a duplicate, and only the first ack releases the pending amount.
 */
import type { BillingReporter } from '../grpc/billing-client.ts';
import type { Logger } from '../log.ts';
import type { AccountRef, OutboxEntry, RelayStore } from '../store/types.ts';

/** Outbox id prefix of an event the store could not take (settled while it was down): reported from memory only. */
export const LOCAL_ENTRY_PREFIX = 'local:';

export type OutboxOptions = {
  store: RelayStore;
  reporter: BillingReporter | null;
  log: Logger;
  /** Max events per report. */
  batchSize?: number;
  /** How long to gather fresh events before reporting. */
  flushDelayMs?: number;
  sweepAfterMs: number;
  sweepEveryMs?: number;
  reportTimeoutMs?: number;
  now?: () => number;
};

export class OutboxForwarder {
  readonly #o: Required<Omit<OutboxOptions, 'reporter'>> & { reporter: BillingReporter | null };
  readonly #fresh = new Map<string, OutboxEntry>();
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  #sweepTimer: ReturnType<typeof setInterval> | undefined;
  #flushing: Promise<void> | null = null;
  #backoffUntil = 0;
  #stopped = false;
  #billingDown = false;

  constructor(opts: OutboxOptions) {
    this.#o = {
      batchSize: 200,
      flushDelayMs: 20,
      sweepEveryMs: Math.max(500, Math.floor(opts.sweepAfterMs / 3)),
      reportTimeoutMs: 10_000,
      now: Date.now,
      ...opts,
    };
  }

  start(): void {
    this.#sweepTimer = setInterval(() => {
      void this.sweep().catch((e) => this.#o.log.warn(`outbox sweep failed: ${(e as Error).message}`));
    }, this.#o.sweepEveryMs);
    this.#sweepTimer.unref?.();
  }

  enqueue(entry: OutboxEntry): void {
    if (this.#stopped) return;
    this.#fresh.set(entry.id, entry);
    this.#schedule();
  }

  /** Gathers fresh events for flushDelayMs, then reports them. */
  #schedule(): void {
    if (this.#stopped) return;
    this.#flushTimer ??= setTimeout(() => {
      this.#flushTimer = undefined;
      void this.flush();
    }, this.#o.flushDelayMs);
  }

  /** Number of fresh entries not yet acknowledged by this relay. */
  get pending(): number {
    return this.#fresh.size;
  }

  /**
   * Reports the fresh entries there are now. Entries settled while these reports are in flight gather for
   * flushDelayMs like any others: reporting them as soon as the previous report returned sent one or two events
   * per report under steady traffic, and Billing paid a transaction for each.
   */
  flush(): Promise<void> {
    if (this.#flushing) return this.#flushing;
    const run = (async () => {
      let left = this.#fresh.size;
      while (left > 0 && this.#o.now() >= this.#backoffUntil) {
        const batch = [...this.#fresh.values()].slice(0, Math.min(this.#o.batchSize, left));
        if (batch.length === 0) return;
        if (!(await this.#report(batch))) return;
        for (const e of batch) this.#fresh.delete(e.id);
        left -= batch.length;
      }
      if (this.#fresh.size > 0 && this.#o.now() >= this.#backoffUntil) this.#schedule();
    })();
    // Cleared after the assignment: an async body that never awaits finishes before `run` is assigned.
    this.#flushing = run.finally(() => {
      this.#flushing = null;
    });
    return this.#flushing;
  }

  /** Reports outbox entries older than sweepAfterMs (any relay's), releases expired holds. */
  async sweep(): Promise<void> {
    const { store } = this.#o;
    const now = this.#o.now();
    await store.releaseExpiredHolds(now);
    if (this.#fresh.size > 0) await this.flush();
    if (now < this.#backoffUntil) return;
    for (let i = 0; i < 20; i++) {
      const old = await store.outboxPending(now - this.#o.sweepAfterMs, this.#o.batchSize);
      if (old.length === 0) return;
      if (!(await this.#report(old))) return;
      for (const e of old) this.#fresh.delete(e.id);
      if (old.length < this.#o.batchSize) return;
    }
  }

  /** True when every entry was acknowledged (and acked in the store). */
  async #report(batch: OutboxEntry[]): Promise<boolean> {
    const { reporter, store, log } = this.#o;
    if (!reporter || batch.length === 0) return false;
    try {
      const acks = await reporter.report(
        batch.map((e) => e.payload),
        this.#o.reportTimeoutMs,
      );
      const byId = new Map(acks.map((a) => [a.requestId, a]));
      const done = batch.filter((e) => byId.has(e.requestId));
      for (const a of acks)
        if (a.status === 'rejected') log.error(`billing rejected usage ${a.requestId}: ${a.message}`);
      // Entries the store never took (settled while it was down) have nothing to remove there, and no pend
      // covered their charge: drop the cached balances (bumping generations), so that a balance loaded from
      // PostgreSQL before Billing committed them is read again.
      const local = done.filter((e) => e.id.startsWith(LOCAL_ENTRY_PREFIX));
      await store.ackOutbox(done.filter((e) => !e.id.startsWith(LOCAL_ENTRY_PREFIX)));
      const accounts = new Map<string, AccountRef>();
      for (const e of local) {
        accounts.set(`u${e.userId}`, { kind: 'user', id: e.userId });
        if (e.tokenId !== null) accounts.set(`t${e.tokenId}`, { kind: 'token', id: e.tokenId });
      }
      for (const a of accounts.values()) await store.invalidateBalance(a);
      if (this.#billingDown) log.info('billing reachable again; outbox draining');
      this.#billingDown = false;
      this.#backoffUntil = 0;
      return done.length === batch.length;
    } catch (err) {
      if (!this.#billingDown)
        log.warn(`billing unreachable, usage kept in the outbox: ${(err as Error).message}`);
      this.#billingDown = true;
      this.#backoffUntil = this.#o.now() + 1_000;
      // Try the fresh entries again after the backoff.
      setTimeout(() => void this.flush(), 1_000).unref?.();
      return false;
    }
  }

  /** Last flush (bounded by the report timeout); what is left stays in the store for another relay. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#sweepTimer);
    clearTimeout(this.#flushTimer);
    this.#backoffUntil = 0;
    // Until everything is reported or a report fails (what is left stays in the store for another relay).
    while (this.#fresh.size > 0) {
      const before = this.#fresh.size;
      await this.flush().catch(() => {});
      if (this.#fresh.size >= before) break;
    }
  }
}
