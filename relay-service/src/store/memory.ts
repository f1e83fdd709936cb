import type { RelayStore } from './types.ts';

/** In-process store: state lives in this process, so only one relay instance may run. */
export class MemoryStore implements RelayStore {
  readonly mode = 'memory' as const;
  #closed = false;

  async ping(): Promise<void> {
    if (this.#closed) throw new Error('store is closed');
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
