import { LockMode, raw } from '@mikro-orm/core';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Redemption, RedemptionStatus } from '@switchyard/db/entities/redemption.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { z } from 'zod';
import { formatQuota } from '#app/domain/account/quota-format.ts';
import { auditTargetIds } from '#app/domain/audit-target.ts';
import type { RequestCtx } from '#app/domain/context.server.ts';
import { ForbiddenError, InputError, NotFoundError, UnauthorizedError } from '#app/domain/errors.ts';
import { INT4, INT8, intInput } from '#app/domain/input.ts';
import { type RelaySync, syncRelayAccounts } from '#app/domain/relay-sync.server.ts';
import { parseInput as parseWith } from '#app/domain/validation.ts';
import {
  DEFAULT_REDEMPTION_COUNT,
  DEFAULT_REDEMPTION_QUOTA,
  keyPrefix,
  MAX_REDEMPTION_COUNT,
  MAX_REDEMPTION_NAME,
} from './constants.ts';

/**
 * Redemption codes (seed 001 §2.6, §3 Redemption, §4, §5 Redemption form, §7 Redemption, §9) and redeeming one
 * (§2.9 redemption box, §5 Top-up, §7 Wallet POST /api/user/topup). Admin functions check role >= 10 themselves;
 * the page actions and the /api routes call the same functions with the same zod schemas (below).
 */
export type RedemptionsCtx = Pick<RequestCtx, 'em' | 'actor' | 't'> &
  RelaySync & {
    options: Pick<RequestCtx['options'], 'get'>;
    /** client address recorded in audit entries */
    ip?: string;
  };

export { RedemptionStatus };

// ---------------------------------------------------------------------------------------------------------------
// Schemas. Failures become an InputError with the translated 'please check input' message.

/** An integer (JSON number or decimal text) a `bigint` column can hold; fractions are refused (input.ts). */
const intLike = intInput(INT8);
/** A row id (`int4` primary keys). */
const rowId = intInput(INT4).pipe(z.number().int().positive());
const optionalText = z
  .string()
  .nullish()
  .transform((v) => (typeof v === 'string' ? v.trim() : ''));
/** true for JSON true, 'true' (query string / form) or '1'. */
const flag = z
  .union([z.boolean(), z.string()])
  .nullish()
  .transform((v) => v === true || v === 'true' || v === '1');

export const pageQuerySchema = z.object({
  p: z.coerce.number().int().min(0).catch(1),
  page_size: z.coerce.number().int().min(1).max(100).catch(10),
});

export const searchQuerySchema = pageQuerySchema.extend({ keyword: optionalText });

export const createRedemptionSchema = z.object({
  name: optionalText,
  quota: z
    .union([intLike, z.literal('')])
    .nullish()
    .transform((v) => (typeof v === 'number' ? v : DEFAULT_REDEMPTION_QUOTA)),
  count: z
    .union([intLike, z.literal('')])
    .nullish()
    .transform((v) => (typeof v === 'number' ? v : DEFAULT_REDEMPTION_COUNT)),
});
export type CreateRedemptionInput = z.output<typeof createRedemptionSchema>;

/** PUT /api/redemption/ (name, quota) or, with status_only=true, {id, status}. */
export const updateRedemptionSchema = z.object({
  id: rowId,
  status_only: flag,
  name: z
    .string()
    .nullish()
    .transform((v) => (v == null ? undefined : v.trim())),
  quota: z
    .union([intLike, z.literal('')])
    .nullish()
    .transform((v) => (typeof v === 'number' ? v : undefined)),
  status: z
    .union([intLike, z.literal('')])
    .nullish()
    .transform((v) => (typeof v === 'number' ? v : undefined)),
});
export type UpdateRedemptionInput = z.output<typeof updateRedemptionSchema>;

export const redeemSchema = z.object({
  key: z
    .union([z.string(), z.number()])
    .nullish()
    .transform((v) => (v == null ? '' : String(v).trim())),
});

export function parseInput<S extends z.ZodType>(
  ctx: Pick<RedemptionsCtx, 't'>,
  schema: S,
  value: unknown,
): z.output<S> {
  return parseWith(ctx.t, schema, value, { ns: 'redemptions', messages: 'raw' });
}

// ---------------------------------------------------------------------------------------------------------------
// Wire format (new-api's field names)

export type RedemptionWire = {
  id: number;
  user_id: number;
  key: string;
  status: number;
  name: string;
  quota: number;
  created_time: number;
  redeemed_time: number;
  used_user_id: number;
};

export function serializeRedemption(r: Redemption): RedemptionWire {
  return {
    id: r.id,
    user_id: r.userId,
    key: r.key,
    status: r.status,
    name: r.name,
    quota: Number(r.quota),
    created_time: Number(r.createdTime),
    redeemed_time: Number(r.redeemedTime),
    used_user_id: r.usedUserId,
  };
}

export type RedemptionPage = { items: RedemptionWire[]; page: number; total: number; page_size: number };

export function quotaDisplay(options: RedemptionsCtx['options']) {
  return {
    displayInCurrency: Boolean(options.get('DisplayInCurrencyEnabled')),
    quotaPerUnit: Number(options.get('QuotaPerUnit')) || 500000,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Guards and helpers

type Actor = NonNullable<RedemptionsCtx['actor']>;

function requireAdmin(ctx: RedemptionsCtx): Actor {
  if (!ctx.actor) throw new UnauthorizedError(ctx.t('redemptions:errors.unauthorized'));
  if (ctx.actor.role < Role.Admin) throw new ForbiddenError(ctx.t('redemptions:errors.forbidden'));
  return ctx.actor;
}

function clampPage(p: number): number {
  return Number.isFinite(p) && p >= 1 ? Math.floor(p) : 1;
}

function clampPageSize(n: number): number {
  if (!Number.isFinite(n)) return 10;
  return Math.min(100, Math.max(1, Math.floor(n)));
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** 32 lowercase hex characters (128 random bits), the shape of new-api's codes (a UUID without dashes). */
export function generateRedemptionKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** What an audit entry may say about a code: its id, name, quota, status and a short key prefix only. */
function auditView(r: Redemption) {
  return {
    name: r.name,
    quota: Number(r.quota),
    status: r.status,
    key_prefix: keyPrefix(r.key),
    used_user_id: r.usedUserId,
  };
}

function audit(
  ctx: RedemptionsCtx,
  em: RedemptionsCtx['em'],
  actorId: number,
  action: string,
  targetId: number | string,
  before: unknown,
  after: unknown,
) {
  em.create(AuditEntry, {
    actorId,
    action,
    targetType: 'redemption',
    targetId: String(targetId),
    before: before == null ? null : JSON.stringify(before),
    after: after == null ? null : JSON.stringify(after),
    ip: ctx.ip ?? '',
  });
}

function validateName(ctx: RedemptionsCtx, name: string) {
  if ([...name].length < 1 || [...name].length > MAX_REDEMPTION_NAME)
    throw new InputError(ctx.t('redemptions:errors.nameLength', { max: MAX_REDEMPTION_NAME }), { name: [] });
}

function validateQuota(ctx: RedemptionsCtx, quota: number) {
  if (!Number.isSafeInteger(quota) || quota <= 0)
    throw new InputError(ctx.t('redemptions:errors.quotaInvalid'), { quota: [] });
}

// ---------------------------------------------------------------------------------------------------------------
// Queries

const LIVE = { deletedAt: null } as const;

export async function listRedemptions(
  ctx: RedemptionsCtx,
  input: { page: number; pageSize: number },
): Promise<RedemptionPage> {
  requireAdmin(ctx);
  const page = clampPage(input.page);
  const pageSize = clampPageSize(input.pageSize);
  const [rows, total] = await ctx.em.findAndCount(Redemption, LIVE, {
    orderBy: { id: 'desc' },
    limit: pageSize,
    offset: (page - 1) * pageSize,
  });
  return { items: rows.map(serializeRedemption), page, total, page_size: pageSize };
}

/** GET /api/redemption/search: the keyword matches the name (substring), the id (when numeric) or a key prefix. */
export async function searchRedemptions(
  ctx: RedemptionsCtx,
  input: { keyword: string; page: number; pageSize: number },
): Promise<RedemptionPage> {
  requireAdmin(ctx);
  const keyword = input.keyword.trim();
  if (!keyword) return listRedemptions(ctx, input);
  const page = clampPage(input.page);
  const pageSize = clampPageSize(input.pageSize);
  const or: Record<string, unknown>[] = [{ name: { $ilike: `%${escapeLike(keyword)}%` } }];
  if (/^\d{1,9}$/.test(keyword)) or.unshift({ id: Number(keyword) });
  if (/^[0-9a-f]{4,64}$/i.test(keyword)) or.push({ key: { $like: `${keyword.toLowerCase()}%` } });
  const [rows, total] = await ctx.em.findAndCount(
    Redemption,
    { ...LIVE, $or: or },
    { orderBy: { id: 'desc' }, limit: pageSize, offset: (page - 1) * pageSize },
  );
  return { items: rows.map(serializeRedemption), page, total, page_size: pageSize };
}

export async function getRedemption(ctx: RedemptionsCtx, id: number): Promise<RedemptionWire> {
  requireAdmin(ctx);
  const row = Number.isSafeInteger(id) && id > 0 ? await ctx.em.findOne(Redemption, { id, ...LIVE }) : null;
  if (!row) throw new NotFoundError(ctx.t('redemptions:errors.notFound'));
  return serializeRedemption(row);
}

/** The unused codes among `keys` (the download of freshly generated codes hands back only real ones). */
export async function filterUnusedKeys(ctx: RedemptionsCtx, keys: string[]): Promise<string[]> {
  requireAdmin(ctx);
  const wanted = [...new Set(keys.map((k) => k.trim().toLowerCase()))].filter((k) =>
    /^[0-9a-f]{32}$/.test(k),
  );
  if (wanted.length === 0) return [];
  const rows = await ctx.em.find(Redemption, {
    key: { $in: wanted.slice(0, MAX_REDEMPTION_COUNT) },
    status: RedemptionStatus.Unused,
    ...LIVE,
  });
  const found = new Set(rows.map((r) => r.key));
  return wanted.filter((k) => found.has(k));
}

// ---------------------------------------------------------------------------------------------------------------
// Admin mutations

/**
 * POST /api/redemption/ {name, quota, count}: `count` (1..100) codes of `quota` each, in one transaction. An
 * empty name becomes the formatted quota (seed §5). Returns the generated keys (data is that list).
 */
export async function createRedemptions(
  ctx: RedemptionsCtx,
  input: CreateRedemptionInput,
): Promise<string[]> {
  const actor = requireAdmin(ctx);
  const { quota, count } = input;
  validateQuota(ctx, quota);
  if (!Number.isSafeInteger(count) || count <= 0)
    throw new InputError(ctx.t('redemptions:errors.countPositive'), { count: [] });
  if (count > MAX_REDEMPTION_COUNT)
    throw new InputError(ctx.t('redemptions:errors.countTooLarge', { max: MAX_REDEMPTION_COUNT }), {
      count: [],
    });
  const name = input.name.trim() || formatQuota(quota, quotaDisplay(ctx.options));
  validateName(ctx, name);
  const keys = Array.from({ length: count }, generateRedemptionKey);
  await ctx.em.transactional(async (em) => {
    const rows = keys.map((key) =>
      em.create(Redemption, { userId: actor.id, key, name, quota, status: RedemptionStatus.Unused }),
    );
    await em.flush();
    audit(ctx, em, actor.id, 'redemption.create', auditTargetIds(rows.map((r) => r.id)), null, {
      name,
      quota,
      count,
      ids: rows.map((r) => r.id),
      key_prefixes: keys.map(keyPrefix),
    });
  });
  return keys;
}

/**
 * PUT /api/redemption/: edits name and quota of an UNUSED code (seed §4: editing only unused ones). With
 * status_only=true sets status 1 (enable) or 2 (disable) of a code that is not used; a used code (3) can be
 * neither enabled nor disabled. The row is locked, so a concurrent redeem either wins first or waits.
 */
export async function updateRedemption(
  ctx: RedemptionsCtx,
  input: UpdateRedemptionInput,
): Promise<RedemptionWire> {
  const actor = requireAdmin(ctx);
  if (input.status_only) {
    const status = input.status;
    if (status !== RedemptionStatus.Unused && status !== RedemptionStatus.Disabled)
      throw new InputError(ctx.t('redemptions:errors.statusInvalid'), { status: [] });
  } else {
    if (input.name === undefined || input.quota === undefined)
      throw new InputError(ctx.t('redemptions:errors.invalidInput'));
    validateName(ctx, input.name);
    validateQuota(ctx, input.quota);
  }
  return ctx.em.transactional(async (em) => {
    const row = await em.findOne(
      Redemption,
      { id: input.id, ...LIVE },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!row) throw new NotFoundError(ctx.t('redemptions:errors.notFound'));
    const before = auditView(row);
    if (input.status_only) {
      if (row.status === RedemptionStatus.Used)
        throw new InputError(
          ctx.t(
            input.status === RedemptionStatus.Unused
              ? 'redemptions:errors.cannotEnableUsed'
              : 'redemptions:errors.cannotDisableUsed',
          ),
        );
      row.status = input.status as RedemptionStatus;
      audit(
        ctx,
        em,
        actor.id,
        row.status === RedemptionStatus.Unused ? 'redemption.enable' : 'redemption.disable',
        row.id,
        before,
        auditView(row),
      );
    } else {
      if (row.status !== RedemptionStatus.Unused)
        throw new InputError(ctx.t('redemptions:errors.editOnlyUnused'));
      row.name = input.name as string;
      row.quota = input.quota as number;
      audit(ctx, em, actor.id, 'redemption.update', row.id, before, auditView(row));
    }
    await em.flush();
    return serializeRedemption(row);
  });
}

/** DELETE /api/redemption/{id}/: removes a code (soft delete: the row stays for the audit trail). */
export async function deleteRedemption(ctx: RedemptionsCtx, id: number): Promise<void> {
  const actor = requireAdmin(ctx);
  await ctx.em.transactional(async (em) => {
    const row =
      Number.isSafeInteger(id) && id > 0
        ? await em.findOne(Redemption, { id, ...LIVE }, { lockMode: LockMode.PESSIMISTIC_WRITE })
        : null;
    if (!row) throw new NotFoundError(ctx.t('redemptions:errors.notFound'));
    const before = auditView(row);
    row.deletedAt = new Date();
    audit(ctx, em, actor.id, 'redemption.delete', row.id, before, null);
    await em.flush();
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Redeeming (self-service)

/**
 * POST /api/user/topup {key}: credits the signed-in user with the code's quota, exactly once. One transaction:
 * a conditional UPDATE that claims the code only while it is unused (so of many concurrent redeems exactly one
 * gets a row back), the user's quota increment, a top-up log row (type 1) and an AuditEntry. Answers the quota
 * added. Unknown, disabled and used codes are refused (new-api's messages: disabled reads like used).
 */
export async function redeemCode(ctx: RedemptionsCtx, input: unknown): Promise<number> {
  if (!ctx.actor) throw new UnauthorizedError(ctx.t('redemptions:errors.unauthorized'));
  const { key } = parseInput(ctx, redeemSchema, input);
  if (!key) throw new InputError(ctx.t('redemptions:errors.keyRequired'), { key: [] });
  const user = await ctx.em.findOne(User, { id: ctx.actor.id, deletedAt: null });
  if (!user) throw new UnauthorizedError(ctx.t('redemptions:errors.unauthorized'));
  const normalized = key.toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(normalized)) throw new InputError(ctx.t('redemptions:errors.invalidKey'));
  const display = quotaDisplay(ctx.options);

  const claimed = await ctx.em.transactional(async (tx) => {
    const now = Math.floor(Date.now() / 1000);
    const rows = (await tx.execute(
      'update redemptions set status = ?, used_user_id = ?, redeemed_time = ? ' +
        'where key = ? and status = ? and deleted_at is null returning id, quota',
      [RedemptionStatus.Used, user.id, now, normalized, RedemptionStatus.Unused],
    )) as { id: number; quota: string | number }[];
    const row = rows[0];
    if (!row) return null;
    const quota = Number(row.quota);
    const credited = await tx.nativeUpdate(
      User,
      { id: user.id, deletedAt: null },
      { quota: raw('quota + ?', [quota]) },
    );
    if (credited !== 1) throw new UnauthorizedError(ctx.t('redemptions:errors.unauthorized'));
    tx.create(Log, {
      userId: user.id,
      username: user.username,
      type: LogType.TopUp,
      quota,
      group: user.group,
      content: ctx.t('redemptions:log.redeemed', {
        amount: formatQuota(quota, display),
        id: row.id,
        prefix: keyPrefix(normalized),
      }),
    });
    audit(
      ctx,
      tx,
      user.id,
      'redemption.redeem',
      row.id,
      { status: RedemptionStatus.Unused },
      {
        status: RedemptionStatus.Used,
        used_user_id: user.id,
        quota,
        key_prefix: keyPrefix(normalized),
      },
    );
    await tx.flush();
    return quota;
  });
  if (claimed !== null) {
    // The relay may hold the old (possibly exhausted) balance; the credit must apply to the next call.
    await syncRelayAccounts(ctx, { userIds: [user.id] });
    return claimed;
  }

  // Nothing claimed: say why (the code is unknown, or it is disabled / already used).
  const existing = await ctx.em.fork().findOne(Redemption, { key: normalized, ...LIVE });
  if (!existing) throw new InputError(ctx.t('redemptions:errors.invalidKey'));
  throw new InputError(ctx.t('redemptions:errors.alreadyUsed'));
}
