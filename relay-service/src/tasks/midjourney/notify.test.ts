import { describe, expect, it } from 'vitest';
import { newNotifySecret, notifyHash, notifyUrl, secretMatches, wellFormedSecret } from './notify.ts';

describe('Midjourney callback secrets (ADR 036)', () => {
  it('are 256 random bits, base64url, different every time; only their SHA-256 is kept', () => {
    const a = newNotifySecret();
    const b = newNotifySecret();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(notifyHash(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(notifyHash(a)).not.toContain(a);
  });

  it('match only the secret whose hash is stored', () => {
    const secret = newNotifySecret();
    const stored = notifyHash(secret);
    expect(secretMatches(secret, stored)).toBe(true);
    expect(secretMatches(newNotifySecret(), stored)).toBe(false);
    expect(secretMatches(`${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`, stored)).toBe(false);
    // A task given no callback URL stores '': nothing matches it, not even an empty secret.
    expect(secretMatches('', '')).toBe(false);
    expect(secretMatches(secret, '')).toBe(false);
    expect(wellFormedSecret('short')).toBe(false);
    expect(wellFormedSecret(`${secret}\0`)).toBe(false);
  });

  it('go in a callback URL under an http(s) ServerAddress, and nowhere else', () => {
    const s = newNotifySecret();
    expect(notifyUrl('https://gw.example/', s)).toBe(`https://gw.example/mj/notify/${s}`);
    expect(notifyUrl(' https://gw.example/api// ', s)).toBe(`https://gw.example/api/mj/notify/${s}`);
    expect(notifyUrl('', s)).toBeNull();
    expect(notifyUrl('gw.example', s)).toBeNull();
    expect(notifyUrl('javascript:alert(1)', s)).toBeNull();
    expect(notifyUrl('https://gw.example/?a=1', s)).toBeNull();
  });
});
