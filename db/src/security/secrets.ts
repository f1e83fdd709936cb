/**
 * Secrets at rest (ADR 019, ADR 035): channel keys, secret options, `sk-` token keys and webhook secrets are
 * sealed with AES-256-GCM through WebCrypto when SECRETS_KEY is set. A sealed value reads `enc:v1:<key id>:<base64url(iv ‖ ciphertext ‖ tag)>`; anything else is
 * plaintext (rows from before, or a process without a key), so mixed tables read. The associated data names the
 * value's table, column and row (`channels.key:12`, `options.value:SMTPToken`): a ciphertext copied to another
 * row does not open.
 */
import { Buffer } from 'node:buffer';
import { createHmac, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';

export const SEALED_PREFIX = 'enc:v1:';
const KEY_BYTES = 32;
const IV_BYTES = 12;

export class SecretsError extends Error {
  override name = 'SecretsError';
}

/** Where a sealed value lives; the associated data of its ciphertext. */
export type SecretSlot = string;
export const channelKeySlot = (channelId: number): SecretSlot => `channels.key:${channelId}`;
export const optionSlot = (key: string): SecretSlot => `options.value:${key}`;
export const tokenKeySlot = (tokenId: number): SecretSlot => `tokens.key:${tokenId}`;
/** A user's webhook secret inside `users.setting` (copies in notification_outbox payloads open with it too). */
export const webhookSecretSlot = (userId: number): SecretSlot => `users.setting.webhook_secret:${userId}`;

/** What a keyed lookup hash is for (part of the hashed message, so one column's hashes never match another's). */
export const TOKEN_KEY_HASH = 'tokens.key';

/**
 * SECRETS_KEY's format: exactly 32 random bytes, as 64 hex digits or base64 / base64url (43 or 44 characters;
 * `openssl rand -base64 32`). No passphrases: a key derived from a human phrase without a slow KDF is only as
 * strong as the phrase (ADR 019). Returns the bytes, or a message saying what is wrong.
 */
export function parseSecretsKey(text: string): Uint8Array<ArrayBuffer> | string {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Uint8Array.from(Buffer.from(value, 'hex'));
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const bytes = Buffer.from(value.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
    if (bytes.length === KEY_BYTES) return Uint8Array.from(bytes);
  }
  return SECRETS_KEY_FORMAT;
}

export const SECRETS_KEY_FORMAT =
  'must be 32 random bytes as 64 hex digits or base64 (e.g. `openssl rand -base64 32`)';

/** Error message for a bad SECRETS_KEY / SECRETS_KEY_PREVIOUS value (config validation), or null. */
export function secretsKeyProblem(text: string, list = false): string | null {
  const parts = list ? splitKeyList(text) : [text];
  for (const part of parts) {
    const parsed = parseSecretsKey(part);
    if (typeof parsed === 'string') return parsed;
  }
  return null;
}

function splitKeyList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const b64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');

/** The key id written into sealed values: 8 hex digits of SHA-256 over the key (reveals nothing usable). */
async function keyIdOf(raw: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', raw));
  return Buffer.from(digest.subarray(0, 4)).toString('hex');
}

type Key = { id: string; key: CryptoKey; hmac: KeyObject };

/** HKDF info of the lookup-hash subkey: the AES key itself is never used for anything but AES-GCM. */
const LOOKUP_HASH_INFO = 'switchyard lookup hash v1';

async function importKey(raw: Uint8Array<ArrayBuffer>): Promise<Key> {
  const key = await crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
  const hmac = createSecretKey(
    Buffer.from(hkdfSync('sha256', raw, new Uint8Array(0), LOOKUP_HASH_INFO, KEY_BYTES)),
  );
  return { id: await keyIdOf(raw), key, hmac };
}

/**
 * HMAC-SHA256 through node:crypto (also in Deno), synchronously: about 1.5 µs where WebCrypto's promise costs about
 * 40 µs on the shared VM, and it runs on the relay's account-cache misses.
 */
function lookupHashWith(k: Key, value: string, purpose: string): string {
  const mac = createHmac('sha256', k.hmac).update(`${purpose}\u0000${value}`).digest('base64url');
  return `${k.id}:${mac}`;
}

export type SecretBox = {
  /** True when values are sealed on write (SECRETS_KEY is set). */
  readonly enabled: boolean;
  /** Id of the key new values are sealed with; null without SECRETS_KEY. */
  readonly keyId: string | null;
  /** Ids of every key this box opens (the current one first). */
  readonly keyIds: readonly string[];
  /** The stored form of `plaintext` in `slot`: sealed with the current key; unchanged without one or when ''. */
  seal(plaintext: string, slot: SecretSlot): Promise<string>;
  /** The plaintext of a stored value: plaintext passes through; a sealed value opens or throws SecretsError. */
  open(stored: string, slot: SecretSlot): Promise<string>;
  /**
   * The keyed lookup hash of `value` (ADR 035): `<key id>:<base64url(HMAC-SHA256)>` under a subkey HKDF derives
   * from SECRETS_KEY, so the stored hash is useless without the key; null without SECRETS_KEY (nothing is hashed).
   */
  lookupHash(value: string, purpose: string): string | null;
  /** The lookup hashes of `value` under every key this box holds, current first: what a lookup probes. */
  lookupHashes(value: string, purpose: string): string[];
};

/** The key id of a lookup hash. */
export const lookupHashKeyId = (hash: string): string => hash.slice(0, hash.indexOf(':'));

/** The key id of a sealed value, or null for plaintext. */
export function sealedKeyId(stored: string): string | null {
  if (!stored.startsWith(SEALED_PREFIX)) return null;
  const end = stored.indexOf(':', SEALED_PREFIX.length);
  return end > 0 ? stored.slice(SEALED_PREFIX.length, end) : '';
}

export const isSealed = (stored: string): boolean => stored.startsWith(SEALED_PREFIX);

/**
 * A box from SECRETS_KEY (`key`, seals and opens) and SECRETS_KEY_PREVIOUS (`previous`, comma-separated, opens
 * only: values sealed before a rotation). Without `key` new values stay plaintext. Throws SecretsError on a
 * malformed key.
 */
export async function createSecretBox(
  opts: { key?: string | null; previous?: string | null } = {},
): Promise<SecretBox> {
  const raws: Uint8Array<ArrayBuffer>[] = [];
  const take = (text: string, name: string) => {
    const parsed = parseSecretsKey(text);
    if (typeof parsed === 'string') throw new SecretsError(`${name} ${parsed}`);
    raws.push(parsed);
  };
  const current = opts.key?.trim() ? opts.key : null;
  if (current) take(current, 'SECRETS_KEY');
  for (const part of splitKeyList(opts.previous ?? '')) take(part, 'SECRETS_KEY_PREVIOUS');
  const keys = await Promise.all(raws.map(importKey));
  const byId = new Map<string, Key>();
  for (const k of keys) if (!byId.has(k.id)) byId.set(k.id, k);
  const sealWith = current ? (keys[0] ?? null) : null;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder('utf-8', { fatal: true });

  return {
    enabled: sealWith !== null,
    keyId: sealWith?.id ?? null,
    keyIds: [...byId.keys()],
    lookupHash(value, purpose) {
      return sealWith ? lookupHashWith(sealWith, value, purpose) : null;
    },
    lookupHashes(value, purpose) {
      return [...byId.values()].map((k) => lookupHashWith(k, value, purpose));
    },
    async seal(plaintext, slot) {
      if (!sealWith || plaintext === '') return plaintext; // an empty value (unset) hides nothing
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const sealed = new Uint8Array(
        await crypto.subtle.encrypt(
          { name: 'AES-GCM', iv, additionalData: encoder.encode(slot) },
          sealWith.key,
          encoder.encode(plaintext),
        ),
      );
      const out = new Uint8Array(IV_BYTES + sealed.length);
      out.set(iv);
      out.set(sealed, IV_BYTES);
      return `${SEALED_PREFIX}${sealWith.id}:${b64url(out)}`;
    },
    async open(stored, slot) {
      const id = sealedKeyId(stored);
      if (id === null) return stored;
      const key = byId.get(id);
      if (!key)
        throw new SecretsError(
          `${slot} is encrypted with key ${id || '(none)'}, which is not configured (SECRETS_KEY / SECRETS_KEY_PREVIOUS)`,
        );
      const bytes = Buffer.from(stored.slice(SEALED_PREFIX.length + id.length + 1), 'base64url');
      if (bytes.length < IV_BYTES + 16) throw new SecretsError(`${slot} holds a truncated encrypted value`);
      try {
        const plain = await crypto.subtle.decrypt(
          { name: 'AES-GCM', iv: bytes.subarray(0, IV_BYTES), additionalData: encoder.encode(slot) },
          key.key,
          bytes.subarray(IV_BYTES),
        );
        return decoder.decode(plain);
      } catch {
        throw new SecretsError(
          `${slot} does not decrypt with key ${id}: the value was altered or belongs to another row`,
        );
      }
    },
  };
}

/** The box of a process without SECRETS_KEY: values are stored and read as they are. */
export const PLAINTEXT_BOX: SecretBox = {
  enabled: false,
  keyId: null,
  keyIds: [],
  seal: async (plaintext) => plaintext,
  open: async (stored, slot) => {
    if (isSealed(stored)) throw new SecretsError(`${slot} is encrypted but SECRETS_KEY is not set`);
    return stored;
  },
  lookupHash: () => null,
  lookupHashes: () => [],
};

/**
 * Where sealed values live (the start check and the rotation walk these). `expr` is the SQL expression giving the
 * stored value of a row: the column itself, or the webhook secret inside a JSON text (`users.setting`, and the
 * copy of the setting in a quota warning's notification_outbox payload, where its quotes are escaped). `slotId`
 * names the column whose value the slot is bound to; `hash` the column of a keyed lookup hash kept with the value.
 */
export const SEALED_COLUMNS = [
  {
    table: 'channels',
    column: 'key',
    id: 'id',
    expr: '"key"',
    slot: (id: string | number) => channelKeySlot(Number(id)),
  },
  {
    table: 'options',
    column: 'value',
    id: 'key',
    expr: '"value"',
    slot: (id: string | number) => optionSlot(String(id)),
  },
  {
    table: 'tokens',
    column: 'key',
    id: 'id',
    expr: '"key"',
    hash: { column: 'key_hash', purpose: TOKEN_KEY_HASH },
    slot: (id: string | number) => tokenKeySlot(Number(id)),
  },
  {
    table: 'users',
    column: 'setting',
    id: 'id',
    json: 'setting',
    expr: `substring("setting" from '"webhook_secret":"(enc:[^"]*)"')`,
    slot: (id: string | number) => webhookSecretSlot(Number(id)),
  },
  {
    table: 'notification_outbox',
    column: 'payload',
    id: 'id',
    slotId: 'user_id',
    json: 'payload.setting',
    expr: `substring("payload" from 'webhook_secret\\\\{0,1}":\\\\{0,1}"(enc:[^"\\\\]*)')`,
    slot: (id: string | number) => webhookSecretSlot(Number(id)),
  },
] as const satisfies readonly SealedColumn[];

export type SealedColumn = {
  table: string;
  column: string;
  /** primary key */
  id: string;
  /** the column the slot names (default: `id`) */
  slotId?: string;
  /** the value is the webhook secret inside this JSON text (`payload.setting`: a JSON text inside a JSON text) */
  json?: 'setting' | 'payload.setting';
  expr: string;
  hash?: { column: string; purpose: string };
  slot(id: string | number): SecretSlot;
};

type Sql = <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;

/**
 * Refuses to run a process that cannot read what is stored: throws SecretsError naming the key ids present in
 * the database that `box` does not hold (no SECRETS_KEY at all, or the wrong one). One scan of each table of
 * SEALED_COLUMNS at start. A single value that does not open under a key the box holds (altered, or moved from
 * another row) is not its business: the reader of that row degrades (ADR 035).
 */
export async function assertSecretsReadable(sql: Sql, box: SecretBox): Promise<void> {
  const missing: string[] = [];
  for (const { table, column, expr } of SEALED_COLUMNS) {
    const rows = await sql<{ kid: string; n: string | number }>(
      `select split_part(${expr}, ':', 3) as kid, count(*) as n from "${table}"
        where ${expr} like 'enc:%' group by 1`,
    );
    for (const row of rows)
      if (!box.keyIds.includes(row.kid)) missing.push(`${row.n} in ${table}.${column} under key ${row.kid}`);
  }
  if (missing.length === 0) return;
  const have = box.keyIds.length ? `configured key ids: ${box.keyIds.join(', ')}` : 'SECRETS_KEY is not set';
  throw new SecretsError(
    `encrypted secrets cannot be read (${missing.join('; ')}; ${have}). Start with the SECRETS_KEY that ` +
      'encrypted them (or list it in SECRETS_KEY_PREVIOUS), or run `npm run secrets:rotate` with it.',
  );
}
