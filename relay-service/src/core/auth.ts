/**
 * Who is calling (ARCHITECTURE.md §4 step 1, gateway-behaviour §1.2): the key from any of the accepted headers,
 * the token and its owner from a short-lived cache, and every token check in new-api's order. An admin's
 * `sk-KEY-CHANNELID` pins a channel (no retries); anyone else gets 403 for it.
 */
import ipaddr from 'ipaddr.js';
import { forbidden, unauthorized } from './errors.ts';
import type { Repo, TokenRecord, UserRecord } from './repo.ts';

export type Caller = {
  token: TokenRecord | null;
  user: UserRecord;
  /** Token group when set, otherwise the user's group. */
  group: string;
  /** Admin channel pin, null when none. */
  pinnedChannelId: number | null;
  /** Log name when no stored token is used (playground). */
  tokenName: string;
};

/** The subprotocol item a browser WebSocket carries its key in (it cannot set headers), as OpenAI accepts it. */
export const WS_KEY_PROTOCOL_PREFIX = 'openai-insecure-api-key.';

export function extractKey(headers: Headers, url: URL): string | null {
  // A WebSocket handshake may carry the key as an offered subprotocol (new-api reads it first when present).
  const protocols = headers.get('sec-websocket-protocol');
  if (protocols)
    for (const item of protocols.split(',')) {
      const p = item.trim();
      if (p.startsWith(WS_KEY_PROTOCOL_PREFIX) && p.length > WS_KEY_PROTOCOL_PREFIX.length)
        return p.slice(WS_KEY_PROTOCOL_PREFIX.length);
    }
  const auth = headers.get('authorization');
  if (auth) {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    const v = (m?.[1] ?? auth).trim();
    if (v && v !== 'midjourney-proxy') return v;
  }
  return (
    headers.get('x-api-key') ??
    headers.get('x-goog-api-key') ??
    url.searchParams.get('key') ??
    headers.get('mj-api-secret') ??
    null
  );
}

/** `sk-abc` / `abc` / `sk-abc-12` → key and optional channel pin. */
export function parseKey(raw: string): { key: string; channelId: number | null } {
  const body = raw.startsWith('sk-') ? raw.slice(3) : raw;
  const [key = '', pin] = body.split('-');
  const channelId = pin !== undefined && /^\d+$/.test(pin) ? Number(pin) : null;
  return { key, channelId };
}

type Cached = { token: TokenRecord; user: UserRecord; at: number; usedAt: number };

/** What the account cache reads: one key on a miss, and many at once for the periodic refresh. */
export type AccountsRepo = Pick<Repo, 'accountByKey' | 'accountsByIds'>;

/** Tokens refreshed per query. */
const REFRESH_CHUNK = 1_000;

/**
 * Token + owner cache keyed by the token key (held in this process's memory only; a miss is found through the
 * key's lookup hash, ADR 035, and the refresh re-reads entries by token id, so it hashes nothing). The console drops entries at once when it changes a token or a
 * user (invalidate); the TTL bounds how old the data of an entry may be otherwise. Once started, the cache
 * re-reads every entry in use in bulk once per TTL (a few queries of a thousand keys), so a request never waits
 * on PostgreSQL for a known key even with 10,000 active tokens — one query pair per expiring entry was the
 * scale cost of issue 7's 10k-token configuration — and an entry is served until two TTLs after its last read,
 * which leaves the refresh a whole TTL to run. When refreshes fail, entries go stale and are read one by one
 * again, as before. Entries unused for `idleMs` are dropped instead of refreshed.
 */
export class Accounts {
  readonly #repo: AccountsRepo;
  readonly #ttlMs: number;
  readonly #idleMs: number;
  readonly #byKey = new Map<string, Cached>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #refreshing: Promise<void> | null = null;

  constructor(repo: AccountsRepo, ttlMs: number, opts: { idleMs?: number } = {}) {
    this.#repo = repo;
    this.#ttlMs = ttlMs;
    this.#idleMs = opts.idleMs ?? Math.max(5 * 60_000, 10 * ttlMs);
  }

  /** Starts the periodic bulk refresh (not with a TTL of 0, which means "no cache"). */
  start(): void {
    if (this.#timer || this.#ttlMs <= 0) return;
    this.#timer = setInterval(() => void this.refresh().catch(() => {}), Math.max(50, this.#ttlMs));
    this.#timer.unref?.();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  get size(): number {
    return this.#byKey.size;
  }

  async lookup(key: string, now = Date.now()): Promise<{ token: TokenRecord; user: UserRecord } | null> {
    const hit = this.#byKey.get(key);
    if (hit && now - hit.at < (this.#timer ? 2 * this.#ttlMs : this.#ttlMs)) {
      hit.usedAt = now;
      return hit;
    }
    const found = await this.#repo.accountByKey(key);
    if (!found) {
      this.#byKey.delete(key);
      return null;
    }
    const entry = { token: found.token, user: found.user, at: now, usedAt: now };
    this.#byKey.set(key, entry);
    if (this.#byKey.size > 100_000) this.#byKey.delete(this.#byKey.keys().next().value as string);
    return entry;
  }

  /**
   * Re-reads every entry used within `idleMs` in bulk and drops the others. An entry invalidated or replaced
   * while the refresh ran is left alone, so a refresh never brings back what the console just changed.
   */
  refresh(now = Date.now()): Promise<void> {
    this.#refreshing ??= this.#refreshNow(now).finally(() => {
      this.#refreshing = null;
    });
    return this.#refreshing;
  }

  async #refreshNow(now: number): Promise<void> {
    const before = new Map<string, Cached>();
    for (const [key, entry] of this.#byKey) {
      if (now - entry.usedAt > this.#idleMs) this.#byKey.delete(key);
      else before.set(key, entry);
    }
    const keys = [...before.keys()];
    for (let i = 0; i < keys.length; i += REFRESH_CHUNK) {
      const chunk = keys.slice(i, i + REFRESH_CHUNK);
      const ids = chunk.map((key) => (before.get(key) as Cached).token.id);
      const byId = new Map((await this.#repo.accountsByIds(ids)).map((a) => [a.token.id, a]));
      for (const key of chunk) {
        const old = before.get(key);
        if (!old || this.#byKey.get(key) !== old) continue;
        const found = byId.get(old.token.id);
        if (!found) this.#byKey.delete(key);
        else this.#byKey.set(key, { token: found.token, user: found.user, at: now, usedAt: old.usedAt });
      }
    }
  }

  invalidate(userIds: readonly number[], tokenIds: readonly number[]): void {
    const users = new Set(userIds);
    const tokens = new Set(tokenIds);
    for (const [k, v] of this.#byKey)
      if (users.has(v.user.id) || tokens.has(v.token.id)) this.#byKey.delete(k);
  }
}

export function ipAllowed(allowList: string, ip: string): boolean {
  const entries = allowList
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0) return true;
  if (!ip || !ipaddr.isValid(ip)) return false;
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress())
    addr = (addr as ipaddr.IPv6).toIPv4Address();
  for (const entry of entries) {
    try {
      if (entry.includes('/')) {
        const [range, bits] = ipaddr.parseCIDR(entry);
        if (range.kind() === addr.kind() && addr.match([range, bits])) return true;
      } else if (ipaddr.isValid(entry)) {
        const e = ipaddr.parse(entry);
        if (e.kind() === addr.kind() && e.toNormalizedString() === addr.toNormalizedString()) return true;
      }
    } catch {
      // An unparsable entry allows nothing.
    }
  }
  return false;
}

export type AuthOptions = {
  usableGroups: Record<string, string>;
  groupRatio: Record<string, number>;
};

/** The token checks of gateway-behaviour §1.2 step 5, in order. `model` is checked when known. */
export function checkToken(
  entry: { token: TokenRecord; user: UserRecord },
  ctx: { ip: string; now: number; pinnedChannelId: number | null; model: string | null },
  opts: AuthOptions,
): Caller {
  const { token, user } = entry;
  switch (token.status) {
    case 1:
      break;
    case 3:
      throw unauthorized('this token has expired', 'token_expired');
    case 4:
      throw unauthorized('this token has no quota left', 'token_exhausted');
    default:
      throw unauthorized('this token is disabled', 'token_disabled');
  }
  if (token.expiredTime !== -1 && token.expiredTime * 1000 <= ctx.now)
    throw unauthorized('this token has expired', 'token_expired');
  if (!token.unlimitedQuota && token.remainQuota <= 0)
    throw unauthorized('this token has no quota left', 'token_exhausted');
  if (user.status !== 1) throw forbidden('the user of this token is banned', 'user_banned');
  if (!ipAllowed(token.allowIps, ctx.ip))
    throw forbidden(`your IP ${ctx.ip || '(unknown)'} is not allowed to use this token`, 'ip_not_allowed');
  if (ctx.model !== null) checkModelLimit(token, ctx.model);
  if (ctx.pinnedChannelId !== null && user.role < 10)
    throw forbidden('only administrators may choose a channel in the key', 'channel_pin_forbidden');
  const group = token.group || user.group;
  if (token.group) {
    if (!(token.group in opts.usableGroups) && token.group !== user.group)
      throw forbidden(`group ${token.group} is not usable by this user`, 'group_not_usable');
  }
  if (!(group in opts.groupRatio)) throw forbidden(`group ${group} has no ratio set`, 'group_not_priced');
  return { token, user, group, pinnedChannelId: ctx.pinnedChannelId, tokenName: token.name };
}

export function checkModelLimit(token: TokenRecord, model: string): void {
  if (token.modelLimitsEnabled && !token.modelLimits.includes(model))
    throw forbidden(`this token may not use model ${model}`, 'model_not_allowed');
}
