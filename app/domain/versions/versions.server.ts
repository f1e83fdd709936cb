import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import { Version } from '@switchyard/db/entities/version.ts';
import { z } from 'zod';
import type { RequestCtx } from '#app/domain/context.server.ts';
import { ForbiddenError, InputError, NotFoundError, UnauthorizedError } from '#app/domain/errors.ts';
import { sanitizeRemark } from '#app/domain/security/sanitize-html.server.ts';
import { parseInput as parseWith } from '#app/domain/validation.ts';
import { OS_TYPES, type OsTypeValue, type VersionWire } from '#app/domain/versions/constants.ts';

/**
 * Version management (seed 001 §2.7, §3 "Version", §5 "Version form", §7 "Version") and the public latest
 * version per OS of /download. Every admin function checks the actor itself (admin = role >= 10); the pages and
 * the /api/version routes call the same functions with the same zod schemas.
 */
export type VersionsCtx = Pick<RequestCtx, 'em' | 'actor' | 't'> & {
  /** client address recorded in audit entries */
  ip?: string;
};

export type { VersionWire };

// ---------------------------------------------------------------------------------------------------------------
// Schemas. The form fields are named exactly as the seed names them (Version, DownUrl, ... Id).

const text = z
  .union([z.string(), z.number()])
  .nullish()
  .transform((v) => (v == null ? '' : String(v)));

const optionalIntText = z
  .union([z.number(), z.string(), z.boolean()])
  .nullish()
  .transform((v) => {
    if (v == null || v === '') return undefined;
    if (typeof v === 'boolean') return v ? 1 : 0;
    const n = typeof v === 'number' ? v : /^\s*-?\d+\s*$/.test(v) ? Number(v) : Number.NaN;
    return n;
  });

export const versionFormSchema = z.object({
  Version: text,
  DownUrl: text,
  FileMd5: text,
  ForceIds: text,
  Force: optionalIntText,
  OsType: optionalIntText,
  Remark: text,
});
export type VersionFormInput = z.input<typeof versionFormSchema>;

export const versionUpdateSchema = versionFormSchema.extend({
  Id: z
    .union([z.number(), z.string()])
    .transform((v) => (/^\d{1,9}$/.test(String(v).trim()) ? Number(v) : 0)),
});
export type VersionUpdateInput = z.input<typeof versionUpdateSchema>;

export const listQuerySchema = z.object({
  p: z.coerce.number().int().min(0).optional().catch(1),
  page_size: z.coerce.number().int().min(1).max(100).optional().catch(10),
});

/** Parses with a schema; a failure becomes an InputError with the translated 'please check input' message. */
export function parseInput<S extends z.ZodType>(
  ctx: Pick<VersionsCtx, 't'>,
  schema: S,
  value: unknown,
): z.output<S> {
  return parseWith(ctx.t, schema, value, { ns: 'versions', messages: 'raw' });
}

// ---------------------------------------------------------------------------------------------------------------
// Wire format

export function serializeVersion(v: Version): VersionWire {
  return {
    id: v.id,
    os_type: v.osType,
    version: v.version,
    downurl: v.downurl,
    filemd5: v.filemd5,
    forceids: v.forceIds,
    force: v.force,
    last_date: new Date(v.lastDate).toISOString(),
    remark: v.remark,
  };
}

export type VersionList = { list: VersionWire[]; page: number; total: number; page_size: number };

/**
 * A row as pages show it: the remark also as sanitized HTML (ADR 032), made here on the server so the stored
 * rich text (kept as given, as the JSON API answers it) never reaches a page unsanitized.
 */
export type VersionView = VersionWire & { remark_html: string };

export function versionView(v: VersionWire): VersionView {
  return { ...v, remark_html: sanitizeRemark(v.remark) };
}

// ---------------------------------------------------------------------------------------------------------------
// Guards and validation

type Actor = NonNullable<VersionsCtx['actor']>;

function requireAdmin(ctx: VersionsCtx): Actor {
  if (!ctx.actor) throw new UnauthorizedError(ctx.t('versions:errors.unauthorized'));
  if (ctx.actor.role < Role.Admin) throw new ForbiddenError(ctx.t('versions:errors.forbidden'));
  return ctx.actor;
}

const MAX_VERSION = 64;
const MAX_URL = 1024;
const MAX_REMARK = 65_535;
const MAX_FORCE_IDS = 4096;

export type VersionFields = {
  version: string;
  downurl: string;
  filemd5: string;
  forceIds: string;
  force: number;
  osType: OsTypeValue;
  remark: string;
};

/**
 * Seed 001 §5 "Version form". Field messages: Version 'the version cannot be empty', DownUrl 'enter a valid URL',
 * FileMd5 'enter a valid MD5'; when DownUrl or Version is empty the form-level message is
 * 'please fill in download address and version number'. The MD5 is stored lower-case.
 */
export function validateVersion(
  ctx: Pick<VersionsCtx, 't'>,
  input: z.output<typeof versionFormSchema>,
): VersionFields {
  const t = ctx.t;
  const version = input.Version.trim();
  const downurl = input.DownUrl.trim();
  const filemd5 = input.FileMd5.trim();
  const fieldErrors: Record<string, string[]> = {};
  if (!version) fieldErrors.Version = [t('versions:errors.versionEmpty')];
  if (!downurl) fieldErrors.DownUrl = [t('versions:errors.invalidUrl')];
  if (!version || !downurl) throw new InputError(t('versions:errors.fillRequired'), fieldErrors);

  if (version.length > MAX_VERSION)
    throw new InputError(t('versions:errors.versionTooLong', { max: MAX_VERSION }), {
      Version: [t('versions:errors.versionTooLong', { max: MAX_VERSION })],
    });
  if (!/^https?:\/\/\S+$/i.test(downurl) || downurl.length > MAX_URL || !isParsableUrl(downurl))
    throw new InputError(t('versions:errors.invalidUrl'), { DownUrl: [t('versions:errors.invalidUrl')] });
  if (filemd5 && !/^[0-9a-f]{32}$/i.test(filemd5))
    throw new InputError(t('versions:errors.invalidMd5'), { FileMd5: [t('versions:errors.invalidMd5')] });

  const osType = input.OsType;
  if (osType === undefined || !(OS_TYPES as readonly number[]).includes(osType))
    throw new InputError(t('versions:errors.invalidOsType'), {
      OsType: [t('versions:errors.invalidOsType')],
    });
  const force = input.Force ?? 0;
  if (force !== 0 && force !== 1)
    throw new InputError(t('versions:errors.invalidForce'), { Force: [t('versions:errors.invalidForce')] });

  const rawForce = input.ForceIds.trim();
  let forceIds = '';
  if (rawForce) {
    const tokens = rawForce.split(',').map((s) => s.trim());
    if (tokens.some((s) => !s || s.length > MAX_VERSION) || rawForce.length > MAX_FORCE_IDS)
      throw new InputError(t('versions:errors.invalidForceIds'), {
        ForceIds: [t('versions:errors.invalidForceIds')],
      });
    forceIds = tokens.join(',');
  }
  if (input.Remark.length > MAX_REMARK)
    throw new InputError(t('versions:errors.remarkTooLong'), {
      Remark: [t('versions:errors.remarkTooLong')],
    });

  return {
    version,
    downurl,
    filemd5: filemd5.toLowerCase(),
    forceIds,
    force,
    osType: osType as OsTypeValue,
    remark: input.Remark,
  };
}

function isParsableUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

function snapshot(v: Version) {
  return {
    version: v.version,
    downurl: v.downurl,
    filemd5: v.filemd5,
    force_ids: v.forceIds,
    force: v.force,
    os_type: v.osType,
    remark: v.remark,
  };
}

function audit(
  ctx: VersionsCtx,
  em: VersionsCtx['em'],
  actor: Actor,
  action: string,
  id: number,
  before: unknown,
  after: unknown,
) {
  em.create(AuditEntry, {
    actorId: actor.id,
    action,
    targetType: 'version',
    targetId: String(id),
    before: before === null ? null : JSON.stringify(before),
    after: after === null ? null : JSON.stringify(after),
    ip: ctx.ip ?? '',
  });
}

/**
 * (OsType, Version) is unique. There is no unique index (yet), so writers serialise on a transaction-scoped
 * advisory lock before checking.
 */
async function assertUnique(
  ctx: VersionsCtx,
  em: VersionsCtx['em'],
  fields: VersionFields,
  exceptId?: number,
) {
  await em.execute("select pg_advisory_xact_lock(hashtext('switchyard.versions'))");
  const clash = await em.findOne(Version, {
    osType: fields.osType,
    version: fields.version,
    ...(exceptId ? { id: { $ne: exceptId } } : {}),
  });
  if (clash)
    throw new InputError(ctx.t('versions:errors.duplicate'), {
      Version: [ctx.t('versions:errors.duplicate')],
    });
}

// ---------------------------------------------------------------------------------------------------------------
// Queries

/**
 * GET /api/version/list: newest first (last_date, then id). Without `p` and `page_size` the whole list (the
 * seed's client reads data.list); with either, one page (p 1-based, 0 = 1; page_size 1..100, default 10).
 */
export async function listVersions(
  ctx: VersionsCtx,
  input: { page?: number; pageSize?: number } = {},
): Promise<VersionList> {
  requireAdmin(ctx);
  const paged = input.page !== undefined || input.pageSize !== undefined;
  const page = paged && input.page && input.page >= 1 ? Math.floor(input.page) : 1;
  const pageSize = paged ? Math.min(100, Math.max(1, Math.floor(input.pageSize ?? 10))) : undefined;
  const [rows, total] = await ctx.em.findAndCount(
    Version,
    {},
    {
      orderBy: [{ lastDate: 'desc' }, { id: 'desc' }],
      ...(pageSize ? { limit: pageSize, offset: (page - 1) * pageSize } : {}),
    },
  );
  return { list: rows.map(serializeVersion), page, total, page_size: pageSize ?? total };
}

export async function getVersion(ctx: VersionsCtx, id: number): Promise<VersionWire> {
  requireAdmin(ctx);
  const row = Number.isSafeInteger(id) && id > 0 ? await ctx.em.findOne(Version, { id }) : null;
  if (!row) throw new NotFoundError(ctx.t('versions:errors.notFound'));
  return serializeVersion(row);
}

export type LatestVersion = { os_type: OsTypeValue; version: VersionWire | null };

/** Public (no actor needed): the newest version of each OS (by last_date, then id) for /download. */
export async function latestVersions(ctx: Pick<VersionsCtx, 'em'>): Promise<LatestVersion[]> {
  return Promise.all(
    OS_TYPES.map(async (osType) => {
      const row = await ctx.em.findOne(
        Version,
        { osType },
        { orderBy: [{ lastDate: 'desc' }, { id: 'desc' }] },
      );
      return { os_type: osType, version: row ? serializeVersion(row) : null };
    }),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Mutations

/** POST /api/version: adds a version (last_date = now). */
export async function createVersion(
  ctx: VersionsCtx,
  input: z.output<typeof versionFormSchema>,
): Promise<VersionWire> {
  const actor = requireAdmin(ctx);
  const fields = validateVersion(ctx, input);
  return ctx.em.transactional(async (em) => {
    await assertUnique(ctx, em, fields);
    const row = em.create(Version, { ...fields, lastDate: new Date() });
    await em.flush();
    audit(ctx, em, actor, 'version.create', row.id, null, snapshot(row));
    await em.flush();
    return serializeVersion(row);
  });
}

/** PUT /api/version: edits a version by Id (last_date = now). */
export async function updateVersion(
  ctx: VersionsCtx,
  input: z.output<typeof versionUpdateSchema>,
): Promise<VersionWire> {
  const actor = requireAdmin(ctx);
  const fields = validateVersion(ctx, input);
  return ctx.em.transactional(async (em) => {
    await assertUnique(ctx, em, fields, input.Id);
    const row = input.Id > 0 ? await em.findOne(Version, { id: input.Id }) : null;
    if (!row) throw new NotFoundError(ctx.t('versions:errors.notFound'));
    const before = snapshot(row);
    Object.assign(row, fields, { lastDate: new Date() });
    audit(ctx, em, actor, 'version.update', row.id, before, snapshot(row));
    await em.flush();
    return serializeVersion(row);
  });
}

/** DELETE /api/version/{id}. */
export async function deleteVersion(ctx: VersionsCtx, id: number): Promise<void> {
  const actor = requireAdmin(ctx);
  await ctx.em.transactional(async (em) => {
    const row = Number.isSafeInteger(id) && id > 0 ? await em.findOne(Version, { id }) : null;
    if (!row) throw new NotFoundError(ctx.t('versions:errors.notFound'));
    audit(ctx, em, actor, 'version.delete', row.id, snapshot(row), null);
    em.remove(row);
    await em.flush();
  });
}
