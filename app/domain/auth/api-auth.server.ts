import { User, UserStatus } from '@switchyard/db/entities/user.ts';
import type { TFunction } from 'i18next';
import { authT, authTFor } from '#app/domain/auth/i18n.server.ts';
import {
  accessTokenHash,
  getSessionUser,
  type SessionUser,
  toSessionUser,
} from '#app/domain/auth/session.server.ts';
import { ForbiddenError, UnauthorizedError } from '#app/domain/errors.ts';
import type { ConsoleServices } from '#app/services.server.ts';

/**
 * Who calls the JSON contract (ARCHITECTURE §6): the console session plus a matching `New-Api-User`
 * header, or the user's system access token in `Authorization` (bare or `Bearer `).
 */
export type ApiPrincipal = { user: SessionUser; via: 'session' | 'access_token' };

/** The request's language for later refusals (requireRole), without widening ApiPrincipal. */
const principalT = new WeakMap<ApiPrincipal, TFunction>();

function accessTokenOf(request: Request): string | null {
  const header = request.headers.get('Authorization')?.trim();
  if (!header) return null;
  const token = header.replace(/^Bearer\s+/i, '').trim();
  return token || null;
}

/** New-Api-User as a user id; undefined when absent, NaN when malformed. */
function headerUserId(request: Request): number | undefined {
  const raw = request.headers.get('New-Api-User');
  if (raw === null || raw.trim() === '') return undefined;
  return /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
}

/**
 * Authenticates a /api request. Throws UnauthorizedError (401) when nobody is signed in, the access token
 * is unknown, the header is missing or names someone else, or the user is banned or deregistered.
 */
export async function authenticateApi(request: Request, services: ConsoleServices): Promise<ApiPrincipal> {
  const t = await authT(request);
  const claimed = headerUserId(request);
  if (Number.isNaN(claimed)) throw new UnauthorizedError(t('api.headerInvalid'));
  const token = accessTokenOf(request);
  let principal: ApiPrincipal;
  if (token) {
    const em = services.orm.em.fork();
    // The column holds the token's SHA-256 (ADR 019): look up the hash of what was presented.
    const user =
      token.length <= 64
        ? await em.findOne(User, { accessToken: await accessTokenHash(token) }, { filters: false })
        : null;
    if (!user) throw new UnauthorizedError(t('api.tokenInvalid'));
    if (user.status !== UserStatus.Enabled || user.deletedAt) throw new UnauthorizedError(t('api.banned'));
    if (claimed !== undefined && claimed !== user.id) throw new UnauthorizedError(t('api.headerMismatch'));
    principal = { user: toSessionUser(user), via: 'access_token' };
  } else {
    const user = await getSessionUser(request, services);
    if (!user) throw new UnauthorizedError(t('api.notLoggedIn'));
    if (claimed === undefined) throw new UnauthorizedError(t('api.headerMissing'));
    if (claimed !== user.id) throw new UnauthorizedError(t('api.headerMismatch'));
    principal = { user, via: 'session' };
  }
  principalT.set(principal, t);
  return principal;
}

/** Role guard of the JSON contract (1 user, 10 admin, 100 root): ForbiddenError (403) below `minRole`. */
export function requireRole(principal: ApiPrincipal, minRole: number): void {
  if (principal.user.role < minRole) {
    const t = principalT.get(principal) ?? authTFor();
    throw new ForbiddenError(t('api.forbidden'));
  }
}
