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
 */

/** Outcome of one counted request: allowed, or refused with the milliseconds until a slot frees up. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

export interface RateLimiter {
  /** Counts one request against `key` (when allowed) and decides. */
  hit(key: string, max: number, windowMs: number): Promise<RateDecision>;
  /** Forgets `key` (tests, admin reset). */
  reset(key: string): Promise<void>;
}

export type CriticalLimitConfig = { max: number; windowSeconds: number };

export const DEFAULT_CRITICAL_LIMIT: CriticalLimitConfig = { max: 20, windowSeconds: 20 * 60 };

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

export function createRedisRateLimiter(
  redis: Pick<RedisClientType, 'eval' | 'del'>,
  prefix = 'switchyard:',
): RateLimiter {
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
    async reset(key) {
      await redis.del(`${prefix}${key}`);
    },
  };
}

export function createMemoryRateLimiter(): RateLimiter {
  const logs = new Map<string, number[]>();
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
    async reset(key) {
      logs.delete(key);
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
