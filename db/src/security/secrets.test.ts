import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import {
  channelKeySlot,
  createSecretBox,
  optionSlot,
  PLAINTEXT_BOX,
  parseSecretsKey,
  SecretsError,
  sealedKeyId,
  TOKEN_KEY_HASH,
} from './secrets.ts';

const KEY_A = Buffer.alloc(32, 7).toString('base64');
const KEY_B = Buffer.alloc(32, 9).toString('hex');

describe('SECRETS_KEY format', () => {
  it('takes 32 bytes as hex, base64 or base64url and nothing else', () => {
    expect(parseSecretsKey(KEY_B)).toBeInstanceOf(Uint8Array);
    expect(parseSecretsKey(KEY_A)).toBeInstanceOf(Uint8Array);
    expect(parseSecretsKey(Buffer.alloc(32, 250).toString('base64url'))).toBeInstanceOf(Uint8Array);
    for (const bad of ['', 'short', 'a passphrase that is long enough but is not a key', 'ab'.repeat(31)])
      expect(typeof parseSecretsKey(bad)).toBe('string');
    // 31 bytes in base64 is 44 characters too, but not a key
    expect(typeof parseSecretsKey(Buffer.alloc(31, 1).toString('base64'))).toBe('string');
  });
});

describe('SecretBox', () => {
  it('seals with a random IV into enc:v1:<key id>:…, opens it, and leaves empty values alone', async () => {
    const box = await createSecretBox({ key: KEY_A });
    const slot = channelKeySlot(12);
    const a = await box.seal('sk-upstream-secret', slot);
    const b = await box.seal('sk-upstream-secret', slot);
    expect(a).toMatch(/^enc:v1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
    expect(sealedKeyId(a)).toBe(box.keyId);
    expect(a).not.toBe(b);
    expect(a).not.toContain('sk-upstream');
    expect(await box.open(a, slot)).toBe('sk-upstream-secret');
    expect(await box.seal('', slot)).toBe('');
  });

  it('reads plaintext rows as they are (rows from before the key)', async () => {
    const box = await createSecretBox({ key: KEY_A });
    expect(await box.open('sk-plain', channelKeySlot(1))).toBe('sk-plain');
    expect(await PLAINTEXT_BOX.seal('sk-plain', channelKeySlot(1))).toBe('sk-plain');
  });

  it('refuses a ciphertext moved to another row or column, altered, or under an unknown key', async () => {
    const box = await createSecretBox({ key: KEY_A });
    const sealed = await box.seal('sk-row-1', channelKeySlot(1));
    await expect(box.open(sealed, channelKeySlot(2))).rejects.toThrow(SecretsError);
    await expect(box.open(sealed, optionSlot('SMTPToken'))).rejects.toThrow(/another row/);
    const body = sealed.slice(sealed.lastIndexOf(':') + 1);
    const flipped = Buffer.from(body, 'base64url');
    flipped[flipped.length - 1] = (flipped.at(-1) ?? 0) ^ 1;
    await expect(
      box.open(
        `${sealed.slice(0, sealed.lastIndexOf(':') + 1)}${flipped.toString('base64url')}`,
        channelKeySlot(1),
      ),
    ).rejects.toThrow(SecretsError);
    const other = await createSecretBox({ key: KEY_B });
    await expect(other.open(sealed, channelKeySlot(1))).rejects.toThrow(/not configured/);
    await expect(PLAINTEXT_BOX.open(sealed, channelKeySlot(1))).rejects.toThrow(/SECRETS_KEY is not set/);
  });

  it('opens values of a previous key and seals with the current one', async () => {
    const old = await createSecretBox({ key: KEY_A });
    const sealed = await old.seal('sk-old', channelKeySlot(3));
    const rotated = await createSecretBox({ key: KEY_B, previous: KEY_A });
    expect(rotated.keyIds).toEqual([rotated.keyId, old.keyId]);
    expect(await rotated.open(sealed, channelKeySlot(3))).toBe('sk-old');
    expect(sealedKeyId(await rotated.seal('sk-new', channelKeySlot(3)))).toBe(rotated.keyId);
    const off = await createSecretBox({ previous: KEY_A });
    expect(off.enabled).toBe(false);
    expect(await off.open(sealed, channelKeySlot(3))).toBe('sk-old');
    expect(await off.seal('sk-plain', channelKeySlot(3))).toBe('sk-plain');
  });

  it('refuses a malformed key at creation, naming the variable', async () => {
    await expect(createSecretBox({ key: 'too short' })).rejects.toThrow(
      /^SECRETS_KEY must be 32 random bytes/,
    );
    await expect(createSecretBox({ key: KEY_A, previous: `${KEY_B},nope` })).rejects.toThrow(
      /^SECRETS_KEY_PREVIOUS must be/,
    );
  });

  it('hashes for lookup under an HKDF subkey: <key id>:HMAC, stable per key, one per key held, none without', async () => {
    const a = await createSecretBox({ key: KEY_A });
    const b = await createSecretBox({ key: KEY_B });
    const rotating = await createSecretBox({ key: KEY_B, previous: KEY_A });
    const key = 'k'.repeat(48);
    const hash = a.lookupHash(key, TOKEN_KEY_HASH);
    expect(hash).toMatch(new RegExp(`^${a.keyId}:[A-Za-z0-9_-]{43}$`));
    expect(a.lookupHash(key, TOKEN_KEY_HASH)).toBe(hash);
    expect(a.lookupHash(`${key}x`, TOKEN_KEY_HASH)).not.toBe(hash);
    expect(a.lookupHash(key, 'other.column')).not.toBe(hash);
    // Not the plain HMAC under the AES key itself, and another key gives another hash.
    const { createHmac } = await import('node:crypto');
    const underRaw = createHmac('sha256', Buffer.from(KEY_A, 'base64'))
      .update(`${TOKEN_KEY_HASH}\u0000${key}`)
      .digest('base64url');
    expect(hash).not.toContain(underRaw);
    expect(b.lookupHash(key, TOKEN_KEY_HASH)).not.toBe(hash);
    expect(rotating.lookupHashes(key, TOKEN_KEY_HASH)).toEqual([b.lookupHash(key, TOKEN_KEY_HASH), hash]);
    expect(PLAINTEXT_BOX.lookupHash(key, TOKEN_KEY_HASH)).toBeNull();
    expect(PLAINTEXT_BOX.lookupHashes(key, TOKEN_KEY_HASH)).toEqual([]);
    expect((await createSecretBox({ previous: KEY_A })).lookupHash(key, TOKEN_KEY_HASH)).toBeNull();
  });
});
