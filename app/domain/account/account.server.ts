import { raw } from '@mikro-orm/core';
import { Ability } from '@switchyard/db/entities/ability.ts';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { hashPassword, verifyPassword } from '@switchyard/db/security/password.ts';
import type { z } from 'zod';
import { asAuthT } from '#app/domain/auth/i18n.server.ts';
import { accessTokenHash, revokeUserSessions } from '#app/domain/auth/session.server.ts';
import type { RequestCtx } from '#app/domain/context.server.ts';
import { InputError, NotFoundError, UnauthorizedError } from '#app/domain/errors.ts';
import { type RelaySync, syncRelayAccounts } from '#app/domain/relay-sync.server.ts';
import { checkUsername } from '#app/domain/users/username.ts';
import { serializeUser } from '#app/domain/users/users.server.ts';
import { parseInput as parseWith } from '#app/domain/validation.ts';
import { formatQuota } from './quota-format.ts';
import {
  type DeleteSelfInput,
  deleteSelfSchema,
  type TransferInput,
  transferSchema,
  type UpdateSelfInput,
  updateSelfSchema,
} from './schemas.ts';

/** The context a self-service use case needs (a RequestCtx; `relay` is not used here). */
export type AccountCtx = Pick<RequestCtx, 'em' | 'actor' | 'options' | 't' | 'secrets'> & RelaySync;

export const MIN_PASSWORD_LENGTH = 8;

/** Parses `raw` with `schema`, translating the issue messages (i18n keys of `settings`) into an InputError. */
export function parseInput<S extends z.ZodType>(
  ctx: Pick<AccountCtx, 't'>,
  schema: S,
  value: unknown,
): z.output<S> {
  return parseWith(ctx.t, schema, value, {
    ns: 'settings',
    messages: 'translated',
    fallbackKey: 'errors.checkInput',
    rootKey: 'form',
  });
}

/** The signed-in user's row; deregistered or missing -> 401 (the session should not exist). */
export async function loadSelf(ctx: AccountCtx): Promise<User> {
  if (!ctx.actor) throw new UnauthorizedError(ctx.t('settings:errors.unauthorized'));
  const user = await ctx.em.findOne(User, { id: ctx.actor.id, deletedAt: null });
  if (!user) throw new UnauthorizedError(ctx.t('settings:errors.unauthorized'));
  return user;
}

export function quotaDisplay(options: AccountCtx['options']) {
  return {
    displayInCurrency: Boolean(options.get('DisplayInCurrencyEnabled')),
    quotaPerUnit: Number(options.get('QuotaPerUnit')) || 500000,
  };
}

/**
 * Wire view of a user for GET /api/user/self: the admin wire fields (new-api names; never the password hash or
 * access token), `setting` being the user's notification settings as a JSON string (secret withheld, ADR 025).
 */
export function selfView(user: User) {
  return serializeUser(user);
}
export type SelfView = ReturnType<typeof selfView>;

/** GET /api/user/self */
export async function getSelf(ctx: AccountCtx): Promise<SelfView> {
  return selfView(await loadSelf(ctx));
}

/**
 * The current password guards account take-over (ADR 016): an account that has a password must give it to
 * change it or to delete the account. OAuth-only accounts (no password yet) pass: they have nothing to give.
 */
async function requireCurrentPassword(
  ctx: AccountCtx,
  user: User,
  given: string | undefined,
  field: string,
): Promise<void> {
  if (!user.passwordHash) return;
  if (given === undefined)
    throw new InputError(ctx.t('settings:errors.currentPasswordRequired'), { [field]: [] });
  if (!(await verifyPassword(given, user.passwordHash)))
    throw new InputError(ctx.t('settings:errors.currentPasswordWrong'), { [field]: [] });
}

function audit(ctx: AccountCtx, user: User, action: string, before: unknown, after: unknown) {
  return ctx.em.create(AuditEntry, {
    actorId: user.id,
    action,
    targetType: 'user',
    targetId: String(user.id),
    before: before == null ? null : JSON.stringify(before),
    after: after == null ? null : JSON.stringify(after),
  });
}

/**
 * PUT /api/user/self: username, display_name, password of the signed-in user only (there is no id input, so a
 * user can never edit another). A password change needs both entries equal, at least 8 characters and the
 * current password (`original_password`, when the account has one), and revokes the user's other sessions
 * (`currentSessionId` keeps this one).
 */
export async function updateSelf(
  ctx: AccountCtx,
  input: unknown,
  opts: { currentSessionId?: string } = {},
): Promise<SelfView> {
  const data: UpdateSelfInput = parseInput(ctx, updateSelfSchema, input);
  const user = await loadSelf(ctx);
  const before = { username: user.username, display_name: user.displayName };
  if (data.username !== undefined && data.username !== user.username) {
    if (!data.username) throw new InputError(ctx.t('settings:errors.usernameRequired'), { username: [] });
    checkUsername(data.username, asAuthT(ctx.t));
    const taken = await ctx.em.count(User, { username: data.username, id: { $ne: user.id } });
    if (taken) throw new InputError(ctx.t('settings:errors.usernameTaken'), { username: [] });
    user.username = data.username;
  }
  if (data.display_name !== undefined) user.displayName = data.display_name;
  let passwordChanged = false;
  if (data.password !== undefined) {
    if (data.password2 !== undefined && data.password2 !== data.password)
      throw new InputError(ctx.t('settings:errors.passwordMismatch'), { password2: [] });
    if (data.password.length < MIN_PASSWORD_LENGTH)
      throw new InputError(ctx.t('settings:errors.passwordTooShort'), { password: [] });
    if (data.password.length > 64)
      throw new InputError(ctx.t('settings:errors.passwordTooLong'), { password: [] });
    await requireCurrentPassword(ctx, user, data.original_password, 'original_password');
    user.passwordHash = await hashPassword(data.password);
    passwordChanged = true;
  }
  audit(ctx, user, 'user.update_self', before, {
    username: user.username,
    display_name: user.displayName,
    password_changed: passwordChanged,
  });
  await ctx.em.flush();
  if (passwordChanged) await revokeUserSessions(ctx.em, user.id, opts.currentSessionId);
  return selfView(user);
}

/**
 * DELETE /api/user/self: the typed confirmation must equal the username and the current password (`password`)
 * must be given when the account has one; root cannot delete itself. The row is
 * marked deregistered (soft delete), its access token cleared and every session revoked.
 */
export async function deleteSelf(ctx: AccountCtx, input: unknown): Promise<void> {
  const data: DeleteSelfInput = parseInput(ctx, deleteSelfSchema, input);
  const user = await loadSelf(ctx);
  if (user.role >= Role.Root) throw new InputError(ctx.t('settings:errors.rootCannotDelete'));
  if (data.confirm !== user.username)
    throw new InputError(ctx.t('settings:errors.deleteConfirm'), { confirm: [] });
  await requireCurrentPassword(ctx, user, data.password ?? data.original_password, 'password');
  user.deletedAt = new Date();
  user.accessToken = null;
  audit(ctx, user, 'user.delete_self', { deleted_at: null }, { deleted_at: user.deletedAt.toISOString() });
  await ctx.em.flush();
  await revokeUserSessions(ctx.em, user.id);
  await syncRelayAccounts(ctx, { userIds: [user.id] });
}

function randomToken(bytes: number): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

/**
 * GET /api/user/token: a new random system access token each time; the previous one stops working. Only its
 * SHA-256 is stored (ADR 019): the token is answered here once and can never be read back.
 */
export async function issueAccessToken(ctx: AccountCtx): Promise<string> {
  const user = await loadSelf(ctx);
  const token = randomToken(32);
  user.accessToken = await accessTokenHash(token);
  audit(ctx, user, 'user.access_token', null, { rotated: true });
  await ctx.em.flush();
  return token;
}

const AFF_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789';

function randomAffCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => AFF_ALPHABET[b % AFF_ALPHABET.length]).join('');
}

/** GET /api/user/aff: the user's invite code, created when missing. */
export async function getAffCode(ctx: AccountCtx): Promise<string> {
  const user = await loadSelf(ctx);
  if (user.affCode) return user.affCode;
  for (let attempt = 0; attempt < 5; attempt++) {
    const code = randomAffCode();
    const set = await ctx.em.nativeUpdate(User, { id: user.id, affCode: '' }, { affCode: code });
    if (set === 0) {
      await ctx.em.refresh(user);
      if (user.affCode) return user.affCode;
      continue;
    }
    user.affCode = code;
    return code;
  }
  throw new Error('could not allocate an invite code');
}

/**
 * POST /api/user/aff_transfer {quota}: moves pending invitation earnings into the balance. At least one
 * QuotaPerUnit, at most aff_quota. One transaction; the update is conditional on aff_quota >= quota, so
 * concurrent transfers can never overdraw. Writes an AuditEntry and a top-up log row.
 */
export async function transferAffQuota(
  ctx: AccountCtx,
  input: unknown,
): Promise<{ quota: number; aff_quota: number }> {
  const data: TransferInput = parseInput(ctx, transferSchema, input);
  const user = await loadSelf(ctx);
  const display = quotaDisplay(ctx.options);
  const minimum = Math.ceil(display.quotaPerUnit);
  if (data.quota < minimum)
    throw new InputError(ctx.t('settings:errors.transferMinimum', { min: formatQuota(minimum, display) }), {
      quota: [],
    });
  if (data.quota > user.affQuota)
    throw new InputError(ctx.t('settings:errors.transferExceeds'), { quota: [] });
  const amount = data.quota;
  await ctx.em.transactional(async (tx) => {
    const moved = await tx.nativeUpdate(
      User,
      { id: user.id, affQuota: { $gte: amount }, deletedAt: null },
      { affQuota: raw('aff_quota - ?', [amount]), quota: raw('quota + ?', [amount]) },
    );
    if (moved !== 1) throw new InputError(ctx.t('settings:errors.transferExceeds'), { quota: [] });
    tx.create(AuditEntry, {
      actorId: user.id,
      action: 'user.aff_transfer',
      targetType: 'user',
      targetId: String(user.id),
      before: JSON.stringify({ aff_quota: user.affQuota, quota: user.quota }),
      after: JSON.stringify({ transferred: amount }),
    });
    tx.create(Log, {
      userId: user.id,
      username: user.username,
      type: LogType.TopUp,
      quota: amount,
      group: user.group,
      content: ctx.t('settings:log.affTransfer', { amount: formatQuota(amount, display) }),
    });
  });
  await syncRelayAccounts(ctx, { userIds: [user.id] });
  const fresh = await ctx.em.fork().findOne(User, { id: user.id });
  if (!fresh) throw new NotFoundError();
  return { quota: fresh.quota, aff_quota: fresh.affQuota };
}

/** GET /api/user/models: model names of the enabled abilities of the user's group ([] when there are none). */
export async function listUserModels(ctx: AccountCtx): Promise<string[]> {
  const user = await loadSelf(ctx);
  const rows = await ctx.em.find(
    Ability,
    { group: user.group, enabled: true },
    { fields: ['model'], orderBy: { model: 'asc' } },
  );
  return [...new Set(rows.map((r) => r.model))];
}
