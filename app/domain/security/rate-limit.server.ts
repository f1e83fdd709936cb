import { resolveClientIp } from '@switchyard/relay/http/client-ip.ts';
import type { RedisClientType } from 'redis';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { TooManyRequestsError } from '#app/domain/errors.ts';
import { DEVICE_TTL_MS } from '#app/domain/security/device-cookie.server.ts';
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
   * attempt runs (a refused attempt changes nothing); otherwise counts this attempt and, from the `free`-th
   * attempt on, sets the wait before the next one to `baseMs * 2^(attempts - free)`, capped at `maxMs`.
   * Attempts are counted in a fixed window of `windowMs` from the first one: once it has passed (and no wait
   * runs) the count starts again from zero, so a few attempts per window cannot keep the key locked. `reset`
   * (a successful login) forgets it at once.
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

export type BackoffPolicy = { free: number; baseMs: number; maxMs: number; windowMs: number };

export type CriticalLimitConfig = { max: number; windowSeconds: number };

export const DEFAULT_CRITICAL_LIMIT: CriticalLimitConfig = { max: 20, windowSeconds: 20 * 60 };

/**
 * Login back-off per account (LOGIN_BACKOFF_FAILURES / LOGIN_BACKOFF_MAX): after `failures` failed logins of
 * one account within its window, each further attempt waits 1 s, 2 s, 4 s, ... up to `maxSeconds`; 0 failures
 * turns it off. Browsers with a device cookie of the account are exempt (device-cookie.server.ts). See
 * docs/decisions/018-login-backoff-and-reads-by-role.md and 037-device-cookies-and-safe-redirects.md.
 * `baseMs` and `windowMs` are for tests (default 1 s and loginBackoffWindowMs).
 */
export type LoginBackoffConfig = { failures: number; maxSeconds: number; baseMs?: number; windowMs?: number };

export const DEFAULT_LOGIN_BACKOFF: LoginBackoffConfig = { failures: 5, maxSeconds: 300 };

/**
 * The fixed window in which an account's failures count: long enough for the waits to reach the cap
 * (`free` attempts, then one per doubling up to `maxMs`), each step a full `maxMs` apart. So an attacker who
 * sends one guess per LOGIN_BACKOFF_MAX never gets a wait of more than LOGIN_BACKOFF_MAX, and the waits stop
 * growing once the window ends (defaults: 5 + 8 steps of 300 s = 65 minutes).
 */
export function loginBackoffWindowMs(policy: Pick<BackoffPolicy, 'free' | 'baseMs' | 'maxMs'>): number {
  const doublings = Math.max(0, Math.floor(Math.log2(policy.maxMs / policy.baseMs)));
  return policy.maxMs * (policy.free + doublings);
}

/** A device cookie that used up its attempts stays untrusted as long as the cookie could live. */
const DEVICE_LOCK_MS = DEVICE_TTL_MS;

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

/**
 * Lua: the wait after the n-th attempt (backoffWaitMs), and the account's state with a window that has
 * passed (and no wait running) read as empty.
 */
const BACKOFF_STATE = `
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
local window = tonumber(ARGV[4])
local now = tonumber(ARGV[5])
local state = redis.call('HMGET', key, 'n', 'next', 'start')
local n = tonumber(state[1]) or 0
local nextAt = tonumber(state[2]) or 0
local start = tonumber(state[3])
if start and now >= start + window and now >= nextAt then
  n = 0
  nextAt = 0
  start = nil
end
`;

const BACKOFF_CLAIM = `${BACKOFF_STATE}
if now < nextAt then
  return nextAt - now
end
n = n + 1
if not start then start = now end
local wait = waitAfter(n, free, base, max)
nextAt = now + wait
redis.call('HSET', key, 'n', n, 'next', nextAt, 'start', start)
redis.call('PEXPIRE', key, math.max(start + window, nextAt) - now + 1000)
return -1
`;

const BACKOFF_FAILED = `${BACKOFF_STATE}
if n == 0 then return 0 end
local wait = waitAfter(n, free, base, max)
if wait <= 0 then return 0 end
nextAt = math.max(nextAt, now + wait)
redis.call('HSET', key, 'next', nextAt)
redis.call('PEXPIRE', key, math.max(start + window, nextAt) - now + 1000)
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
    arguments: [policy.free, policy.baseMs, policy.maxMs, policy.windowMs, Date.now()].map(String),
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
  type Backoff = { n: number; nextAt: number; start: number };
  const backoffs = new Map<string, Backoff>();
  let calls = 0;
  /** The key's state, or undefined once its window has passed with no wait running. */
  const current = (key: string, policy: BackoffPolicy, now: number): Backoff | undefined => {
    const state = backoffs.get(key);
    if (state && now >= state.start + policy.windowMs && now >= state.nextAt) {
      backoffs.delete(key);
      return undefined;
    }
    return state;
  };
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
      if (++calls % 1000 === 0) for (const k of [...backoffs.keys()]) current(k, policy, now);
      const state = current(key, policy, now);
      if (state && now < state.nextAt) return { allowed: false, retryAfterMs: state.nextAt - now };
      const n = (state?.n ?? 0) + 1;
      backoffs.set(key, { n, nextAt: now + backoffWaitMs(n, policy), start: state?.start ?? now });
      return { allowed: true };
    },
    async backoffFailed(key, policy) {
      const now = Date.now();
      const state = current(key, policy, now);
      if (!state) return;
      const wait = backoffWaitMs(state.n, policy);
      if (wait > 0) state.nextAt = Math.max(state.nextAt, now + wait);
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

export function loginBackoffPolicy(services: ConsoleServices): BackoffPolicy | null {
  const config = services.auth?.loginBackoff ?? DEFAULT_LOGIN_BACKOFF;
  if (config.failures <= 0) return null;
  const baseMs = config.baseMs ?? 1000;
  const shape = { free: config.failures, baseMs, maxMs: Math.max(baseMs, config.maxSeconds * 1000) };
  return { ...shape, windowMs: config.windowMs ?? loginBackoffWindowMs(shape) };
}

/**
 * Claims one login attempt of a browser with a valid device cookie of the account: true while the device has
 * had fewer than LOGIN_BACKOFF_FAILURES attempts since its last success (it is then exempt from the account's
 * back-off); false once it used them up, for the rest of the cookie's life: from then on it is an untrusted
 * client. Always false with the back-off off (there is nothing to be exempt from).
 */
export async function claimDeviceAttempt(services: ConsoleServices, limiterKey: string): Promise<boolean> {
  const policy = loginBackoffPolicy(services);
  if (!policy) return false;
  return (await limiterOf(services).hit(limiterKey, policy.free, DEVICE_LOCK_MS)).allowed;
}

/** A device's password login succeeded: its failure count starts again. */
export async function clearDeviceAttempts(services: ConsoleServices, limiterKey: string): Promise<void> {
  await limiterOf(services).reset(limiterKey);
}
