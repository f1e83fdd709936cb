import { createClient } from 'redis';
import type { Logger } from '../log.ts';
import { LUA, type ScriptName } from './scripts.ts';
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
  SWEEP_BATCH,
} from './shared.ts';
import type {
  AccountRef,
  OutboxEntry,
  RelayStore,
  ReserveRequest,
  ReserveResult,
  SettleRequest,
} from './types.ts';

/**
 * A command without a reply after this long fails, so a Redis that accepts connections but stops answering
 * cannot hang requests. node-redis' own per-command timeout arms an `AbortSignal.timeout` for every command,
 * whose timer later fires and builds a DOMException even for commands answered long before: that showed in
 * the relay's CPU profile (benchmark, issue 7). One sweep per second over the commands in flight does the job.
 */
const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;
/** Bounds node-redis' queue while Redis does not answer (timed-out commands stay queued there until then). */
const MAX_QUEUED_COMMANDS = 100_000;

export class RedisTimeoutError extends Error {
  constructor(ms: number) {
    super(`Redis did not answer within ${ms} ms`);
    this.name = 'RedisTimeoutError';
  }
}

type InFlight = { at: number; reject: (err: Error) => void };

export type RedisStoreOptions = {
  url: string;
  /** Prefix of every key this store writes (tests use one per worker). */
  keyPrefix?: string;
  log: Logger;
  /** How long a settled request id is remembered (settle idempotency); default 1 h. */
  settledTtlMs?: number;
  /** A command without an answer after this long fails with RedisTimeoutError; default 5 s. */
  commandTimeoutMs?: number;
};

/**
 * Redis-backed store, shared by every relay instance. Commands fail fast while Redis is unreachable (no
 * offline queue): the relay reports not-ready instead of piling requests up, and reconnects by itself.
 * Each multi-key operation is one Lua script (scripts.ts), sent by SHA and re-sent in full only when Redis
 * answers NOSCRIPT (after a restart or SCRIPT FLUSH), so the hot path carries a few bytes, not the source.
 *
 * Keys under keyPrefix: bal:{u,t}:<id> (cached spendable, PX TTL), pend:{u,t}:<id>, gen:{u,t}:<id>,
 * hold:<requestId> (hash user/token/amount) indexed by the ZSET holds (score = expiry), rl:t:<key> and
 * rl:s:<key> (sliding logs, ZSET scored by time), the STREAM outbox and settled:<requestId> (entry id).
 */
export class RedisStore implements RelayStore {
  readonly mode = 'redis' as const;
  readonly keyPrefix: string;
  readonly #client: ReturnType<typeof createClient>;
  readonly #connecting: Promise<unknown>;
  readonly #log: Logger;
  readonly #settledTtlMs: number;
  readonly #commandTimeoutMs: number;
  readonly #shas = new Map<ScriptName, Promise<string>>();
  readonly #inFlight = new Set<InFlight>();
  #watchdog: ReturnType<typeof setInterval> | undefined;
  #down = false;
  #closed = false;

  constructor(opts: RedisStoreOptions) {
    this.keyPrefix = opts.keyPrefix ?? 'switchyard:';
    this.#log = opts.log;
    this.#settledTtlMs = opts.settledTtlMs ?? DEFAULT_SETTLED_TTL_MS;
    assertPositiveMs('settledTtlMs', this.#settledTtlMs);
    this.#commandTimeoutMs = opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    assertPositiveMs('commandTimeoutMs', this.#commandTimeoutMs);
    this.#client = createClient({
      url: opts.url,
      disableOfflineQueue: true,
      commandOptions: { timeout: 0 },
      commandsQueueMaxLength: MAX_QUEUED_COMMANDS,
      socket: { connectTimeout: 3_000, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 3_000) },
    });
    // Without a listener an 'error' event would crash the process; log once per outage.
    this.#client.on('error', (err: Error) => {
      if (this.#down || this.#closed) return;
      this.#down = true;
      this.#log.warn(`Redis unreachable (${err.message}); retrying in the background`);
    });
    this.#client.on('ready', () => {
      if (this.#down) this.#log.info('Redis reachable again');
      this.#down = false;
    });
    this.#connecting = this.#client.connect().catch(() => {});
  }

  /** Waits up to `timeoutMs` for the first connection; false when Redis is not reachable yet. */
  async waitUntilReady(timeoutMs: number): Promise<boolean> {
    await fulfilsWithin(this.#connecting, timeoutMs);
    return this.#client.isReady;
  }

  async ping(): Promise<void> {
    if (this.#closed) throw new Error('store is closed');
    if (!this.#client.isReady) throw new Error('Redis is not connected');
    await this.#timed(this.#client.ping());
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#watchdog);
    if (this.#client.isReady) {
      // close() waits for every queued command: a Redis that stopped answering would hold it forever.
      if (!(await fulfilsWithin(this.#client.close(), this.#commandTimeoutMs))) this.#client.destroy();
    } else if (this.#client.isOpen) {
      this.#client.destroy();
    }
    await this.#connecting;
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    assertId('userId', req.userId);
    assertId('tokenId', req.tokenId);
    assertQuota('amount', req.amount);
    assertMinAmount(req.minAmount, req.amount);
    assertTime('now', req.now);
    assertPositiveMs('holdTtlMs', req.holdTtlMs);
    assertLimit(req.limit);
    const limit = req.limit;
    const reply = (await this.#run('reserve', [
      req.requestId,
      String(req.userId),
      tokenArg(req.tokenId),
      String(req.amount),
      String(req.now + req.holdTtlMs),
      String(req.now),
      limit?.key ?? '',
      String(limit ? req.now - limit.windowMs : 0),
      String(limit?.windowMs ?? 0),
      String(limit?.maxTotal ?? 0),
      String(limit?.maxSuccess ?? 0),
      req.minAmount === undefined ? '' : String(req.minAmount),
    ])) as [string, (string | number)?];
    const [status, detail] = reply;
    switch (status) {
      case 'ok':
        return { ok: true, held: Number(detail) };
      case 'rate_limited':
        return { ok: false, reason: 'rate_limited', retryAfterMs: Number(detail) };
      case 'insufficient_user_quota':
      case 'insufficient_token_quota':
        return { ok: false, reason: status, available: Number(detail) };
      case 'balance_unknown':
        return {
          ok: false,
          reason: 'balance_unknown',
          account:
            detail === 'user'
              ? { kind: 'user', id: req.userId }
              : // The script only answers 'token' when tokenId is set.
                { kind: 'token', id: req.tokenId as number },
        };
      default:
        throw new Error(`unexpected reserve reply: ${JSON.stringify(reply)}`);
    }
  }

  async balanceGeneration(account: AccountRef): Promise<number> {
    assertAccount(account);
    this.#assertOpen();
    const value = await this.#timed(this.#client.get(this.#accountKey('gen', account)));
    return value === null ? 0 : Number(value);
  }

  async loadBalance(
    account: AccountRef,
    generation: number,
    committedQuota: number,
    ttlMs: number,
  ): Promise<boolean> {
    assertAccount(account);
    assertTime('generation', generation);
    // Committed quota may be negative in PostgreSQL (an overrun settled after the hold); keep it as is.
    assertTime('committedQuota', committedQuota);
    assertPositiveMs('ttlMs', ttlMs);
    const loaded = await this.#run('loadBalance', [
      kindCode(account),
      String(account.id),
      String(generation),
      String(committedQuota),
      String(ttlMs),
    ]);
    return loaded === 1;
  }

  async invalidateBalance(account: AccountRef): Promise<void> {
    assertAccount(account);
    await this.#run('invalidateBalance', [kindCode(account), String(account.id)]);
  }

  async balance(account: AccountRef): Promise<number | null> {
    assertAccount(account);
    this.#assertOpen();
    const value = await this.#timed(this.#client.get(this.#accountKey('bal', account)));
    return value === null ? null : Number(value);
  }

  async settle(req: SettleRequest): Promise<{ entryId: string }> {
    assertId('userId', req.userId);
    assertId('tokenId', req.tokenId);
    assertQuota('amount', req.amount);
    assertTime('now', req.now);
    assertLimit(req.limit);
    const limit = req.limit;
    const entryId = await this.#run('settle', [
      req.requestId,
      String(req.userId),
      tokenArg(req.tokenId),
      String(req.amount),
      req.success ? '1' : '0',
      limit?.key ?? '',
      String(limit ? req.now - limit.windowMs : 0),
      String(limit?.windowMs ?? 0),
      String(limit?.maxSuccess ?? 0),
      req.payload,
      String(req.now),
      String(this.#settledTtlMs),
    ]);
    return { entryId: String(entryId) };
  }

  async release(requestId: string): Promise<void> {
    await this.#run('release', [requestId]);
  }

  async releaseExpiredHolds(now: number): Promise<number> {
    assertTime('now', now);
    let released = 0;
    for (;;) {
      const [count, scanned] = (await this.#run('releaseExpired', [String(now), String(SWEEP_BATCH)])) as [
        number,
        number,
      ];
      released += count;
      if (scanned < SWEEP_BATCH) return released;
    }
  }

  async outboxPending(olderThan: number, limit: number): Promise<OutboxEntry[]> {
    assertTime('olderThan', olderThan);
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`limit must be >= 0, got ${limit}`);
    this.#assertOpen();
    if (limit === 0 || olderThan < 0) return [];
    // An end id of only milliseconds covers every sequence number of that millisecond.
    const messages = await this.#timed(
      this.#client.xRange(`${this.keyPrefix}outbox`, '-', String(olderThan), { COUNT: limit }),
    );
    return (messages ?? []).map(({ id, message }) => {
      const m = message as Record<string, string>;
      return {
        id,
        requestId: m.requestId ?? '',
        userId: Number(m.userId),
        tokenId: m.tokenId ? Number(m.tokenId) : null,
        amount: Number(m.amount),
        payload: m.payload ?? '',
        createdAt: Number(m.createdAt),
      };
    });
  }

  async ackOutbox(
    entries: readonly Pick<OutboxEntry, 'id' | 'userId' | 'tokenId' | 'amount'>[],
  ): Promise<void> {
    if (entries.length === 0) {
      this.#assertOpen();
      return;
    }
    const args: string[] = [];
    for (const e of entries) {
      assertEntryId(e.id);
      assertId('userId', e.userId);
      assertId('tokenId', e.tokenId);
      assertQuota('amount', e.amount);
      args.push(e.id, String(e.userId), tokenArg(e.tokenId), String(e.amount));
    }
    await this.#run('ackOutbox', args);
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreClosedError();
  }

  #accountKey(what: 'bal' | 'gen', account: AccountRef): string {
    return `${this.keyPrefix}${what}:${kindCode(account)}:${account.id}`;
  }

  /** EVALSHA, falling back to EVAL (which caches the script again) when Redis does not know the SHA. */
  async acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    assertPositiveMs('ttlMs', ttlMs);
    return Number(await this.#run('acquireLease', [name, holder, String(ttlMs)])) === 1;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.#run('releaseLease', [name, holder]);
  }

  async #run(name: ScriptName, args: string[]): Promise<unknown> {
    this.#assertOpen();
    const source = LUA[name];
    let sha = this.#shas.get(name);
    if (!sha) {
      sha = sha1Hex(source);
      this.#shas.set(name, sha);
    }
    const options = { arguments: [this.keyPrefix, ...args] };
    try {
      return await this.#timed(this.#client.evalSha(await sha, options));
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return await this.#timed(this.#client.eval(source, options));
    }
  }

  /** `command`, failed with RedisTimeoutError when it has no answer after commandTimeoutMs (+ up to one sweep). */
  #timed<T>(command: Promise<T>): Promise<T> {
    this.#watchdog ??= this.#startWatchdog();
    return new Promise<T>((resolve, reject) => {
      const entry: InFlight = { at: Date.now(), reject };
      this.#inFlight.add(entry);
      command.then(
        (value) => {
          this.#inFlight.delete(entry);
          resolve(value);
        },
        (err: unknown) => {
          this.#inFlight.delete(entry);
          reject(err);
        },
      );
    });
  }

  #startWatchdog(): ReturnType<typeof setInterval> {
    const ms = this.#commandTimeoutMs;
    const timer = setInterval(
      () => {
        const expired = Date.now() - ms;
        // Insertion order is age order: stop at the first command still within its time.
        for (const entry of this.#inFlight) {
          if (entry.at > expired) break;
          this.#inFlight.delete(entry);
          entry.reject(new RedisTimeoutError(ms));
        }
      },
      Math.min(1_000, Math.max(10, Math.floor(ms / 4))),
    );
    timer.unref?.();
    return timer;
  }
}

/** True when `promise` fulfils within `ms`; false when it rejects or the time runs out first. */
async function fulfilsWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Tokenless calls (unlimited token, playground) have no token account; Lua sees an empty string. */
function tokenArg(tokenId: number | null): string {
  return tokenId === null ? '' : String(tokenId);
}

async function sha1Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-1', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
