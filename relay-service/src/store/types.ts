/**
 * The relay's shared state (ARCHITECTURE.md §1, §4): rate-limit windows, quota holds, caches, the usage outbox
 * and the leader lease live behind this interface, in Redis or, without REDIS_URL, in process memory.
 * Only connectivity is defined so far; the data structures land with the relay pipeline.
 */
export type StoreMode = 'redis' | 'memory';

export interface RelayStore {
  readonly mode: StoreMode;
  /** Resolves when the store answers; rejects when it is unreachable or closed. */
  ping(): Promise<void>;
  /** Releases connections; further calls reject. Safe to call twice. */
  close(): Promise<void>;
}
