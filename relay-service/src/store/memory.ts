/**
 * In-process store for the embedded single-instance setup (no REDIS_URL). It mirrors the Redis scripts rule
 * for rule — the same contract tests run against both — so that what works on a laptop works in a cluster.
 * Each method does its checks and writes synchronously, without awaiting in between, which makes it atomic
 * within this process just as a Lua script is within Redis. Only one relay instance may use it.
 *
 * With a journal (useJournal; the relay attaches one on its PostgreSQL) the outbox is also on disk: a settle
 * returns once its entry is committed there, an ack deletes it, and a restarted relay loads what is left (ADR 014).
 */

import { compareEntryIds, type OutboxJournal } from './journal.ts';
import {
  assertAccount,
  assertEntryId,
  assertId,
  assertLimit,
  assertMinAmount,
  assertPositiveMs,
  assertQuota,
  assertTime,
  DEFAULT_SETTLED_TTL_MS,
  kindCode,
  StoreClosedError,
} from './shared.ts';
import type {
  AccountRef,
  OutboxEntry,
  RateLimit,
  RelayStore,
  ReserveRequest,
  ReserveResult,
  SettleRequest,
} from './types.ts';

/** `partial`: a flexible hold that took less than its amount (its accounts are marked in #partial). */
type Hold = { user: number; token: number | null; amount: number; expiresAt: number; partial: boolean };

/**
 * Sliding log of one rate-limit window: member (request id) -> time. Keyed by member like the Redis ZSET, so a
 * request recorded twice still counts once.
 */
type SlidingLog = { entries: Map<string, number>; expiresAt: number };

export type MemoryStoreOptions = {
  /** How long a settled request id is remembered (settle idempotency); default 24 h. */
  settledTtlMs?: number;
};

export class MemoryStore implements RelayStore {
  readonly mode = 'memory' as const;
  #closed = false;
  readonly #settledTtlMs: number;
  /** Cached spendable with its expiry (Date.now() based, like a Redis PX TTL). */
  readonly #bal = new Map<string, { value: number; expiresAt: number }>();
  readonly #pend = new Map<string, number>();
  readonly #gen = new Map<string, number>();
  readonly #holds = new Map<string, Hold>();
  /** Account key -> request id of the partial hold open on it (at most one; see ReserveRequest.minAmount). */
  readonly #partial = new Map<string, string>();
  readonly #attempts = new Map<string, SlidingLog>();
  readonly #successes = new Map<string, SlidingLog>();
  /** Insertion order is id order: ids only grow (see #nextId). */
  readonly #outbox = new Map<string, OutboxEntry>();
  #lastId = { ms: 0, seq: -1 };
  /** request id -> entry id; insertion order is expiry order because the TTL is constant. */
  readonly #settled = new Map<string, { entryId: string; expiresAt: number }>();
  #journal: OutboxJournal | null = null;
  #onJournalError: (err: unknown) => void = () => {};
  /** Entries whose journal write failed: written again by the next sweep (they are in memory meanwhile). */
  readonly #unjournaled = new Set<string>();

  constructor(opts: MemoryStoreOptions = {}) {
    this.#settledTtlMs = opts.settledTtlMs ?? DEFAULT_SETTLED_TTL_MS;
    assertPositiveMs('settledTtlMs', this.#settledTtlMs);
  }

  /**
   * Makes the outbox durable: loads the entries a previous process left in `journal` (their pending amounts
   * count against the balances again until Billing acknowledges them) and, from now on, writes every settled
   * entry there before settle returns. Returns how many entries were restored.
   */
  async useJournal(journal: OutboxJournal, opts: { onError?: (err: unknown) => void } = {}): Promise<number> {
    this.#assertOpen();
    const restored = await journal.load();
    let added = 0;
    for (const e of restored) {
      if (this.#outbox.has(e.id) || this.#settled.has(e.requestId)) continue;
      this.#outbox.set(e.id, { ...e });
      this.#settled.set(e.requestId, { entryId: e.id, expiresAt: Date.now() + this.#settledTtlMs });
      this.#addPend({ kind: 'user', id: e.userId }, e.amount);
      if (e.tokenId !== null) this.#addPend({ kind: 'token', id: e.tokenId }, e.amount);
      const ms = idMs(e.id);
      const seq = Number(e.id.slice(e.id.indexOf('-') + 1));
      if (ms > this.#lastId.ms || (ms === this.#lastId.ms && seq > this.#lastId.seq))
        this.#lastId = { ms, seq };
      added++;
    }
    if (added > 0) {
      // Insertion order must stay id order (outboxPending stops at the first entry that is too new).
      const sorted = [...this.#outbox.values()].sort((a, b) => compareEntryIds(a.id, b.id));
      this.#outbox.clear();
      for (const e of sorted) this.#outbox.set(e.id, e);
    }
    this.#journal = journal;
    if (opts.onError) this.#onJournalError = opts.onError;
    return added;
  }

  async ping(): Promise<void> {
    this.#assertOpen();
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    assertId('userId', req.userId);
    assertId('tokenId', req.tokenId);
    this.#assertOpen();
    assertQuota('amount', req.amount);
    assertMinAmount(req.minAmount, req.amount);
    assertTime('now', req.now);
    assertPositiveMs('holdTtlMs', req.holdTtlMs);
    assertLimit(req.limit);
    const { requestId, userId, tokenId, amount, minAmount, limit, now } = req;

    const prior = this.#holds.get(requestId);
    if (prior) return { ok: true, held: prior.amount };

    let attempts: SlidingLog | undefined;
    if (limit) {
      attempts = this.#log(this.#attempts, limit, now);
      const successes = this.#log(this.#successes, limit, now);
      let wait = 0;
      if (limit.maxTotal > 0) wait = Math.max(wait, waitFor(attempts, limit.maxTotal, limit.windowMs, now));
      if (limit.maxSuccess > 0)
        wait = Math.max(wait, waitFor(successes, limit.maxSuccess, limit.windowMs, now));
      if (wait > 0) return { ok: false, reason: 'rate_limited', retryAfterMs: wait };
    }

    const user: AccountRef = { kind: 'user', id: userId };
    const token: AccountRef | null = tokenId === null ? null : { kind: 'token', id: tokenId };
    const userBal = this.#balValue(user);
    if (userBal === null) return { ok: false, reason: 'balance_unknown', account: user };
    const tokenBal = token ? this.#balValue(token) : null;
    if (token && tokenBal === null) return { ok: false, reason: 'balance_unknown', account: token };

    // As the script: a flexible hold that does not fit takes what is spendable when that covers minAmount and
    // no other partial hold is open on either account.
    let held = amount;
    const short = (bal: number) => bal <= 0 || bal < amount;
    const partial = short(userBal) || (tokenBal !== null && short(tokenBal));
    if (partial) {
      const need = minAmount ?? amount;
      const refused = (bal: number) => bal <= 0 || bal < need;
      if (refused(userBal)) return { ok: false, reason: 'insufficient_user_quota', available: userBal };
      if (tokenBal !== null && refused(tokenBal))
        return { ok: false, reason: 'insufficient_token_quota', available: tokenBal };
      if (this.#partial.has(key(user)))
        return { ok: false, reason: 'insufficient_user_quota', available: userBal };
      if (token && tokenBal !== null && this.#partial.has(key(token)))
        return { ok: false, reason: 'insufficient_token_quota', available: tokenBal };
      held = Math.min(amount, userBal, tokenBal ?? amount);
      this.#partial.set(key(user), requestId);
      if (token) this.#partial.set(key(token), requestId);
    }

    if (attempts && limit && limit.maxTotal > 0) record(attempts, requestId, now, limit.windowMs);
    this.#addBal(user, -held);
    this.#addPend(user, held);
    if (token) {
      this.#addBal(token, -held);
      this.#addPend(token, held);
    }
    this.#holds.set(requestId, {
      user: userId,
      token: tokenId,
      amount: held,
      expiresAt: now + req.holdTtlMs,
      partial,
    });
    return { ok: true, held };
  }

  readonly #leases = new Map<string, { holder: string; until: number }>();

  async acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    this.#assertOpen();
    assertPositiveMs('ttlMs', ttlMs);
    const now = Date.now();
    const current = this.#leases.get(name);
    if (current && current.until > now && current.holder !== holder) return false;
    this.#leases.set(name, { holder, until: now + ttlMs });
    return true;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    this.#assertOpen();
    if (this.#leases.get(name)?.holder === holder) this.#leases.delete(name);
  }

  async balanceGeneration(account: AccountRef): Promise<number> {
    this.#assertOpen();
    assertAccount(account);
    return this.#gen.get(key(account)) ?? 0;
  }

  async loadBalance(
    account: AccountRef,
    generation: number,
    committedQuota: number,
    ttlMs: number,
  ): Promise<boolean> {
    this.#assertOpen();
    assertAccount(account);
    assertTime('generation', generation);
    assertTime('committedQuota', committedQuota);
    assertPositiveMs('ttlMs', ttlMs);
    const k = key(account);
    if ((this.#gen.get(k) ?? 0) !== generation) return false;
    if (this.#balValue(account) !== null) return true;
    this.#bal.set(k, { value: committedQuota - (this.#pend.get(k) ?? 0), expiresAt: Date.now() + ttlMs });
    return true;
  }

  async invalidateBalance(account: AccountRef): Promise<void> {
    this.#assertOpen();
    assertAccount(account);
    const k = key(account);
    this.#bal.delete(k);
    this.#gen.set(k, (this.#gen.get(k) ?? 0) + 1);
  }

  async balance(account: AccountRef): Promise<number | null> {
    this.#assertOpen();
    assertAccount(account);
    return this.#balValue(account);
  }

  async settle(req: SettleRequest): Promise<{ entryId: string }> {
    assertId('userId', req.userId);
    assertId('tokenId', req.tokenId);
    this.#assertOpen();
    assertQuota('amount', req.amount);
    assertTime('now', req.now);
    assertLimit(req.limit);
    const { requestId, userId, tokenId, amount, limit, now } = req;

    this.#forgetSettled(now);
    const prior = this.#settled.get(requestId);
    if (prior) return { entryId: prior.entryId };

    // Same shape as the script: give the hold back (if the sweeper has not), then charge the final amount.
    this.#releaseHold(requestId);
    const user: AccountRef = { kind: 'user', id: userId };
    this.#addBal(user, -amount);
    this.#addPend(user, amount);
    if (tokenId !== null) {
      const token: AccountRef = { kind: 'token', id: tokenId };
      this.#addBal(token, -amount);
      this.#addPend(token, amount);
    }

    if (req.success && limit && limit.maxSuccess > 0) {
      record(this.#log(this.#successes, limit, now), requestId, now, limit.windowMs);
    }

    const id = this.#nextId(now);
    const entry = { id, requestId, userId, tokenId, amount, payload: req.payload, createdAt: now };
    this.#outbox.set(id, entry);
    this.#settled.set(requestId, { entryId: id, expiresAt: now + this.#settledTtlMs });
    // Everything above is done (atomically) before this await: the write only makes the entry durable. When
    // the database does not take it the entry is still reported from memory, and written again by the sweep.
    if (this.#journal) {
      try {
        await this.#journal.append({ ...entry });
      } catch (err) {
        this.#unjournaled.add(id);
        this.#onJournalError(err);
      }
    }
    return { entryId: id };
  }

  async release(requestId: string): Promise<void> {
    this.#assertOpen();
    this.#releaseHold(requestId);
  }

  async releaseExpiredHolds(now: number): Promise<number> {
    this.#assertOpen();
    assertTime('now', now);
    let released = 0;
    for (const [requestId, hold] of this.#holds) {
      if (hold.expiresAt <= now && this.#releaseHold(requestId)) released++;
    }
    this.#sweepCaches(now);
    await this.#rewriteUnjournaled();
    return released;
  }

  async #rewriteUnjournaled(): Promise<void> {
    if (!this.#journal || this.#unjournaled.size === 0) return;
    const ids = [...this.#unjournaled];
    this.#unjournaled.clear();
    for (const id of ids) {
      const entry = this.#outbox.get(id);
      if (!entry) continue;
      try {
        await this.#journal.append({ ...entry });
      } catch (err) {
        for (const rest of ids) if (this.#outbox.has(rest)) this.#unjournaled.add(rest);
        this.#onJournalError(err);
        return;
      }
    }
  }

  async outboxPending(olderThan: number, limit: number): Promise<OutboxEntry[]> {
    this.#assertOpen();
    assertTime('olderThan', olderThan);
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`limit must be >= 0, got ${limit}`);
    const out: OutboxEntry[] = [];
    for (const entry of this.#outbox.values()) {
      if (out.length >= limit || idMs(entry.id) > olderThan) break;
      out.push({ ...entry });
    }
    return out;
  }

  async ackOutbox(
    entries: readonly Pick<OutboxEntry, 'id' | 'userId' | 'tokenId' | 'amount'>[],
  ): Promise<void> {
    this.#assertOpen();
    for (const e of entries) {
      assertEntryId(e.id);
      assertId('userId', e.userId);
      assertId('tokenId', e.tokenId);
      assertQuota('amount', e.amount);
    }
    const removed: string[] = [];
    for (const e of entries) {
      // Only the ack that actually removes the entry lowers pend: duplicates must not release quota twice.
      if (!this.#outbox.delete(e.id)) continue;
      removed.push(e.id);
      this.#unjournaled.delete(e.id);
      const accounts: AccountRef[] = [{ kind: 'user', id: e.userId }];
      if (e.tokenId !== null) accounts.push({ kind: 'token', id: e.tokenId });
      for (const account of accounts) {
        this.#addPend(account, -e.amount);
        const k = key(account);
        this.#gen.set(k, (this.#gen.get(k) ?? 0) + 1);
      }
    }
    // A row left behind (the delete failed, or the process died first) is reported again after a restart and
    // acknowledged by Billing as a duplicate: billed once either way.
    if (this.#journal && removed.length > 0)
      await this.#journal.remove(removed).catch((err: unknown) => this.#onJournalError(err));
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreClosedError();
  }

  #balValue(account: AccountRef): number | null {
    const k = key(account);
    const bal = this.#bal.get(k);
    if (!bal) return null;
    if (bal.expiresAt <= Date.now()) {
      this.#bal.delete(k);
      return null;
    }
    return bal.value;
  }

  /** A missing bal is recomputed from PostgreSQL and pend, which already carry the change. */
  #addBal(account: AccountRef, delta: number): void {
    const bal = this.#balValue(account) === null ? undefined : this.#bal.get(key(account));
    if (bal) bal.value += delta;
  }

  #addPend(account: AccountRef, delta: number): void {
    const k = key(account);
    const next = (this.#pend.get(k) ?? 0) + delta;
    if (next === 0) this.#pend.delete(k);
    else this.#pend.set(k, next);
  }

  #releaseHold(requestId: string): boolean {
    const hold = this.#holds.get(requestId);
    if (!hold) return false;
    if (hold.partial) {
      const accounts: AccountRef[] = [{ kind: 'user', id: hold.user }];
      if (hold.token !== null) accounts.push({ kind: 'token', id: hold.token });
      for (const a of accounts) if (this.#partial.get(key(a)) === requestId) this.#partial.delete(key(a));
    }
    const user: AccountRef = { kind: 'user', id: hold.user };
    this.#addBal(user, hold.amount);
    this.#addPend(user, -hold.amount);
    if (hold.token !== null) {
      const token: AccountRef = { kind: 'token', id: hold.token };
      this.#addBal(token, hold.amount);
      this.#addPend(token, -hold.amount);
    }
    this.#holds.delete(requestId);
    return true;
  }

  /** The window's log with entries that left it dropped. */
  #log(logs: Map<string, SlidingLog>, limit: RateLimit, now: number): SlidingLog {
    let log = logs.get(limit.key);
    if (!log) {
      log = { entries: new Map(), expiresAt: 0 };
      logs.set(limit.key, log);
    }
    const windowStart = now - limit.windowMs;
    for (const [member, at] of log.entries) if (at <= windowStart) log.entries.delete(member);
    return log;
  }

  /** Redis expires idle keys by TTL; here the sweeper drops what a TTL would have removed. */
  #sweepCaches(now: number): void {
    const wall = Date.now();
    for (const [k, bal] of this.#bal) if (bal.expiresAt <= wall) this.#bal.delete(k);
    for (const logs of [this.#attempts, this.#successes]) {
      for (const [k, log] of logs) if (log.expiresAt <= wall) logs.delete(k);
    }
    this.#forgetSettled(now);
  }

  #forgetSettled(now: number): void {
    for (const [requestId, s] of this.#settled) {
      if (s.expiresAt > now) break;
      this.#settled.delete(requestId);
    }
  }

  /** Stream-like ids `<ms>-<seq>`: the time of the entry unless that would go backwards (clock skew). */
  #nextId(now: number): string {
    const last = this.#lastId;
    this.#lastId = now > last.ms ? { ms: now, seq: 0 } : { ms: last.ms, seq: last.seq + 1 };
    return `${this.#lastId.ms}-${this.#lastId.seq}`;
  }
}

function key(account: AccountRef): string {
  return `${kindCode(account)}:${account.id}`;
}

function idMs(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}

/** 0 when the log has room; otherwise ms until enough entries leave that it has room again (>= 1). */
function waitFor(log: SlidingLog, max: number, windowMs: number, now: number): number {
  const n = log.entries.size;
  if (n < max) return 0;
  const times = [...log.entries.values()].sort((a, b) => a - b);
  return Math.max(1, (times[n - max] as number) + windowMs - now);
}

function record(log: SlidingLog, member: string, now: number, windowMs: number): void {
  log.entries.set(member, now);
  // Like PEXPIRE on the Redis key: the log can go once its newest entry has left the window.
  log.expiresAt = Date.now() + windowMs;
}
