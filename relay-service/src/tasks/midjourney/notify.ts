/**
 * The relay's own Midjourney callback (ADR 036). With MjNotifyEnabled, each submit gets a fresh random secret; the
 * upstream is told to POST the task to `<ServerAddress>/mj/notify/<secret>` (midjourney-proxy's `notifyHook`) and
 * only the secret's SHA-256 is stored on the task row. A callback is heard only when its secret hashes to the
 * stored value of the task its body names (compared in constant time); even then the body is only a hint: the
 * relay fetches the task from its upstream and applies what the upstream says (poller.ts `callback`).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The callback path under the relay's public base; the secret is its last segment. */
export const NOTIFY_PATH = '/mj/notify';

/** 32 random bytes, base64url: 43 characters. */
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const HASH_SHAPE = /^[0-9a-f]{64}$/;

export function newNotifySecret(): string {
  return randomBytes(32).toString('base64url');
}

/** What the task row keeps of a secret. */
export function notifyHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Whether a secret can be one the relay made (checked before any lookup). */
export function wellFormedSecret(secret: string): boolean {
  return SECRET_SHAPE.test(secret);
}

/** Whether `secret` is the one whose hash a task row stores, compared in constant time. */
export function secretMatches(secret: string, storedHash: string): boolean {
  if (!wellFormedSecret(secret) || !HASH_SHAPE.test(storedHash)) return false;
  return timingSafeEqual(Buffer.from(notifyHash(secret), 'hex'), Buffer.from(storedHash, 'hex'));
}

/**
 * The callback URL for a secret under the gateway's public address (ServerAddress, which routes `/mj` to the
 * relay); null when that address is not an http(s) URL, so no callback can be asked for.
 */
export function notifyUrl(serverAddress: string, secret: string): string | null {
  const base = serverAddress.trim().replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.search || url.hash) return null;
  return `${base}${NOTIFY_PATH}/${secret}`;
}
