import type { ConsoleServices } from '#app/services.server.ts';

/**
 * Device cookies (OWASP "Slow Down Online Guessing Attacks with Device Cookies"; ADR 037): a browser that has
 * logged in to an account with its password carries a signed cookie naming that account, and its correct
 * password is never refused by the account's login back-off (ADR 018), so nobody can lock an owner out by
 * guessing at their name. Each device cookie has its own failure count: after LOGIN_BACKOFF_FAILURES wrong
 * passwords in a row it is no longer trusted (until a correct login through the account's back-off issues a
 * new one), so a stolen cookie buys a handful of guesses, not a way around the back-off.
 *
 * Cookie `sy_device_<user id>` = base64url(JSON {u: user id, n: random nonce, t: issued, unix ms}) "." +
 * base64url(HMAC-SHA-256). The key is derived from SESSION_SECRET; without it, from a random secret of this
 * process (device cookies then end with the process). One cookie per account, so a browser used for several
 * accounts keeps each.
 */

export const DEVICE_COOKIE_PREFIX = 'sy_device_';
/** How long a device stays trusted after its last password login (each login issues a fresh cookie). */
export const DEVICE_TTL_MS = 365 * 24 * 60 * 60 * 1000;

/** A device cookie that verified for the account: its nonce keys its own failure count. */
export type TrustedDevice = { nonce: string; limiterKey: string };

type Payload = { u: number; n: string; t: number };

const processSecret = base64url(crypto.getRandomValues(new Uint8Array(32)));
const keys = new Map<string, Promise<CryptoKey>>();
const encoder = new TextEncoder();

/** The HMAC key for device cookies: derived from SESSION_SECRET (or this process's random secret). */
function deviceKey(services: ConsoleServices): Promise<CryptoKey> {
  const secret = services.auth?.sessionSecret || processSecret;
  let key = keys.get(secret);
  if (!key) {
    key = (async () => {
      const master = await crypto.subtle.importKey(
        'raw',
        encoder.encode(secret),
        { name: 'HMAC', hash: 'SHA-256' },
        false,
        ['sign'],
      );
      // A key of its own (HMAC(secret, label)), so a device cookie signature is never valid for another use.
      const derived = await crypto.subtle.sign('HMAC', master, encoder.encode('switchyard/device-cookie/v1'));
      return crypto.subtle.importKey('raw', derived, { name: 'HMAC', hash: 'SHA-256' }, false, [
        'sign',
        'verify',
      ]);
    })();
    keys.set(secret, key);
  }
  return key;
}

export function deviceCookieName(userId: number): string {
  return `${DEVICE_COOKIE_PREFIX}${userId}`;
}

function isSecure(request: Request): boolean {
  return new URL(request.url).protocol === 'https:' || request.headers.get('X-Forwarded-Proto') === 'https';
}

/** The Set-Cookie value of a fresh device cookie for `userId` (after a successful password login). */
export async function issueDeviceCookie(
  services: ConsoleServices,
  request: Request,
  userId: number,
): Promise<string> {
  const payload: Payload = {
    u: userId,
    n: base64url(crypto.getRandomValues(new Uint8Array(16))),
    t: Date.now(),
  };
  const body = base64url(encoder.encode(JSON.stringify(payload)));
  const signature = await crypto.subtle.sign('HMAC', await deviceKey(services), encoder.encode(body));
  return [
    `${deviceCookieName(userId)}=${body}.${base64url(new Uint8Array(signature))}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${Math.floor(DEVICE_TTL_MS / 1000)}`,
    isSecure(request) ? 'Secure' : '',
  ]
    .filter(Boolean)
    .join('; ');
}

/**
 * The device cookie this request carries for `userId` when its signature verifies, it names that user and it
 * is younger than DEVICE_TTL_MS; else null. (Whether it is still trusted is the caller's failure count.)
 */
export async function readDeviceCookie(
  services: ConsoleServices,
  request: Request,
  userId: number,
): Promise<TrustedDevice | null> {
  const value = cookieValue(request.headers.get('Cookie'), deviceCookieName(userId));
  if (!value || value.length > 512) return null;
  const dot = value.indexOf('.');
  if (dot <= 0) return null;
  const body = value.slice(0, dot);
  const signature = fromBase64url(value.slice(dot + 1));
  if (!signature || !/^[A-Za-z0-9_-]+$/.test(body)) return null;
  const valid = await crypto.subtle.verify(
    'HMAC',
    await deviceKey(services),
    signature,
    encoder.encode(body),
  );
  if (!valid) return null;
  let payload: Partial<Payload>;
  try {
    payload = JSON.parse(new TextDecoder().decode(fromBase64url(body) ?? new Uint8Array()));
  } catch {
    return null;
  }
  if (payload.u !== userId || typeof payload.n !== 'string' || typeof payload.t !== 'number') return null;
  if (Date.now() - payload.t >= DEVICE_TTL_MS) return null;
  return { nonce: payload.n, limiterKey: `rl:login-device:${payload.n}` };
}

function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq >= 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

function fromBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}
