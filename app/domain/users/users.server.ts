import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { DEFAULT_GROUP, Role, User, UserStatus } from '@switchyard/db/entities/user.ts';
import { hashPassword } from '@switchyard/db/security/password.ts';
import { z } from 'zod';
import { parseUserSetting, publicSetting } from '#app/domain/account/setting.ts';
import { asAuthT } from '#app/domain/auth/i18n.server.ts';
import { revokeUserSessions } from '#app/domain/auth/session.server.ts';
import type { RequestCtx } from '#app/domain/context.server.ts';
import { ForbiddenError, InputError, NotFoundError, UnauthorizedError } from '#app/domain/errors.ts';
import { INT4, INT8, intInput } from '#app/domain/input.ts';
import { type RelaySync, syncRelayAccounts } from '#app/domain/relay-sync.server.ts';
import { MANAGE_ACTIONS, type ManageAction, USER_STATUS_LOCKED } from '#app/domain/users/constants.ts';
import { checkUsername } from '#app/domain/users/username.ts';
import { parseInput as parseWith } from '#app/domain/validation.ts';

/**
 * Admin use cases of the users page (seed 000 §2 "Admin users page", §4, §5, §6, §7 "Users").
 * Every function checks the actor itself (admin = role >= 10); the page action and the /api routes call the
 * same functions with the same zod schemas (below).
 */
export type UsersCtx = Pick<RequestCtx, 'em' | 'actor' | 't'> &
  RelaySync & {
    options: Pick<RequestCtx['options'], 'get'>;
    /** client address recorded in audit entries */
    ip?: string;
  };

export { MANAGE_ACTIONS, type ManageAction, USER_STATUS_LOCKED };

// ---------------------------------------------------------------------------------------------------------------
// Schemas (shared by the JSON routes and the page actions). Messages are i18n keys of the `users` namespace.

/** An integer (JSON number or decimal text) a `bigint` column can hold; fractions are refused (input.ts). */
const intLike = intInput(INT8);
/** A row id (`int4` primary keys). */
const rowId = intInput(INT4).pipe(z.number().int().positive());
/** An optional integer: absent, null or '' mean "not given". */
const optionalInt = z
  .union([intLike, z.literal('')])
  .nullish()
  .transform((v) => (typeof v === 'number' ? v : undefined));
const optionalText = z
  .string()
  .nullish()
  .transform((v) => (typeof v === 'string' ? v.trim() : ''));
const optionalSecret = z
  .string()
  .nullish()
  .transform((v) => v ?? '');

export const pageQuerySchema = z.object({
  p: z.coerce.number().int().min(0).catch(1),
  page_size: z.coerce.number().int().min(1).max(100).catch(10),
});

export const searchQuerySchema = pageQuerySchema.extend({
  keyword: optionalText,
  group: optionalText,
});

export const createUserSchema = z.object({
  username: optionalText,
  display_name: optionalText,
  password: optionalSecret,
});
export type CreateUserInput = z.input<typeof createUserSchema>;

export const updateUserSchema = z.object({
  id: rowId,
  username: optionalText,
  display_name: optionalText,
  password: optionalSecret,
  group: z
    .string()
    .nullish()
    .transform((v) => (v == null ? undefined : v.trim())),
  quota: optionalInt,
  /** add-quota dialog: a delta (may be negative) applied to the stored quota in the same transaction */
  add_quota: optionalInt,
});
export type UpdateUserInput = z.input<typeof updateUserSchema>;

export const manageUserSchema = z.object({
  id: rowId,
  action: z.enum(MANAGE_ACTIONS),
});
export type ManageUserInput = z.input<typeof manageUserSchema>;

/** Parses with a schema; any failure becomes an InputError with the translated 'please check input' message. */
export function parseInput<S extends z.ZodType>(
  ctx: Pick<UsersCtx, 't'>,
  schema: S,
  value: unknown,
): z.output<S> {
  return parseWith(ctx.t, schema, value, { ns: 'users', messages: 'raw' });
}

// ---------------------------------------------------------------------------------------------------------------
// Wire format (snake_case, never password_hash / access_token)

export type UserWire = {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
  email: string;
  github_id: string;
  wechat_id: string;
  telegram_id: string;
  linux_do_id: string;
  group: string;
  quota: number;
  used_quota: number;
  request_count: number;
  aff_code: string;
  aff_count: number;
  aff_quota: number;
  aff_history_quota: number;
  inviter_id: number;
  /**
   * The user's notification settings as a JSON string, as new-api stores and returns `setting` (model.User's
   * `Setting string`); the webhook secret is withheld (webhook_secret_set says whether one is set). ADR 025.
   */
  setting: string;
  created_at: number;
  /** non-null means deregistered (new-api's gorm field name) */
  DeletedAt: string | null;
};

export function serializeUser(user: User): UserWire {
  return {
    id: user.id,
    username: user.username,
    display_name: user.displayName,
    role: user.role,
    status: user.status,
    email: user.email,
    github_id: user.githubId,
    wechat_id: user.wechatId,
    telegram_id: user.telegramId,
    linux_do_id: user.linuxDoId,
    group: user.group,
    quota: Number(user.quota),
    used_quota: Number(user.usedQuota),
    request_count: user.requestCount,
    aff_code: user.affCode,
    aff_count: user.affCount,
    aff_quota: Number(user.affQuota),
    aff_history_quota: Number(user.affHistoryQuota),
    inviter_id: user.inviterId,
    setting: JSON.stringify(publicSetting(parseUserSetting(user.setting))),
    created_at: Math.floor(new Date(user.createdAt).getTime() / 1000),
    DeletedAt: user.deletedAt ? new Date(user.deletedAt).toISOString() : null,
  };
}

export type UserPage = { items: UserWire[]; page: number; total: number; page_size: number };

// ---------------------------------------------------------------------------------------------------------------
// Guards

type Actor = NonNullable<UsersCtx['actor']>;

function requireAdmin(ctx: UsersCtx): Actor {
  if (!ctx.actor) throw new UnauthorizedError(ctx.t('users:errors.unauthorized'));
  if (ctx.actor.role < Role.Admin) throw new ForbiddenError(ctx.t('users:errors.forbidden'));
  return ctx.actor;
}

/** Admins act only on users of a LOWER role than their own (root included: root cannot act on root). */
function assertLowerRole(ctx: UsersCtx, actor: Actor, target: User) {
  if (target.role >= actor.role) throw new InputError(ctx.t('users:errors.sameOrHigherRole'));
}

function clampPage(p: number): number {
  return Number.isFinite(p) && p >= 1 ? Math.floor(p) : 1;
}

function clampPageSize(n: number): number {
  if (!Number.isFinite(n)) return 10;
  return Math.min(100, Math.max(1, Math.floor(n)));
}

// ---------------------------------------------------------------------------------------------------------------
// Queries

export async function listUsers(ctx: UsersCtx, input: { page: number; pageSize: number }): Promise<UserPage> {
  requireAdmin(ctx);
  const page = clampPage(input.page);
  const pageSize = clampPageSize(input.pageSize);
  const [rows, total] = await ctx.em.findAndCount(
    User,
    {},
    { orderBy: { id: 'desc' }, limit: pageSize, offset: (page - 1) * pageSize },
  );
  return { items: rows.map(serializeUser), page, total, page_size: pageSize };
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export async function searchUsers(
  ctx: UsersCtx,
  input: { keyword: string; group: string; page: number; pageSize: number },
): Promise<UserPage> {
  requireAdmin(ctx);
  const page = clampPage(input.page);
  const pageSize = clampPageSize(input.pageSize);
  const keyword = input.keyword.trim();
  const group = input.group.trim();
  const where: Record<string, unknown> = {};
  if (group) where.group = group;
  if (keyword) {
    const like = `%${escapeLike(keyword)}%`;
    const or: Record<string, unknown>[] = [
      { username: { $ilike: like } },
      { displayName: { $ilike: like } },
      { email: { $ilike: like } },
    ];
    if (/^\d{1,9}$/.test(keyword)) or.unshift({ id: Number(keyword) });
    where.$or = or;
  }
  const [rows, total] = await ctx.em.findAndCount(User, where, {
    orderBy: { id: 'desc' },
    limit: pageSize,
    offset: (page - 1) * pageSize,
  });
  return { items: rows.map(serializeUser), page, total, page_size: pageSize };
}

/**
 * GET /api/user/{id}, /user/edit/{id}, /user/{id}/delete: one user's full profile (e-mail, OAuth ids, ...).
 * Reads follow the rule of writes (new-api's GetUser): an admin reads users of a LOWER role and themself; root
 * reads everyone. A same-or-higher role answers ForbiddenError (403), checked after the lookup so that a
 * missing id still answers "not found".
 */
export async function getUser(ctx: UsersCtx, id: number): Promise<UserWire> {
  const actor = requireAdmin(ctx);
  const user = Number.isSafeInteger(id) && id > 0 ? await ctx.em.findOne(User, { id }) : null;
  if (!user) throw new NotFoundError(ctx.t('users:errors.notFound'));
  if (user.id !== actor.id && actor.role < Role.Root && user.role >= actor.role)
    throw new ForbiddenError(ctx.t('users:errors.readSameOrHigherRole'));
  return serializeUser(user);
}

/** Group names: the keys of the GroupRatio option (GET /api/group/). */
export function listGroups(ctx: UsersCtx): string[] {
  requireAdmin(ctx);
  const ratios = ctx.options.get('GroupRatio') as Record<string, number> | null;
  return Object.keys(ratios ?? {});
}

// ---------------------------------------------------------------------------------------------------------------
// Mutations

const MAX_NAME = 64;

function audit(
  ctx: UsersCtx,
  em: UsersCtx['em'],
  actor: Actor,
  action: string,
  target: User,
  before: unknown,
  after: unknown,
) {
  em.create(AuditEntry, {
    actorId: actor.id,
    action,
    targetType: 'user',
    targetId: String(target.id),
    before: before === null ? null : JSON.stringify(before),
    after: after === null ? null : JSON.stringify(after),
    ip: ctx.ip ?? '',
  });
}

function randomAffCode(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789';
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join('');
}

function validateNames(ctx: UsersCtx, displayName: string) {
  if (displayName.length > MAX_NAME)
    throw new InputError(ctx.t('users:errors.displayNameTooLong', { max: MAX_NAME }));
}

function validatePassword(ctx: UsersCtx, password: string) {
  if (password.length < 8) throw new InputError(ctx.t('users:errors.passwordTooShort'));
  if (password.length > 128) throw new InputError(ctx.t('users:errors.passwordTooLong'));
}

async function assertUsernameFree(ctx: UsersCtx, em: UsersCtx['em'], username: string, exceptId?: number) {
  // Deregistered users keep their username reserved (their history still names them).
  const clash = await em.findOne(User, exceptId ? { username, id: { $ne: exceptId } } : { username });
  if (clash) throw new InputError(ctx.t('users:errors.usernameTaken'));
}

/** POST /api/user/: an admin adds an ordinary user (seed §5: username and password required, password >= 8). */
export async function createUser(
  ctx: UsersCtx,
  input: { username: string; display_name: string; password: string },
): Promise<UserWire> {
  const actor = requireAdmin(ctx);
  const username = input.username.trim();
  const displayName = input.display_name.trim() || username;
  const password = input.password;
  if (!username || !password) throw new InputError(ctx.t('users:errors.emptyCredentials'));
  checkUsername(username, asAuthT(ctx.t));
  validateNames(ctx, displayName);
  validatePassword(ctx, password);
  const passwordHash = await hashPassword(password);
  const quota = Number(ctx.options.get('QuotaForNewUser') ?? 0);
  try {
    return await ctx.em.transactional(async (em) => {
      await assertUsernameFree(ctx, em, username);
      let affCode = randomAffCode();
      while (await em.findOne(User, { affCode })) affCode = randomAffCode();
      const user = em.create(User, {
        username,
        displayName,
        passwordHash,
        affCode,
        group: DEFAULT_GROUP,
        quota,
        role: Role.User,
        status: UserStatus.Enabled,
      });
      await em.flush();
      audit(ctx, em, actor, 'user.create', user, null, { username, display_name: displayName, quota });
      if (quota > 0) {
        em.create(Log, {
          userId: user.id,
          username: user.username,
          type: LogType.System,
          content: ctx.t('users:log.newUserQuota', { quota }),
        });
      }
      return serializeUser(user);
    });
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException)
      throw new InputError(ctx.t('users:errors.usernameTaken'));
    throw error;
  }
}

/**
 * PUT /api/user/: an admin edits a user of a lower role. The password changes only when non-empty (hashed; all
 * of that user's sessions are then revoked). A quota change (absolute `quota` or an `add_quota` delta, possibly
 * negative) is written in ONE transaction with an AuditEntry and a management log (type 3) naming the admin.
 */
export async function updateUser(
  ctx: UsersCtx,
  input: {
    id: number;
    username: string;
    display_name: string;
    password?: string;
    group?: string;
    quota?: number;
    add_quota?: number;
  },
): Promise<UserWire> {
  const actor = requireAdmin(ctx);
  const username = input.username.trim();
  const displayName = input.display_name.trim() || username;
  if (!username) throw new InputError(ctx.t('users:errors.usernameEmpty'));
  validateNames(ctx, displayName);
  const password = input.password ?? '';
  if (password) validatePassword(ctx, password);
  for (const q of [input.quota, input.add_quota]) {
    if (q !== undefined && !Number.isSafeInteger(q)) throw new InputError(ctx.t('users:errors.quotaInteger'));
  }
  const group = input.group?.trim();
  if (group !== undefined && (group === '' || group.length > 64))
    throw new InputError(ctx.t('users:errors.groupInvalid'));
  const passwordHash = password ? await hashPassword(password) : null;

  try {
    const updated = await ctx.em.transactional(async (em) => {
      const user = await em.findOne(User, { id: input.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!user) throw new NotFoundError(ctx.t('users:errors.notFound'));
      if (user.deletedAt) throw new InputError(ctx.t('users:errors.deregistered'));
      // Editing oneself (names and password only: group and quota are for other users) is always allowed.
      const self = user.id === actor.id;
      if (!self) assertLowerRole(ctx, actor, user);
      if (username !== user.username) {
        // A name from before the rule is kept as it is; a new name follows the one rule.
        checkUsername(username, asAuthT(ctx.t));
        await assertUsernameFree(ctx, em, username, user.id);
      }

      const before = {
        username: user.username,
        display_name: user.displayName,
        group: user.group,
        quota: Number(user.quota),
      };
      const oldQuota = Number(user.quota);
      let newQuota = oldQuota;
      if (self) newQuota = oldQuota;
      else if (input.add_quota !== undefined) newQuota = oldQuota + input.add_quota;
      else if (input.quota !== undefined) newQuota = input.quota;
      if (!Number.isSafeInteger(newQuota)) throw new InputError(ctx.t('users:errors.quotaInteger'));

      user.username = username;
      user.displayName = displayName;
      if (group !== undefined && !self) user.group = group;
      user.quota = newQuota;
      if (passwordHash) user.passwordHash = passwordHash;

      const after = { username, display_name: displayName, group: user.group, quota: newQuota };
      audit(ctx, em, actor, 'user.update', user, before, {
        ...after,
        ...(passwordHash ? { password_changed: true } : {}),
      });
      if (newQuota !== oldQuota) {
        audit(ctx, em, actor, 'user.quota', user, { quota: oldQuota }, { quota: newQuota });
        em.create(Log, {
          userId: user.id,
          username: user.username,
          type: LogType.Manage,
          quota: newQuota - oldQuota,
          content: ctx.t('users:log.quotaChanged', {
            admin: actor.username,
            adminId: actor.id,
            old: oldQuota,
            added: newQuota - oldQuota,
            new: newQuota,
          }),
        });
      }
      await em.flush();
      if (passwordHash) await revokeUserSessions(em, user.id);
      return serializeUser(user);
    });
    // Quota and group are what the relay caches for this user.
    await syncRelayAccounts(ctx, { userIds: [updated.id] });
    return updated;
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException)
      throw new InputError(ctx.t('users:errors.usernameTaken'));
    throw error;
  }
}

/**
 * POST /api/user/manage: promote | demote | disable | enable | delete. Answers the new status and role.
 * - only on users of a lower role than the actor; deregistered users cannot be managed any more;
 * - only root promotes to admin or demotes an admin; nobody promotes to root;
 * - disable bans (status 2) and revokes the user's sessions; enable only from status 2 (3 is refused);
 * - delete deregisters (deleted_at set, sessions revoked, logs and username kept).
 */
export async function manageUser(
  ctx: UsersCtx,
  input: { id: number; action: ManageAction },
): Promise<{ status: number; role: number }> {
  const actor = requireAdmin(ctx);
  if (!(MANAGE_ACTIONS as readonly string[]).includes(input.action))
    throw new InputError(ctx.t('users:errors.invalidAction'));
  const result = await ctx.em.transactional(async (em) => {
    const user = await em.findOne(User, { id: input.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!user) throw new NotFoundError(ctx.t('users:errors.notFound'));
    if (user.deletedAt) throw new InputError(ctx.t('users:errors.deregistered'));
    assertLowerRole(ctx, actor, user);
    const before = { status: user.status, role: user.role, deleted: false };
    let revoke = false;
    switch (input.action) {
      case 'promote':
        if (actor.role < Role.Root) throw new InputError(ctx.t('users:errors.onlyRootPromotes'));
        if (user.role >= Role.Admin) throw new InputError(ctx.t('users:errors.alreadyAdmin'));
        user.role = Role.Admin;
        break;
      case 'demote':
        if (user.role < Role.Admin) throw new InputError(ctx.t('users:errors.cannotDemoteUser'));
        if (actor.role < Role.Root) throw new InputError(ctx.t('users:errors.onlyRootDemotes'));
        user.role = Role.User;
        break;
      case 'disable':
        user.status = UserStatus.Banned;
        revoke = true;
        break;
      case 'enable':
        if (user.status === USER_STATUS_LOCKED) throw new InputError(ctx.t('users:errors.cannotEnable'));
        if (user.status !== UserStatus.Banned && user.status !== UserStatus.Enabled)
          throw new InputError(ctx.t('users:errors.cannotEnable'));
        user.status = UserStatus.Enabled;
        break;
      case 'delete':
        user.deletedAt = new Date();
        revoke = true;
        break;
    }
    audit(ctx, em, actor, `user.${input.action}`, user, before, {
      status: user.status,
      role: user.role,
      deleted: Boolean(user.deletedAt),
    });
    await em.flush();
    if (revoke) await revokeUserSessions(em, user.id);
    return { status: user.status, role: user.role };
  });
  // A ban or deletion must stop the user's tokens at the relay at once.
  await syncRelayAccounts(ctx, { userIds: [input.id] });
  return result;
}
