import { resolveClientIp } from '@switchyard/relay/http/client-ip.ts';
import type { RedisClientType } from 'redis';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { TooManyRequestsError } from '#app/domain/errors.ts';
import type { ConsoleServices } from '#app/services.server.ts';

/**
 * Per-client-IP limits on the critical endpoints (login, register, e-mail code, password reset, OAuth
 * callbacks): new-api's "CT" limit, 20 requests per 20 minutes by default. The algorithm is new-api's sliding
 * log (the last `max` request times per key; a request is refused while the oldest of them is inside the
 * window), done atomically: one Lua script in Redis, or a Map in this process without Redis.
 * The same limiter keeps the login back-off per account (`backoff`, ADR 018).
 */

/** Outcome of one counted request: allowed, or refused with the milliseconds until a slot frees up. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

export interface RateLimiter {
  /** Counts one request against `key` (when allowed) and decides. */
  hit(key: string, max: number, windowMs: number): Promise<RateDecision>;
  /**
   * A growing back-off on `key` (login attempts per account): refused while the wait set by the previous
   * attempt runs; otherwise counts this attempt and, from the `free`-th attempt on, sets the wait before the
   * next one to `baseMs * 2^(attempts - free)`, capped at `maxMs`. The count is forgotten `forgetMs` after
   * the wait ends without a further attempt, or by `reset` (a successful login).
   */
  backoff(key: string, policy: BackoffPolicy): Promise<RateDecision>;
  /**
   * The attempt last allowed by `backoff` failed: its wait runs again from now (so it counts from the answer,
   * not from the request, however long the check took).
   */
  backoffFailed(key: string, policy: BackoffPolicy): Promise<void>;
  /** Forgets `key` (a successful login, tests, admin reset). */
  reset(key: string): Promise<void>;
}

export type BackoffPolicy = { free: number; baseMs: number; maxMs: number; forgetMs: number };

export type CriticalLimitConfig = { max: number; windowSeconds: number };

export const DEFAULT_CRITICAL_LIMIT: CriticalLimitConfig = { max: 20, windowSeconds: 20 * 60 };

/**
 * Login back-off per account (LOGIN_BACKOFF_FAILURES / LOGIN_BACKOFF_MAX): after `failures` consecutive
 * failed logins of one account, each further attempt waits 1 s, 2 s, 4 s, ... up to `maxSeconds`; 0 failures
 * turns it off. See docs/decisions/018-login-backoff-and-reads-by-role.md.
 */
export type LoginBackoffConfig = { failures: number; maxSeconds: number; baseMs?: number };

export const DEFAULT_LOGIN_BACKOFF: LoginBackoffConfig = { failures: 5, maxSeconds: 300 };

/** An account's count is forgotten this long after its last wait ended without a new attempt. */
const LOGIN_BACKOFF_FORGET_MS = 60 * 60 * 1000;

/** Header server/console.ts sets to the socket's address (and strips from what clients send). */
export const CLIENT_IP_HEADER = 'x-switchyard-client-ip';

const SLIDING_LOG = `
local key = KEYS[1]
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local len = redis.call('LLEN', key)
if len >= max then
  local oldest = tonumber(redis.call('LINDEX', key, -1))
  if oldest and now - oldest < window then
    return window - (now - oldest)
  end
end
redis.call('LPUSH', key, now)
redis.call('LTRIM', key, 0, max - 1)
redis.call('PEXPIRE', key, window)
return -1
`;

/** Lua: the wait after the n-th attempt (backoffWaitMs). */
const BACKOFF_WAIT = `
local function waitAfter(n, free, base, max)
  if n < free then return 0 end
  local k = n - free
  if k >= 40 then return max end
  return math.floor(math.min(max, base * (2 ^ k)))
end
local key = KEYS[1]
local free = tonumber(ARGV[1])
local base = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
local forget = tonumber(ARGV[4])
local now = tonumber(ARGV[5])
local state = redis.call('HMGET', key, 'n', 'next')
local nextAt = tonumber(state[2]) or 0
`;

const BACKOFF_CLAIM = `${BACKOFF_WAIT}
if now < nextAt then
  return nextAt - now
end
local n = (tonumber(state[1]) or 0) + 1
local wait = waitAfter(n, free, base, max)
redis.call('HSET', key, 'n', n, 'next', now + wait)
redis.call('PEXPIRE', key, wait + forget)
return -1
`;

const BACKOFF_FAILED = `${BACKOFF_WAIT}
local n = tonumber(state[1])
if not n then return 0 end
local wait = waitAfter(n, free, base, max)
if wait <= 0 then return 0 end
nextAt = math.max(nextAt, now + wait)
redis.call('HSET', key, 'next', nextAt)
redis.call('PEXPIRE', key, nextAt - now + forget)
return wait
`;

/** The wait after the `attempts`-th attempt under `policy` (0 before the `free`-th). */
export function backoffWaitMs(attempts: number, policy: Pick<BackoffPolicy, 'free' | 'baseMs' | 'maxMs'>) {
  if (attempts < policy.free) return 0;
  const k = attempts - policy.free;
  return k >= 40 ? policy.maxMs : Math.floor(Math.min(policy.maxMs, policy.baseMs * 2 ** k));
}

export function createRedisRateLimiter(
  redis: Pick<RedisClientType, 'eval' | 'del'>,
  prefix = 'switchyard:',
): RateLimiter {
  const backoffArgs = (key: string, policy: BackoffPolicy) => ({
    keys: [`${prefix}${key}`],
    arguments: [policy.free, policy.baseMs, policy.maxMs, policy.forgetMs, Date.now()].map(String),
  });
  return {
    async hit(key, max, windowMs) {
      const result = Number(
        await redis.eval(SLIDING_LOG, {
          keys: [`${prefix}${key}`],
          arguments: [String(max), String(windowMs), String(Date.now())],
        }),
      );
      return result < 0 ? { allowed: true } : { allowed: false, retryAfterMs: Math.max(1, result) };
    },
    async backoff(key, policy) {
      const result = Number(await redis.eval(BACKOFF_CLAIM, backoffArgs(key, policy)));
      return result < 0 ? { allowed: true } : { allowed: false, retryAfterMs: Math.max(1, result) };
    },
    async backoffFailed(key, policy) {
      await redis.eval(BACKOFF_FAILED, backoffArgs(key, policy));
    },
    async reset(key) {
      await redis.del(`${prefix}${key}`);
    },
  };
}

export function createMemoryRateLimiter(): RateLimiter {
  const logs = new Map<string, number[]>();
  const backoffs = new Map<string, { n: number; nextAt: number; expiresAt: number }>();
  let calls = 0;
  return {
    async hit(key, max, windowMs) {
      const now = Date.now();
      // Occasionally drop keys whose newest request left the window, so the map stays small.
      if (++calls % 1000 === 0) {
        for (const [k, times] of logs) if (now - (times[0] ?? 0) >= windowMs) logs.delete(k);
      }
      const times = logs.get(key) ?? [];
      if (times.length >= max) {
        const oldest = times[times.length - 1] ?? 0;
        if (now - oldest < windowMs) return { allowed: false, retryAfterMs: windowMs - (now - oldest) };
      }
      times.unshift(now);
      times.length = Math.min(times.length, max);
      logs.set(key, times);
      return { allowed: true };
    },
    async backoff(key, policy) {
      const now = Date.now();
      if (++calls % 1000 === 0) {
        for (const [k, state] of backoffs) if (now >= state.expiresAt) backoffs.delete(k);
      }
      let state = backoffs.get(key);
      if (state && now >= state.expiresAt) state = undefined;
      if (state && now < state.nextAt) return { allowed: false, retryAfterMs: state.nextAt - now };
      const n = (state?.n ?? 0) + 1;
      const wait = backoffWaitMs(n, policy);
      backoffs.set(key, { n, nextAt: now + wait, expiresAt: now + wait + policy.forgetMs });
      return { allowed: true };
    },
    async backoffFailed(key, policy) {
      const now = Date.now();
      const state = backoffs.get(key);
      if (!state || now >= state.expiresAt) return;
      const wait = backoffWaitMs(state.n, policy);
      if (wait <= 0) return;
      state.nextAt = Math.max(state.nextAt, now + wait);
      state.expiresAt = state.nextAt + policy.forgetMs;
    },
    async reset(key) {
      logs.delete(key);
      backoffs.delete(key);
    },
  };
}

/** Used when ConsoleServices carries no limiter (unit tests of other areas, scripts). */
const fallbackLimiter = createMemoryRateLimiter();

export function limiterOf(services: ConsoleServices): RateLimiter {
  return services.limiter ?? fallbackLimiter;
}

/**
 * The client's IP from trusted hops only (ADR 015): the socket address that server/console.ts passes in
 * CLIENT_IP_HEADER, or, when that peer is a proxy under TRUST_PROXY, the right-most X-Forwarded-For hop that is
 * not a trusted proxy (never the left-most, which the client writes); '' when nothing is known (a Request built
 * in a test).
 */
export function clientIp(request: Request, services?: Pick<ConsoleServices, 'auth'>): string {
  const socket = request.headers.get(CLIENT_IP_HEADER)?.trim() ?? '';
  return resolveClientIp(socket, request.headers.get('x-forwarded-for'), services?.auth?.trustProxy ?? false);
}

/**
 * Counts this request in `bucket` for the client's IP and throws TooManyRequestsError (429, seed 000 §8
 * message) once the critical limit is used up.
 */
export async function enforceCriticalLimit(
  request: Request,
  services: ConsoleServices,
  bucket: string,
): Promise<void> {
  const { max, windowSeconds } = services.auth?.criticalLimit ?? DEFAULT_CRITICAL_LIMIT;
  if (max <= 0) return;
  const ip = clientIp(request, services) || 'unknown';
  const decision = await limiterOf(services).hit(`rl:critical:${bucket}:${ip}`, max, windowSeconds * 1000);
  if (!decision.allowed) {
    const t = await authT(request);
    throw new TooManyRequestsError(t('errors.tooManyRequests'), Math.ceil(decision.retryAfterMs / 1000));
  }
}

/** The key of an account's login back-off: the user's id when the name or e-mail found one, else the name. */
export function loginBackoffKey(account: { userId: number } | { name: string }): string {
  return 'userId' in account
    ? `rl:login-account:id:${account.userId}`
    : `rl:login-account:name:${account.name}`;
}

/**
 * Claims one login attempt for an account BEFORE its password is checked, and throws TooManyRequestsError
 * (429, Retry-After, "try again in N seconds") while the account's back-off runs. Not counted per IP: a guess
 * spread over many addresses is slowed as much as one from a single address.
 */
export async function enforceLoginBackoff(
  services: ConsoleServices,
  key: string,
  t: (key: string, options?: Record<string, unknown>) => string,
): Promise<void> {
  const policy = loginBackoffPolicy(services);
  if (!policy) return;
  const decision = await limiterOf(services).backoff(key, policy);
  if (!decision.allowed) {
    const seconds = Math.ceil(decision.retryAfterMs / 1000);
    throw new TooManyRequestsError(t('login.throttled', { seconds }), seconds);
  }
}

/** A wrong password: the account's wait (if any) counts from now. */
export async function loginFailed(services: ConsoleServices, key: string): Promise<void> {
  const policy = loginBackoffPolicy(services);
  if (policy) await limiterOf(services).backoffFailed(key, policy);
}

/** A login that proved the password ends the account's back-off. */
export async function clearLoginBackoff(services: ConsoleServices, key: string): Promise<void> {
  if (loginBackoffPolicy(services)) await limiterOf(services).reset(key);
}

function loginBackoffPolicy(services: ConsoleServices): BackoffPolicy | null {
  const config = services.auth?.loginBackoff ?? DEFAULT_LOGIN_BACKOFF;
  if (config.failures <= 0) return null;
  const baseMs = config.baseMs ?? 1000;
  return {
    free: config.failures,
    baseMs,
    maxMs: Math.max(baseMs, config.maxSeconds * 1000),
    forgetMs: LOGIN_BACKOFF_FORGET_MS,
  };
}
