/**
 * The relay's shared state (ARCHITECTURE.md §1, §4): rate-limit windows, quota holds, balances, the usage
 * outbox. Two implementations behind one interface — Redis (every relay instance shares it; each operation is
 * one Lua script, so one round trip and atomic) and in-process memory (the embedded single-instance default).
 * One contract test suite runs against both (store.contract.test.ts).
 *
 * Balance model (no overdraft across relays):
 *   spendable(account) = committed quota in PostgreSQL − pend(account)
 *   pend(account)      = open holds + settled usage not yet acknowledged by Billing
 * `bal` is a cached copy of spendable with a TTL. When it is missing, the relay reads the committed quota from
 * PostgreSQL and calls loadBalance with the generation it read *before* the database read; every event that
 * changes the committed quota (Billing ack, console credit via invalidate) bumps the generation, so a load that
 * raced with such a change is refused and retried instead of double counting or losing a deduction.
 * Unlimited tokens have no token account (tokenId null in calls).
 */
export type StoreMode = 'redis' | 'memory';

export type AccountKind = 'user' | 'token';
export type AccountRef = { kind: AccountKind; id: number };

/** Model request rate limit of seed 000 §5/§9 (ModelRequestRateLimit*), already resolved for this request. */
export type RateLimit = {
  /** Identifies the window, e.g. `${userId}:${group}`. */
  key: string;
  windowMs: number;
  /** Max requests in the window, failures included; 0 = unlimited. */
  maxTotal: number;
  /** Max successful requests in the window; 0 = unlimited. */
  maxSuccess: number;
};

export type ReserveRequest = {
  requestId: string;
  userId: number;
  /** null: no token account (unlimited token, playground, channel test). */
  tokenId: number | null;
  /** Quota to hold on the user and the token (>= 0; 0 still checks the balances are > 0). */
  amount: number;
  /**
   * Makes the hold flexible (a request without an output limit; ADR 009): when an account's spendable is below
   * `amount`, hold what is spendable (the smaller of user and token) if that is >= minAmount and > 0. At most
   * one such partial hold is open per account: while one is, another partial hold on it is refused, so the
   * calls that may exceed their holds by more than the documented bounds are never more than one per account.
   * Omit for an exact hold of `amount`. Must be <= amount.
   */
  minAmount?: number;
  /** Omit for no rate limit. */
  limit?: RateLimit;
  /** How long the hold lives before the sweeper releases it (the relay's max request duration + margin). */
  holdTtlMs: number;
  /** Unix ms; passed in so tests control time. */
  now: number;
};

export type ReserveResult =
  /** `held`: the quota now held for the request (`amount`, or less for a flexible hold). */
  | { ok: true; held: number }
  | { ok: false; reason: 'rate_limited'; retryAfterMs: number }
  | { ok: false; reason: 'insufficient_user_quota' | 'insufficient_token_quota'; available: number }
  /** The cached balance of this account is missing: load it (loadBalance) and call reserve again. */
  | { ok: false; reason: 'balance_unknown'; account: AccountRef };

export type BalanceSnapshot = { generation: number };

/** One settled call, as stored in the outbox until Billing acknowledges it. */
export type OutboxEntry = {
  /** Store-assigned id (Redis stream id or a counter). */
  id: string;
  requestId: string;
  userId: number;
  tokenId: number | null;
  /** Quota deducted (what Billing will commit). */
  amount: number;
  /** The serialised usage event (UsageEvent JSON); opaque to the store. */
  payload: string;
  /** Unix ms when it was added. */
  createdAt: number;
};

export type SettleRequest = {
  requestId: string;
  userId: number;
  tokenId: number | null;
  /** Final cost; replaces the hold. */
  amount: number;
  /** Counted in the success window of the rate limit when true. */
  success: boolean;
  limit?: RateLimit;
  payload: string;
  now: number;
};

export interface RelayStore {
  readonly mode: StoreMode;
  /** Resolves when the store answers; rejects when it is unreachable or closed. */
  ping(): Promise<void>;
  /** Releases connections; further calls reject. Safe to call twice. */
  close(): Promise<void>;

  /**
   * Atomically: check the rate limit (total window counts this attempt, failures included; success window
   * refuses when full), check user (and token) spendable >= amount (>= minAmount for a flexible hold, with no
   * other partial hold open on the account) and > 0, then record the attempt, hold `amount` (a flexible hold:
   * at most the smaller spendable) on both accounts (bal -= held, pend += held) and remember the hold under
   * requestId. Nothing is recorded when it refuses. A reserve of a request that already holds returns its hold.
   */
  reserve(req: ReserveRequest): Promise<ReserveResult>;
  /** The account's generation, read before reading its committed quota from PostgreSQL. */
  balanceGeneration(account: AccountRef): Promise<number>;
  /**
   * Sets bal = committedQuota − pend with a TTL, unless the generation moved since `generation` was read
   * (returns false: read again). Never overwrites a bal that is present.
   */
  loadBalance(
    account: AccountRef,
    generation: number,
    committedQuota: number,
    ttlMs: number,
  ): Promise<boolean>;
  /** Drops the cached bal and bumps the generation (console changed the committed quota or the token). */
  invalidateBalance(account: AccountRef): Promise<void>;
  /** Spendable as cached (null when not loaded); for /dashboard/billing and tests. */
  balance(account: AccountRef): Promise<number | null>;

  /**
   * Atomically: replace the hold by the final amount (bal += held − amount, pend += amount − held; when the
   * hold was already swept, bal −= amount, pend += amount), count a success in the window when `success`,
   * and append the outbox entry. Idempotent by requestId: a second settle of the same request does nothing
   * and returns the first entry's id.
   */
  settle(req: SettleRequest): Promise<{ entryId: string }>;
  /** Gives a hold back (failed call): bal += held, pend −= held. No-op when there is no hold. */
  release(requestId: string): Promise<void>;
  /** Releases holds whose TTL passed (a relay died mid-call). Returns how many. */
  releaseExpiredHolds(now: number): Promise<number>;

  /** Outbox entries created at or before `olderThan` (unix ms), oldest first, at most `limit`. */
  outboxPending(olderThan: number, limit: number): Promise<OutboxEntry[]>;
  /**
   * Billing committed these: remove them from the outbox and, for each one actually removed (first ack
   * wins), pend −= amount on user and token and bump both generations.
   */
  ackOutbox(entries: readonly Pick<OutboxEntry, 'id' | 'userId' | 'tokenId' | 'amount'>[]): Promise<void>;

  /**
   * Leader lease (ARCHITECTURE.md §1: scheduled channel tests and balance polling run on one relay at a time):
   * true when `holder` now has `name` for `ttlMs` (taken free, or extended because it already had it).
   */
  acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `holder` has it (a stopping leader lets another relay take over at once). */
  releaseLease(name: string, holder: string): Promise<void>;
}
