import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { AuditEntry } from '../entities/audit-entry.ts';
import { Option } from '../entities/option.ts';
import type { PubSub } from '../pubsub.ts';
import { optionSlot, PLAINTEXT_BOX, type SecretBox } from '../security/secrets.ts';
import {
  isOptionKey,
  normalizeOptionInput,
  OPTION_KEYS,
  OPTIONS,
  type OptionKey,
  OptionValidationError,
  type OptionValue,
  parseOptionValue,
} from './registry.ts';

/** Redis channel on which option changes are announced (payload: {"key": ..., "origin": ...}). */
export const OPTIONS_CHANNEL = 'switchyard:options';

export type OptionServiceDeps = {
  /** Either an ORM (the service forks its EntityManager) ... */
  orm?: MikroORM;
  /** ... or a factory of fresh EntityManagers. */
  em?: () => EntityManager;
  pubsub: PubSub;
  /** Defaults to OPTIONS_CHANNEL; tests may isolate themselves. */
  channel?: string;
  /** Seals secret options on write and opens them on read (SECRETS_KEY); default: plaintext. */
  secrets?: SecretBox;
};

export type OptionEntry = { key: string; value: string };
export type OptionChangeListener = (key: OptionKey) => void;

type CacheEntry = { raw: string; value: unknown };

const REDACTED = '[redacted]';

/**
 * In-memory, typed view of the `options` table. `load()` once at start; `get()` is synchronous. `set()`
 * validates, writes the row and an AuditEntry in one transaction, and announces the key on pub/sub; every
 * instance (this one included) reloads that key from the database.
 */
export class OptionService {
  readonly #emFactory: () => EntityManager;
  readonly #pubsub: PubSub;
  readonly #channel: string;
  readonly #secrets: SecretBox;
  readonly #origin = crypto.randomUUID();
  readonly #cache = new Map<OptionKey, CacheEntry>();
  readonly #listeners = new Set<OptionChangeListener>();
  #unsubscribe: (() => Promise<void>) | null = null;
  #stopResubscribe: (() => void) | null = null;
  #loaded = false;

  constructor(deps: OptionServiceDeps) {
    const { orm, em } = deps;
    if (em) this.#emFactory = em;
    else if (orm) this.#emFactory = () => orm.em.fork();
    else throw new Error('OptionService needs an orm or an em factory');
    this.#pubsub = deps.pubsub;
    this.#channel = deps.channel ?? OPTIONS_CHANNEL;
    this.#secrets = deps.secrets ?? PLAINTEXT_BOX;
    for (const key of OPTION_KEYS) this.#setDefault(key);
  }

  /**
   * Reads every row into the cache (defaults for missing or invalid rows) and subscribes to changes. Throws
   * SecretsError when a sealed secret option does not open (wrong or missing SECRETS_KEY, altered row).
   */
  async load(): Promise<void> {
    if (!this.#unsubscribe) {
      this.#unsubscribe = await this.#pubsub.subscribe(this.#channel, (message) => {
        void this.#onMessage(message);
      });
      // Changes announced while the pub/sub was reconnecting were missed: read every option again.
      this.#stopResubscribe =
        this.#pubsub.onResubscribe?.(() => {
          this.load().catch((err) => console.error('[options] reload after reconnecting failed', err));
        }) ?? null;
    }
    const rows = await this.#emFactory().find(Option, {});
    const seen = new Set<OptionKey>();
    const values = await Promise.all(
      rows.map((row) => (isOptionKey(row.key) ? this.#open(row.key, row.value) : null)),
    );
    rows.forEach((row, i) => {
      const value = values[i];
      if (!isOptionKey(row.key) || value == null) return;
      seen.add(row.key);
      this.#store(row.key, value);
    });
    for (const key of OPTION_KEYS) if (!seen.has(key)) this.#setDefault(key);
    this.#loaded = true;
  }

  get loaded(): boolean {
    return this.#loaded;
  }

  /** The typed value of `key` (the default until the option is set). */
  get<K extends OptionKey>(key: K): OptionValue<K> {
    const entry = this.#cache.get(key);
    if (!entry) throw new OptionValidationError(key, 'unknown option');
    return entry.value as OptionValue<K>;
  }

  /** The stored string form of `key`. */
  getRaw(key: OptionKey): string {
    const entry = this.#cache.get(key);
    if (!entry) throw new OptionValidationError(key, 'unknown option');
    return entry.raw;
  }

  /**
   * Every option as the console's `GET /api/option/` list of {key, value} strings. Without
   * `includeSecrets`, secret options are returned with an empty value.
   */
  all(opts: { includeSecrets?: boolean } = {}): OptionEntry[] {
    return OPTION_KEYS.map((key) => ({
      key,
      value: OPTIONS[key].secret && !opts.includeSecrets ? '' : this.getRaw(key),
    }));
  }

  /**
   * Validates and stores one option (a string as sent by the console, or a typed value), records an
   * AuditEntry (secret values redacted) and announces the change. Throws OptionValidationError.
   */
  async set<K extends OptionKey>(
    key: K,
    input: string | OptionValue<K>,
    actorId?: number | null,
    meta: { ip?: string } = {},
  ): Promise<OptionValue<K>> {
    if (!isOptionKey(key)) throw new OptionValidationError(String(key), 'unknown option');
    const { raw, value } = normalizeOptionInput(key, input);
    const secret = OPTIONS[key].secret;
    const em = this.#emFactory();
    await em.transactional(async (tx) => {
      const existing = await tx.findOne(Option, { key }, { lockMode: 4 /* PESSIMISTIC_WRITE */ });
      const before = existing ? existing.value : null;
      await tx.upsert(Option, { key, value: secret ? await this.#secrets.seal(raw, optionSlot(key)) : raw });
      tx.create(AuditEntry, {
        actorId: actorId ?? null,
        action: 'option.set',
        targetType: 'option',
        targetId: key,
        before: JSON.stringify({ value: before === null ? null : secret ? REDACTED : before }),
        after: JSON.stringify({ value: secret ? REDACTED : raw }),
        ip: meta.ip ?? '',
      });
    });
    this.#store(key, raw);
    try {
      await this.#pubsub.publish(this.#channel, JSON.stringify({ key, origin: this.#origin }));
    } catch (err) {
      console.error('[options] failed to announce a change; other processes keep the old value', err);
    }
    return value;
  }

  /** Called after any key changes (locally or announced by another process). Returns an unsubscribe. */
  onChange(listener: OptionChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Re-reads one key from the database. */
  async reload(key: OptionKey): Promise<void> {
    const row = await this.#emFactory().findOne(Option, { key });
    if (row) this.#store(key, await this.#open(key, row.value));
    else this.#setDefault(key);
  }

  async close(): Promise<void> {
    const unsubscribe = this.#unsubscribe;
    this.#unsubscribe = null;
    this.#stopResubscribe?.();
    this.#stopResubscribe = null;
    if (unsubscribe) await unsubscribe();
  }

  async #onMessage(message: string): Promise<void> {
    let key: unknown;
    try {
      key = (JSON.parse(message) as { key?: unknown }).key;
    } catch {
      return;
    }
    if (typeof key !== 'string' || !isOptionKey(key)) return;
    try {
      await this.reload(key);
    } catch (err) {
      console.error(`[options] reload of ${key} failed`, err);
    }
  }

  /** The one place a stored option is read: secret options are opened (plaintext rows pass through). */
  #open(key: OptionKey, stored: string): Promise<string> {
    return OPTIONS[key].secret ? this.#secrets.open(stored, optionSlot(key)) : Promise.resolve(stored);
  }

  #setDefault(key: OptionKey): void {
    const raw = OPTIONS[key].default;
    this.#put(key, { raw, value: parseOptionValue(key, raw) });
  }

  /** Caches a stored value; an invalid stored value falls back to the default (and is logged). */
  #store(key: OptionKey, raw: string): void {
    try {
      this.#put(key, { raw, value: parseOptionValue(key, raw) });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      console.error(`[options] stored value is invalid, using the default: ${reason}`);
      this.#setDefault(key);
    }
  }

  #put(key: OptionKey, entry: CacheEntry): void {
    const prev = this.#cache.get(key);
    this.#cache.set(key, entry);
    if (prev && prev.raw !== entry.raw) {
      for (const listener of this.#listeners) {
        try {
          listener(key);
        } catch (err) {
          console.error('[options] change listener failed', err);
        }
      }
    }
  }
}
