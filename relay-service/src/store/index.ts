/**
 * Entry point of the relay's shared state: the relay picks Redis or memory once at start and then only sees
 * the RelayStore interface, so the pipeline never branches on where its state lives.
 */
import type { Logger } from '../log.ts';
import { MemoryStore } from './memory.ts';
import { RedisStore } from './redis.ts';
import type { RelayStore } from './types.ts';

export { MemoryStore, type MemoryStoreOptions } from './memory.ts';
export { RedisStore, type RedisStoreOptions } from './redis.ts';
export { StoreClosedError } from './shared.ts';
export type {
  AccountKind,
  AccountRef,
  OutboxEntry,
  RateLimit,
  RelayStore,
  ReserveRequest,
  ReserveResult,
  SettleRequest,
  StoreMode,
} from './types.ts';

/** Redis when REDIS_URL is set, otherwise the in-process store (single instance only, logged once). */
export async function createStore(opts: {
  redisUrl?: string | undefined;
  keyPrefix?: string;
  /** How long to wait for the first Redis connection before starting not-ready. */
  waitMs?: number;
  log: Logger;
}): Promise<RelayStore> {
  if (!opts.redisUrl) {
    opts.log.info(
      'REDIS_URL is not set: using the in-process store, which supports a single relay instance only',
    );
    return new MemoryStore();
  }
  const store = new RedisStore({
    url: opts.redisUrl,
    log: opts.log,
    ...(opts.keyPrefix ? { keyPrefix: opts.keyPrefix } : {}),
  });
  if (!(await store.waitUntilReady(opts.waitMs ?? 5_000))) {
    opts.log.warn('Redis is not reachable yet: the relay starts not-ready (/readyz 503) until it connects');
  }
  return store;
}
