/**
 * The in-process store's outbox on disk (ADR 014): the embedded single-instance mode keeps balances and holds in
 * memory, but a settled call's usage event must survive the process. Each settle appends its entry to the
 * `relay_outbox` table in the PostgreSQL the relay already uses, and the settle (hence the client's answer)
 * waits for that commit; an ack deletes the rows; a relay that starts loads what is left and reports it again
 * (Billing is idempotent by request id, so an event that was billed but not yet deleted is acknowledged as a
 * duplicate and billed once).
 *
 * Appends are group-committed: one INSERT carries every entry settled while the previous INSERT was in flight,
 * so under load the cost is one round trip (and one WAL flush) per batch, not per call.
 */
import type { OutboxEntry } from './types.ts';

export type JournalSql = <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;

export interface OutboxJournal {
  /** Resolves once the entry is committed to disk; rejects when the database did not take it. */
  append(entry: OutboxEntry): Promise<void>;
  /** Deletes acknowledged entries (ids that are not there are ignored). */
  remove(ids: readonly string[]): Promise<void>;
  /** Every entry not yet acknowledged, oldest first. */
  load(): Promise<OutboxEntry[]>;
}

/** Rows per INSERT: 7 parameters each, well under PostgreSQL's 65,535 bind parameters. */
const MAX_BATCH = 500;

type Pending = { entry: OutboxEntry; resolve: () => void; reject: (err: unknown) => void };

export class PgOutboxJournal implements OutboxJournal {
  readonly #sql: JournalSql;
  #queue: Pending[] = [];
  #writing = false;

  constructor(sql: JournalSql) {
    this.#sql = sql;
  }

  append(entry: OutboxEntry): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ entry, resolve, reject });
      if (!this.#writing) void this.#drain();
    });
  }

  /** Writes the queue in batches until it is empty; entries queued meanwhile join the next batch. */
  async #drain(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH);
        const params: unknown[] = [];
        for (const { entry: e } of batch)
          params.push(e.id, e.requestId, e.userId, e.tokenId, e.amount, e.payload, e.createdAt);
        try {
          await this.#sql(
            `insert into relay_outbox (id, request_id, user_id, token_id, amount, payload, created_at) values ${batch
              .map(() => '(?, ?, ?, ?, ?, ?, ?)')
              .join(', ')} on conflict (id) do nothing`,
            params,
          );
          for (const p of batch) p.resolve();
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.#writing = false;
    }
  }

  async remove(ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += MAX_BATCH) {
      const chunk = ids.slice(i, i + MAX_BATCH);
      await this.#sql(`delete from relay_outbox where id in (${chunk.map(() => '?').join(', ')})`, chunk);
    }
  }

  async load(): Promise<OutboxEntry[]> {
    const rows = await this.#sql<{
      id: string;
      request_id: string;
      user_id: number;
      token_id: number | null;
      amount: string | number;
      payload: string;
      created_at: string | number;
    }>(`select id, request_id, user_id, token_id, amount, payload, created_at from relay_outbox`);
    return rows
      .map((r) => ({
        id: r.id,
        requestId: r.request_id,
        userId: Number(r.user_id),
        tokenId: r.token_id === null ? null : Number(r.token_id),
        amount: Number(r.amount),
        payload: r.payload,
        createdAt: Number(r.created_at),
      }))
      .sort((a, b) => compareEntryIds(a.id, b.id));
  }
}

/** Orders `<ms>-<seq>` ids numerically (as a Redis stream orders its ids). */
export function compareEntryIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}
