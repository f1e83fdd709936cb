import { createClient } from 'redis';
import type { Logger } from '../log.ts';
import type { RelayStore } from './types.ts';

export type RedisStoreOptions = {
  url: string;
  /** Prefix of every key this store writes (tests use one per worker). */
  keyPrefix?: string;
  log: Logger;
};

/**
 * Redis-backed store, shared by every relay instance. Commands fail fast while Redis is unreachable (no
 * offline queue): the relay reports not-ready instead of piling requests up, and reconnects by itself.
 */
export class RedisStore implements RelayStore {
  readonly mode = 'redis' as const;
  readonly keyPrefix: string;
  readonly #client: ReturnType<typeof createClient>;
  readonly #connecting: Promise<unknown>;
  readonly #log: Logger;
  #down = false;
  #closed = false;

  constructor(opts: RedisStoreOptions) {
    this.keyPrefix = opts.keyPrefix ?? 'switchyard:';
    this.#log = opts.log;
    this.#client = createClient({
      url: opts.url,
      disableOfflineQueue: true,
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
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([this.#connecting, timeout]);
    clearTimeout(timer);
    return this.#client.isReady;
  }

  async ping(): Promise<void> {
    if (this.#closed) throw new Error('store is closed');
    if (!this.#client.isReady) throw new Error('Redis is not connected');
    await this.#client.ping();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#client.isReady) {
      await this.#client.close().catch(() => this.#client.destroy());
    } else if (this.#client.isOpen) {
      this.#client.destroy();
    }
    await this.#connecting;
  }
}
