/**
 * OAuth `state` bound to the browser (GET /api/oauth/state). The state travels to the provider in the
 * authorize link; the browser keeps an HttpOnly, SameSite=Lax cookie `sy_oauth.<id>` in the format of
 * remix-auth-oauth2's StateStore (`state=S&S=<binding>`), so the strategy itself refuses a callback whose
 * state this browser was not given. The binding is `<issued unix seconds>.<aff code>`. A state is single use:
 * the callback consumes it in a ledger (see consumeState) and clears the
 * cookie, so a replayed callback is refused even with a copied cookie.
 */
import { limiterOf } from '#app/domain/security/rate-limit.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

export const STATE_COOKIE = 'sy_oauth';
/** Seconds a state stays valid (cookie Max-Age and the server-side check). */
export const STATE_TTL_SECONDS = 600;

const AFF_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const STATE_PATTERN = /^[A-Za-z0-9_-]{20,64}$/;

function randomToken(bytes: number): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

function isSecure(request: Request): boolean {
  return new URL(request.url).protocol === 'https:' || request.headers.get('X-Forwarded-Proto') === 'https';
}

function cookieAttributes(request: Request, maxAge: number): string {
  return ['Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAge}`, isSecure(request) ? 'Secure' : '']
    .filter(Boolean)
    .join('; ');
}

/** A fresh state and the Set-Cookie header binding it (and the optional invite code) to this browser. */
export function issueOAuthState(request: Request, aff?: string | null): { state: string; setCookie: string } {
  const state = randomToken(24);
  const affCode = aff && AFF_PATTERN.test(aff) ? aff : '';
  const binding = `${Math.floor(Date.now() / 1000)}.${affCode}`;
  const value = new URLSearchParams([
    ['state', state],
    [state, binding],
  ]).toString();
  const name = `${STATE_COOKIE}.${randomToken(6)}`;
  return { state, setCookie: `${name}=${value}; ${cookieAttributes(request, STATE_TTL_SECONDS)}` };
}

function cookiePairs(request: Request): [string, string][] {
  const header = request.headers.get('Cookie') ?? '';
  const pairs: [string, string][] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    pairs.push([part.slice(0, eq).trim(), part.slice(eq + 1).trim()]);
  }
  return pairs;
}

export type StateBinding = { issuedAt: number; aff: string };

export function parseBinding(binding: string): StateBinding | null {
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{0,32})$/.exec(binding);
  if (!m) return null;
  return { issuedAt: Number(m[1]), aff: m[2] ?? '' };
}

/** The binding this browser holds for `state`, or null (forged state, other browser, no cookie). */
export function readStateBinding(request: Request, state: string): StateBinding | null {
  if (!STATE_PATTERN.test(state)) return null;
  for (const [name, value] of cookiePairs(request)) {
    if (!name.startsWith(STATE_COOKIE)) continue;
    const binding = new URLSearchParams(value).get(state);
    if (binding) return parseBinding(binding);
  }
  return null;
}

/** Set-Cookie headers that delete every state cookie this browser sent. */
export function clearStateCookies(request: Request): string[] {
  return cookiePairs(request)
    .filter(([name]) => name.startsWith(STATE_COOKIE) && name !== STATE_COOKIE)
    .map(([name]) => `${name}=; ${cookieAttributes(request, 0)}`);
}

export function isFresh(binding: StateBinding, now = Date.now()): boolean {
  const age = Math.floor(now / 1000) - binding.issuedAt;
  return age >= -60 && age <= STATE_TTL_SECONDS;
}

/**
 * Marks `state` used; false when it was used before (a replay). The ledger is A's critical limiter with one
 * slot per state for the state's lifetime: Redis-backed (shared by every console instance) when REDIS_URL is
 * set, in this process otherwise.
 */
export async function consumeState(services: ConsoleServices, state: string): Promise<boolean> {
  const key = `oauth:state:${await sha256Hex(state)}`;
  const decision = await limiterOf(services).hit(key, 1, (STATE_TTL_SECONDS + 60) * 1000);
  return decision.allowed;
}

async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(value));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
