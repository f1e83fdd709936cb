/**
 * The one rule for every redirect whose target a client supplied (`redirectTo` after login, after a row
 * action, after a preference form; issue 23 item 6): same origin, path only.
 *
 * Browsers are lenient where a naive prefix check is not: they drop tab, CR and LF anywhere in a URL
 * (`/\t/evil.com` is `//evil.com`), read a backslash as a slash in http(s) URLs (`/\evil.com`), and take
 * `//host` or `https:host` as another origin. So the target is refused when it holds a control character or
 * a backslash (also percent-encoded, in case a later hop decodes once more), then resolved with the WHATWG URL
 * parser (the one browsers use): a path against our origin, anything else as a whole URL. Only a same-origin
 * result whose path cannot be read as `//host` is kept, and then only its path, query and fragment. Anything
 * else gives `fallback`.
 */

/** Stands in for the request's origin when none is given: any fixed special (http) origin decides the same. */
const PLACEHOLDER_ORIGIN = 'http://switchyard.invalid';

/** Whether `text` holds a C0 control, DEL or a C1 control. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

const MAX_TARGET_LENGTH = 2048;

export type SafeRedirectOptions = {
  /** The request (or its URL) whose origin the target must keep; a placeholder origin when absent. */
  base?: Request | URL | string;
  /** Paths the target must not be (e.g. the login page itself after login): then `fallback`. */
  avoid?: RegExp;
};

/** A same-origin `path?query#hash` from a client-supplied target, or `fallback` (a trusted constant). */
export function safeRedirect(target: unknown, fallback = '/', options: SafeRedirectOptions = {}): string {
  if (typeof target !== 'string' || target === '' || target.length > MAX_TARGET_LENGTH) return fallback;
  if (hasControlCharacter(target) || target.includes('\\')) return fallback;
  const decoded = decodeOnce(target);
  if (decoded === null || hasControlCharacter(decoded) || decoded.includes('\\')) return fallback;
  const origin = originOf(options.base);
  let url: URL;
  try {
    // A path resolves against our origin; anything else must be a whole URL by itself (so `https:host`,
    // which the parser would read as a path relative to an https base, is judged as the browser's `https://host`).
    url = target.startsWith('/') ? new URL(target, origin) : new URL(target);
  } catch {
    return fallback;
  }
  if (url.origin !== origin || url.username || url.password) return fallback;
  // `/.//evil.com` normalises to the path `//evil.com`, which a browser would read as another host; so would
  // `/%2F%2Fevil.com` if some hop decoded it.
  if (url.pathname.startsWith('//') || (decodeOnce(url.pathname) ?? '//').startsWith('//')) return fallback;
  const path = url.pathname + url.search + url.hash;
  if (options.avoid?.test(url.pathname)) return fallback;
  return path;
}

function originOf(base: SafeRedirectOptions['base']): string {
  if (base === undefined) return PLACEHOLDER_ORIGIN;
  try {
    const origin = new URL(base instanceof Request ? base.url : base).origin;
    return origin === 'null' ? PLACEHOLDER_ORIGIN : origin;
  } catch {
    return PLACEHOLDER_ORIGIN;
  }
}

function decodeOnce(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}
