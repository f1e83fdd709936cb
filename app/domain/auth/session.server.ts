import type { EntityManager } from '@mikro-orm/postgresql';
import { redirect } from '@remix-run/node';
import { Session } from '@switchyard/db/entities/session.ts';
import type { User } from '@switchyard/db/entities/user.ts';
import { clientIp } from '#app/domain/security/rate-limit.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

/**
 * Console sessions (ARCHITECTURE §6, STYLE convention 7): the `sy_session` cookie holds an opaque random
 * token; the Session row's id is the sha-256 hex of that token, so a database leak reveals no usable cookie.
 * The cookie value is the raw token (no Remix cookie encoding) so other processes can read it too.
 */
export const SESSION_COOKIE = 'sy_session';

/** Role values of the seeds: 1 user, 10 admin, 100 root. */
export const ROLE_ADMIN = 10;
export const ROLE_ROOT = 100;
const STATUS_ENABLED = 1;

/** A session lives 30 days (new-api's cookie max age); lastSeenAt is written at most once a minute. */
export const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000;
export const LAST_SEEN_INTERVAL_MS = 60_000;

/** What the UI may know about the signed-in user (never the password hash or access token). */
export type SessionUser = {
  id: number;
  username: string;
  displayName: string;
  role: number;
  group: string;
};

export async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(value));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * What `users.access_token` stores for a system access token: its SHA-256 in hex. A plain fast hash suffices for
 * 32 random bytes (no dictionary to guess from, 2^256 candidates), and lets authentication look the hash up by
 * index (ADR 019).
 */
export const accessTokenHash = sha256Hex;

/** A fresh opaque token: 32 random bytes, base64url. */
export function createSessionToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

export function readSessionToken(request: Request): string | null {
  const header = request.headers.get('Cookie');
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{16,128}$/.test(value) ? value : null;
    }
  }
  return null;
}

function isSecure(request: Request): boolean {
  return new URL(request.url).protocol === 'https:' || request.headers.get('X-Forwarded-Proto') === 'https';
}

export function serializeSessionCookie(request: Request, token: string, expiresAt: Date): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return [
    `${SESSION_COOKIE}=${token}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${maxAge}`,
    isSecure(request) ? 'Secure' : '',
  ]
    .filter(Boolean)
    .join('; ');
}

export function clearSessionCookie(request: Request): string {
  return [
    `${SESSION_COOKIE}=`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    'Max-Age=0',
    isSecure(request) ? 'Secure' : '',
  ]
    .filter(Boolean)
    .join('; ');
}

export function toSessionUser(user: User): SessionUser {
  return {
    id: user.id,
    username: user.username,
    displayName: user.displayName || user.username,
    role: user.role,
    group: user.group,
  };
}

/** `Session.user` is populated above; it may be declared as the entity or as a `Ref` to it. */
function loadedUser(ref: unknown): User {
  const maybeRef = ref as { getEntity?: () => User };
  return typeof maybeRef.getEntity === 'function' ? maybeRef.getEntity() : (ref as User);
}

/**
 * The signed-in user of this request, or null: no cookie, unknown token, expired session, or a user who is
 * banned or deregistered since the session began.
 */
export async function getSessionUser(
  request: Request,
  services: ConsoleServices,
): Promise<SessionUser | null> {
  const token = readSessionToken(request);
  if (!token) return null;
  const em = services.orm.em.fork();
  const session = await em.findOne(Session, { id: await sha256Hex(token) }, { populate: ['user'] });
  if (!session) return null;
  if (session.expiresAt.getTime() <= Date.now()) return null;
  const user = loadedUser(session.user);
  if (user.status !== STATUS_ENABLED || user.deletedAt) return null;
  const seen = session.lastSeenAt;
  if (seen instanceof Date && Date.now() - seen.getTime() >= LAST_SEEN_INTERVAL_MS) {
    try {
      await em.nativeUpdate(Session, { id: session.id }, { lastSeenAt: new Date() });
    } catch (error) {
      console.error('[session] lastSeenAt refresh failed', error);
    }
  }
  return toSessionUser(user);
}

/**
 * Starts a session for `user` (the caller has checked the user may log in: see completeLogin) and returns
 * the Set-Cookie header value. Records the client IP and User-Agent.
 */
export async function createSession(
  services: ConsoleServices,
  user: User,
  request: Request,
): Promise<string> {
  const token = createSessionToken();
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  const em = services.orm.em.fork();
  const now = new Date();
  em.create(Session, {
    id: await sha256Hex(token),
    user: user.id,
    expiresAt,
    createdAt: now,
    lastSeenAt: now,
    ip: clientIp(request, services).slice(0, 64),
    userAgent: (request.headers.get('User-Agent') ?? '').slice(0, 512),
  });
  await em.flush();
  return serializeSessionCookie(request, token, expiresAt);
}

/** The Session row id (sha-256 hex of the cookie token) of this request, or null without a cookie. */
export async function currentSessionId(request: Request): Promise<string | null> {
  const token = readSessionToken(request);
  return token ? sha256Hex(token) : null;
}

/**
 * Deletes every session of `userId` (ban, deregistration, password change or reset), except
 * `exceptSessionId` when given (the session that changed its own password stays). Returns how many ended.
 */
export async function revokeUserSessions(
  em: EntityManager,
  userId: number,
  exceptSessionId?: string,
): Promise<number> {
  const where = exceptSessionId ? { user: userId, id: { $ne: exceptSessionId } } : { user: userId };
  return em.nativeDelete(Session, where);
}

/**
 * Guard for protected pages: redirects to /login (with the way back) when nobody is signed in. A request that
 * came with a session cookie no longer valid (expired, logged out elsewhere, revoked by a password change or a
 * ban) goes to `/login?expired=true` (seed 000 §4: the login page then says the login expired) and the stale
 * cookie is cleared, so the notice shows once; a visitor who never signed in gets the plain /login.
 */
export async function requireUser(request: Request, services: ConsoleServices): Promise<SessionUser> {
  const user = await getSessionUser(request, services);
  if (user) return user;
  if (readSessionToken(request) === null) throw redirect(loginPath(request));
  throw redirect(loginPath(request, { expired: true }), {
    headers: { 'Set-Cookie': clearSessionCookie(request) },
  });
}

export function loginPath(request: Request, opts: { expired?: boolean } = {}): string {
  const url = new URL(request.url);
  const back = url.pathname + url.search;
  const query = new URLSearchParams();
  if (opts.expired) query.set('expired', 'true');
  if (back !== '/') query.set('redirectTo', back);
  const search = query.toString();
  return search ? `/login?${search}` : '/login';
}

/** Ends the session of this request (the row is deleted, so the token is revoked) and returns the clearing cookie. */
export async function logout(request: Request, services: ConsoleServices): Promise<string> {
  const token = readSessionToken(request);
  if (token) {
    const em = services.orm.em.fork();
    await em.nativeDelete(Session, { id: await sha256Hex(token) });
  }
  return clearSessionCookie(request);
}
