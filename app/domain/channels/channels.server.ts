import { LockMode } from '@mikro-orm/core';
import { Ability } from '@switchyard/db/entities/ability.ts';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Channel, ChannelStatus, ChannelType } from '@switchyard/db/entities/channel.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import { channelKeySlot, SecretsError } from '@switchyard/db/security/secrets.ts';
import { z } from 'zod';
import { auditTargetIds } from '#app/domain/audit-target.ts';
import { servedChannelTypes } from '#app/domain/channels/served-types.server.ts';
import type { RequestCtx } from '#app/domain/context.server.ts';
import {
  DomainError,
  ForbiddenError,
  InputError,
  NotFoundError,
  UnauthorizedError,
} from '#app/domain/errors.ts';
import { INT2, INT4, INT8, intInput } from '#app/domain/input.ts';
import type { RelaySync } from '#app/domain/relay-sync.server.ts';
import { parseInput as parseWith } from '#app/domain/validation.ts';

/**
 * Channel management (seed 001 §2.4, §3 Channel / Tag edit payload, §4, §5 Channel form, §7 Channel, §9).
 * Every write keeps the routing table (`abilities`: one row per group × model of a channel) in step with the
 * channel in the same transaction, then asks the relay to reload its routing table (best effort). Admin only;
 * keys leave the server only in getChannel (the admin's edit form) and never reach an AuditEntry. With SECRETS_KEY
 * the key column holds a sealed value bound to its row: channelKey() is the one read and sealChannelKey() the one
 * write (ADR 019).
 * The calls that need an upstream (test, balance, fetch models) are in relay-ops.server.ts.
 */
export type ChannelsCtx = Pick<RequestCtx, 'em' | 'actor' | 't' | 'secrets'> &
  RelaySync & {
    options?: Pick<RequestCtx['options'], 'get'>;
    /** client address recorded in audit entries */
    ip?: string;
  };

export { ChannelStatus, ChannelType };

export const CHANNEL_DEFAULTS = { type: 1, autoBan: 1, group: 'default', priority: 0, weight: 0 } as const;
/** Xunfei (type 18) without an API version in `other` gets this one (seed §5). */
export const XUNFEI_DEFAULT_VERSION = 'v2.1';
const ABILITY_CHUNK = 500;
const MAX_MODEL_NAME = 255;
const MAX_GROUP_NAME = 64;
const MAX_BATCH_KEYS = 1000;

/** A channel's base URL: an absolute http(s) URL with a host (blank means the type's default). */
export function isHttpBaseUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value)) return false;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Schemas (shared by the /api routes and the page actions)

/** An integer (JSON number or decimal text) a `bigint` column can hold; fractions are refused (input.ts). */
const intLike = intInput(INT8);
/** A row id (`int4` primary keys). */
const rowId = intInput(INT4).pipe(z.number().int().positive());
/** '' / null / absent -> undefined (unchanged on update); otherwise an integer its column can hold. */
const optionalInt = (range: { min: number; max: number } = INT4) =>
  z
    .union([intInput(range), z.literal(''), z.null(), z.undefined()])
    .transform((v) => (typeof v === 'number' ? v : undefined))
    .optional();
const optionalString = z
  .union([z.string(), z.number(), z.null(), z.undefined()])
  .transform((v) => (v == null ? undefined : String(v)))
  .optional();
/** A comma string (wire) or an array (form / JSON): trimmed, de-duplicated, blanks dropped. */
const listLike = z
  .union([z.string(), z.array(z.union([z.string(), z.number()])), z.null(), z.undefined()])
  .transform((v) => (v == null ? undefined : splitList(Array.isArray(v) ? v.map(String).join(',') : v)))
  .optional();
const flag01 = z
  .union([z.boolean(), z.number(), z.string(), z.null(), z.undefined()])
  .transform((v) => {
    if (v == null || v === '') return undefined;
    return v === true || v === 1 || v === '1' || v === 'true' || v === 'on' ? 1 : 0;
  })
  .optional();

export const channelFieldsSchema = z.object({
  name: optionalString,
  type: optionalInt(),
  key: optionalString,
  openai_organization: optionalString,
  max_input_tokens: optionalInt(),
  base_url: optionalString,
  other: optionalString,
  model_mapping: optionalString,
  status_code_mapping: optionalString,
  setting: optionalString,
  models: listLike,
  /** the wire's comma string */
  group: listLike,
  /** the form's array (wins over `group` when both come) */
  groups: listLike,
  auto_ban: flag01,
  test_model: optionalString,
  priority: optionalInt(INT8),
  weight: optionalInt(),
  tag: optionalString,
  status: optionalInt(INT2),
});

export const createChannelSchema = channelFieldsSchema.extend({
  /** 'single' (default) or 'batch' (one channel per key line) */
  mode: z
    .string()
    .nullish()
    .transform((v) => (v === 'batch' ? 'batch' : 'single')),
});
export type CreateChannelInput = z.output<typeof createChannelSchema>;

export const updateChannelSchema = channelFieldsSchema.extend({
  id: rowId,
});
export type UpdateChannelInput = z.output<typeof updateChannelSchema>;

export const tagEditSchema = z.object({
  tag: z.string().trim().min(1),
  new_tag: optionalString,
  model_mapping: optionalString,
  groups: listLike,
  models: listLike,
  priority: optionalInt(INT8),
  weight: optionalInt(),
});
export type TagEditInput = z.output<typeof tagEditSchema>;

export const tagOnlySchema = z.object({ tag: z.string().trim().min(1) });
export const idsSchema = z.object({
  ids: z
    .union([z.array(intLike), z.string().transform((s) => s.split(',').filter(Boolean).map(Number))])
    .transform((ids) =>
      [...new Set(ids)].filter((id) => Number.isSafeInteger(id) && id > 0 && id <= INT4.max),
    ),
});
export const batchTagSchema = idsSchema.extend({ tag: optionalString });

const flag = z
  .union([z.boolean(), z.string(), z.null(), z.undefined()])
  .transform((v) => v === true || v === 'true' || v === '1')
  .optional();
export const listQuerySchema = z.object({
  p: z.coerce.number().int().min(0).catch(1),
  page_size: z.coerce.number().int().min(1).max(100).catch(10),
  id_sort: flag,
  tag_mode: flag,
});
export const searchQuerySchema = listQuerySchema.extend({
  keyword: optionalString,
  group: optionalString,
  model: optionalString,
});

export function parseInput<S extends z.ZodType>(
  ctx: Pick<ChannelsCtx, 't'>,
  schema: S,
  value: unknown,
): z.output<S> {
  return parseWith(ctx.t, schema, value, { ns: 'channels', messages: 'raw' });
}

// ---------------------------------------------------------------------------------------------------------------
// Wire format (new-api's field names)

export type ChannelWire = {
  id: number;
  type: number;
  name: string;
  /** only in getChannel (the admin's edit form); lists leave it out */
  key?: string;
  openai_organization: string;
  max_input_tokens: number;
  base_url: string;
  other: string;
  model_mapping: string;
  status_code_mapping: string;
  setting: string;
  models: string;
  group: string;
  auto_ban: number;
  test_model: string;
  priority: number;
  weight: number;
  tag: string;
  status: number;
  response_time: number;
  used_quota: number;
  balance: number;
  balance_updated_time: number;
  created_time: number;
  test_time: number;
  other_info: string;
};

/** The wire form of a channel; `key` (the opened key, from channelKey) only for the admin's edit form. */
export function serializeChannel(c: Channel, key?: string): ChannelWire {
  return {
    id: c.id,
    type: c.type,
    name: c.name,
    ...(key !== undefined ? { key } : {}),
    openai_organization: c.openaiOrganization ?? '',
    max_input_tokens: c.maxInputTokens,
    base_url: c.baseUrl,
    other: c.other,
    model_mapping: c.modelMapping,
    status_code_mapping: c.statusCodeMapping,
    setting: c.setting,
    models: c.models,
    group: c.group,
    auto_ban: c.autoBan,
    test_model: c.testModel,
    priority: Number(c.priority),
    weight: c.weight,
    tag: c.tag ?? '',
    status: c.status,
    response_time: c.responseTime,
    used_quota: Number(c.usedQuota),
    balance: Number(c.balance),
    balance_updated_time: Number(c.balanceUpdatedTime),
    created_time: Number(c.createdTime),
    test_time: Number(c.testTime),
    other_info: c.otherInfo,
  };
}

/**
 * One page of the channel list. `items` are flat channel objects, as new-api's GetAllChannels answers them
 * (data {items, total, page, page_size}); in tag mode the page is counted in entries (a tag, or an untagged
 * channel) and each tag's channels follow one another, for the reader to group (groupChannelEntries, ADR 025).
 */
export type ChannelPage = {
  items: ChannelWire[];
  page: number;
  total: number;
  page_size: number;
  id_sort: boolean;
  tag_mode: boolean;
};

// ---------------------------------------------------------------------------------------------------------------
// Helpers

type Actor = NonNullable<ChannelsCtx['actor']>;

function requireAdmin(ctx: ChannelsCtx): Actor {
  if (!ctx.actor) throw new UnauthorizedError(ctx.t('channels:errors.unauthorized'));
  if (ctx.actor.role < Role.Admin) throw new ForbiddenError(ctx.t('channels:errors.forbidden'));
  return ctx.actor;
}

export function splitList(value: string): string[] {
  return [
    ...new Set(
      value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
}

/** The key lines of a channel (a batch create makes one channel per line; a multi-key channel keeps them all). */
export function keyLines(key: string): string[] {
  return key
    .split('\n')
    .map((k) => k.trim())
    .filter(Boolean);
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * What an audit entry may say about a channel: everything but the key (only how many lines the opened key `key`
 * has; null when the stored key does not open).
 */
export function auditView(c: Channel, key: string | null) {
  const { response_time, used_quota, balance, balance_updated_time, test_time, ...rest } =
    serializeChannel(c);
  return { ...rest, key_count: key === null ? null : keyLines(key).length };
}

/**
 * The one place the console reads a channel's key: the stored value opened (plaintext rows pass through).
 * When it does not open (altered row, a ciphertext copied from another row, another SECRETS_KEY) the reason is
 * logged and the admin is told to enter the key again (a DomainError; updateChannel can still replace it).
 */
export async function channelKey(
  ctx: Pick<ChannelsCtx, 'secrets' | 't'>,
  c: Pick<Channel, 'id' | 'key'>,
): Promise<string> {
  try {
    return await ctx.secrets.open(c.key, channelKeySlot(c.id));
  } catch (err) {
    if (!(err instanceof SecretsError)) throw err;
    console.error(`[console] ${err.message}`);
    throw new DomainError(ctx.t('channels:errors.keyUnreadable', { id: c.id }), 409);
  }
}

/**
 * The one place the console writes a channel's key: sealed with SECRETS_KEY for this row (its id must be set:
 * new rows take theirs from allocateChannelIds first), as it is without a key.
 */
async function sealChannelKey(ctx: Pick<ChannelsCtx, 'secrets'>, c: Channel, key: string): Promise<void> {
  c.key = await ctx.secrets.seal(key, channelKeySlot(c.id));
}

/** Ids for `n` new channels from the table's sequence, so their keys can be sealed for their row before insert. */
async function allocateChannelIds(em: ChannelsCtx['em'], n: number): Promise<number[]> {
  const rows = await em.execute<{ id: number }[]>(
    `select nextval(pg_get_serial_sequence('channels', 'id'))::int as id from generate_series(1, ?)`,
    [n],
  );
  return rows.map((r) => Number(r.id));
}

function audit(
  ctx: ChannelsCtx,
  em: ChannelsCtx['em'],
  actorId: number,
  action: string,
  targetId: number | string,
  before: unknown,
  after: unknown,
) {
  em.create(AuditEntry, {
    actorId,
    action,
    targetType: 'channel',
    targetId: String(targetId).slice(0, 191),
    before: before == null ? null : JSON.stringify(before),
    after: after == null ? null : JSON.stringify(after),
    ip: ctx.ip ?? '',
  });
}

const INVALIDATE_TIMEOUT_MS = 2_000;

/**
 * After a change that affects routing: the relay reloads channels and abilities now instead of at its next
 * periodic sync. Best effort (the change has committed; the periodic sync catches up): never throws.
 * Kept here because relay-sync.server.ts has no channel helper yet.
 */
export async function invalidateRouting(ctx: ChannelsCtx): Promise<void> {
  const relay = ctx.relay;
  if (!relay) return;
  try {
    await relay.invalidateAccounts({ channels: true }, { timeoutMs: INVALIDATE_TIMEOUT_MS });
  } catch (err) {
    console.warn(`[console] relay routing reload failed: ${(err as Error).message}`);
  }
}

const KNOWN_TYPES = new Set<number>(Object.values(ChannelType));

function jsonObjectOrBlank(text: string): boolean {
  if (!text.trim()) return true;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/** Abilities of one channel: one row per group × model; enabled = status 1; priority/weight/tag copied. */
export function abilityRows(c: Channel) {
  const groups = splitList(c.group);
  const models = splitList(c.models);
  const rows: {
    group: string;
    model: string;
    channelId: number;
    enabled: boolean;
    priority: number;
    weight: number;
    tag: string | null;
  }[] = [];
  for (const group of groups)
    for (const model of models)
      rows.push({
        group,
        model,
        channelId: c.id,
        enabled: c.status === ChannelStatus.Enabled,
        priority: Number(c.priority),
        weight: c.weight,
        tag: c.tag || null,
      });
  return rows;
}

/** Replaces the abilities of these (flushed) channels: delete, then insert in chunks. Call inside a transaction. */
async function rebuildAbilities(em: ChannelsCtx['em'], channels: Channel[]): Promise<number> {
  if (channels.length === 0) return 0;
  await em.nativeDelete(Ability, { channelId: { $in: channels.map((c) => c.id) } });
  const rows = channels.flatMap(abilityRows);
  for (let i = 0; i < rows.length; i += ABILITY_CHUNK)
    await em.insertMany(Ability, rows.slice(i, i + ABILITY_CHUNK));
  return rows.length;
}

type Fields = z.output<typeof channelFieldsSchema>;

/**
 * Normalises and validates the fields present in `input` onto `c` (seed §5). `creating` makes name, key and
 * models required; on update a field that is absent stays as it is. The key is not set on `c`: the new key (to
 * seal with sealChannelKey) is returned, undefined when it stays as it is.
 */
/** The relay's served types (null: it could not tell), asked before a write that sets a type. */
async function servedFor(ctx: ChannelsCtx, type: number | undefined): Promise<ReadonlySet<number> | null> {
  return type === undefined ? null : (await servedChannelTypes(ctx)).served;
}

/**
 * Seed §5 plus "the console never offers a type the relay cannot serve": a type the relay does not serve is
 * refused when a channel is created with it or changed to it (a saved channel keeps its type through other
 * edits). When the relay could not tell (`served` null), any type of the catalogue is accepted.
 */
function checkType(
  ctx: ChannelsCtx,
  type: number,
  served: ReadonlySet<number> | null,
  current?: number,
): void {
  if (type === current) return;
  if (served) {
    if (!served.has(type))
      throw new InputError(ctx.t('channels:errors.typeNotServed', { type }), { type: [] });
  } else if (!KNOWN_TYPES.has(type)) throw new InputError(ctx.t('channels:errors.typeInvalid'), { type: [] });
}

function applyFields(
  ctx: ChannelsCtx,
  c: Channel,
  input: Fields,
  creating: boolean,
  served: ReadonlySet<number> | null = null,
): string | undefined {
  const t = ctx.t;
  if (input.type !== undefined) {
    checkType(ctx, input.type, served, creating ? undefined : c.type);
    c.type = input.type;
  }
  if (input.name !== undefined) c.name = input.name.trim();
  const key = input.key !== undefined && (creating || input.key.trim()) ? input.key.trim() : undefined;
  if (creating && (!c.name || !key))
    throw new InputError(t('channels:errors.nameAndKeyRequired'), {
      ...(c.name ? {} : { name: [] }),
      ...(key ? {} : { key: [] }),
    });
  if (!creating && input.name !== undefined && !c.name)
    throw new InputError(t('channels:errors.nameAndKeyRequired'), { name: [] });
  if ([...c.name].length > 128) throw new InputError(t('channels:errors.nameTooLong'), { name: [] });
  if (input.openai_organization !== undefined)
    c.openaiOrganization = input.openai_organization.trim() || null;
  // varchar(128): a longer one was a database error (a 500 from the page form).
  if ([...(c.openaiOrganization ?? '')].length > 128)
    throw new InputError(t('channels:errors.invalidInput'), { openai_organization: [] });
  if (input.max_input_tokens !== undefined) c.maxInputTokens = Math.max(0, input.max_input_tokens);
  if (input.base_url !== undefined) c.baseUrl = input.base_url.trim().replace(/\/+$/, '');
  if (c.baseUrl && !isHttpBaseUrl(c.baseUrl))
    throw new InputError(t('channels:errors.baseUrlInvalid'), { base_url: [] });
  if (input.other !== undefined) c.other = input.other.trim();
  if (c.type === ChannelType.Xunfei && !c.other) c.other = XUNFEI_DEFAULT_VERSION;
  if (c.type === ChannelType.VertexAi && c.other.startsWith('{') && !jsonObjectOrBlank(c.other))
    throw new InputError(t('channels:errors.regionJson'), { other: [] });
  if (input.model_mapping !== undefined) c.modelMapping = input.model_mapping.trim();
  if (!jsonObjectOrBlank(c.modelMapping))
    throw new InputError(t('channels:errors.modelMappingJson'), { model_mapping: [] });
  if (input.status_code_mapping !== undefined) c.statusCodeMapping = input.status_code_mapping.trim();
  if (!jsonObjectOrBlank(c.statusCodeMapping))
    throw new InputError(t('channels:errors.statusCodeMappingJson'), { status_code_mapping: [] });
  if (input.setting !== undefined) c.setting = input.setting.trim();
  if (!jsonObjectOrBlank(c.setting)) throw new InputError(t('channels:errors.settingJson'), { setting: [] });
  if (input.models !== undefined) c.models = input.models.join(',');
  if (splitList(c.models).length === 0)
    throw new InputError(t('channels:errors.modelsRequired'), { models: [] });
  if (splitList(c.models).some((m) => m.length > MAX_MODEL_NAME))
    throw new InputError(t('channels:errors.modelTooLong', { max: MAX_MODEL_NAME }), { models: [] });
  const groups = input.groups ?? input.group;
  if (groups !== undefined) c.group = groups.join(',') || CHANNEL_DEFAULTS.group;
  if (splitList(c.group).some((g) => g.length > MAX_GROUP_NAME) || c.group.length > 255)
    throw new InputError(t('channels:errors.groupTooLong', { max: MAX_GROUP_NAME }), { group: [] });
  if (input.auto_ban !== undefined) c.autoBan = input.auto_ban;
  if (input.test_model !== undefined) c.testModel = input.test_model.trim().slice(0, 128);
  if (input.priority !== undefined) {
    if (input.priority < -999_999_999 || input.priority > 999_999_999)
      throw new InputError(t('channels:errors.priorityInvalid'), { priority: [] });
    c.priority = input.priority;
  }
  // seed §5: a weight below 0 becomes 0
  if (input.weight !== undefined) c.weight = Math.min(Math.max(0, input.weight), 2_000_000_000);
  if (input.tag !== undefined) c.tag = input.tag.trim().slice(0, 128) || null;
  if (input.status !== undefined) {
    if (input.status !== 1 && input.status !== 2 && input.status !== 3)
      throw new InputError(t('channels:errors.statusInvalid'), { status: [] });
    c.status = input.status as ChannelStatus;
  }
  return key;
}

// ---------------------------------------------------------------------------------------------------------------
// Queries

type Filter = { keyword?: string; group?: string; model?: string };

function whereSql(filter: Filter): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const keyword = filter.keyword?.trim();
  if (keyword) {
    const like = `%${escapeLike(keyword)}%`;
    const ors = ['name ilike ?', 'base_url ilike ?', "coalesce(tag, '') ilike ?"];
    params.push(like, like, like);
    if (/^\d{1,9}$/.test(keyword)) {
      ors.unshift('id = ?');
      params.unshift(Number(keyword));
    }
    parts.push(`(${ors.join(' or ')})`);
  }
  const group = filter.group?.trim();
  if (group) {
    parts.push(`(',' || replace("group", ' ', '') || ',') like ?`);
    params.push(`%,${escapeLike(group)},%`);
  }
  const model = filter.model?.trim();
  if (model) {
    parts.push('models ilike ?');
    params.push(`%${escapeLike(model)}%`);
  }
  return { sql: parts.length ? `where ${parts.join(' and ')}` : '', params };
}

function clampPage(p: number): number {
  return Number.isFinite(p) && p >= 1 ? Math.floor(p) : 1;
}
function clampPageSize(n: number): number {
  return Number.isFinite(n) ? Math.min(100, Math.max(1, Math.floor(n))) : 10;
}

/**
 * GET /api/channel/ and /api/channel/search: one page of channels, by priority (highest first, then newest), or
 * with id_sort by id (newest first), as new-api orders them. tag_mode: channels sharing a tag form one entry.
 */
export async function listChannels(
  ctx: ChannelsCtx,
  input: Filter & { page: number; pageSize: number; idSort?: boolean; tagMode?: boolean },
): Promise<ChannelPage> {
  requireAdmin(ctx);
  const page = clampPage(input.page);
  const pageSize = clampPageSize(input.pageSize);
  const idSort = Boolean(input.idSort);
  const tagMode = Boolean(input.tagMode);
  const where = whereSql(input);
  const order = idSort ? 'id desc' : 'priority desc, id desc';
  const base = { page, page_size: pageSize, id_sort: idSort, tag_mode: tagMode };
  const conn = ctx.em.getConnection();
  if (!tagMode) {
    const [count] = (await conn.execute(
      `select count(*)::int as n from channels ${where.sql}`,
      where.params,
    )) as {
      n: number;
    }[];
    const rows = await ctx.em.find(
      Channel,
      { id: { $in: await idsOf(ctx, where, order, pageSize, (page - 1) * pageSize) } },
      { orderBy: idSort ? { id: 'desc' } : { priority: 'desc', id: 'desc' } },
    );
    return {
      ...base,
      total: count?.n ?? 0,
      items: rows.map((c) => serializeChannel(c)),
    };
  }
  // entries: a tag (all its channels) or an untagged channel; ordered by their best channel
  const entrySql = `select case when coalesce(tag, '') = '' then 'c:' || id else 't:' || tag end as k,
      max(priority) as pr, min(id) as lo, max(id) as hi from channels ${where.sql} group by 1`;
  const [count] = (await conn.execute(`select count(*)::int as n from (${entrySql}) e`, where.params)) as {
    n: number;
  }[];
  const entries = (await conn.execute(
    `select k from (${entrySql}) e order by ${idSort ? 'hi desc' : 'pr desc, hi desc'} limit ? offset ?`,
    [...where.params, pageSize, (page - 1) * pageSize],
  )) as { k: string }[];
  const tags = entries.filter((e) => e.k.startsWith('t:')).map((e) => e.k.slice(2));
  const ids = entries.filter((e) => e.k.startsWith('c:')).map((e) => Number(e.k.slice(2)));
  const children = tags.length ? await findFiltered(ctx, where, { tags }) : [];
  const singles = ids.length ? await ctx.em.find(Channel, { id: { $in: ids } }) : [];
  const byId = new Map(singles.map((c) => [c.id, c]));
  const sortChildren = (a: Channel, b: Channel) =>
    idSort ? b.id - a.id : Number(b.priority) - Number(a.priority) || b.id - a.id;
  const items: Channel[] = entries.flatMap((e) => {
    if (e.k.startsWith('t:')) {
      const tag = e.k.slice(2);
      return children.filter((c) => c.tag === tag).sort(sortChildren);
    }
    const single = byId.get(Number(e.k.slice(2)));
    return single ? [single] : [];
  });
  return { ...base, total: count?.n ?? 0, items: items.map((c) => serializeChannel(c)) };
}

async function idsOf(
  ctx: ChannelsCtx,
  where: { sql: string; params: unknown[] },
  order: string,
  limit: number,
  offset: number,
): Promise<number[]> {
  const rows = (await ctx.em
    .getConnection()
    .execute(`select id from channels ${where.sql} order by ${order} limit ? offset ?`, [
      ...where.params,
      limit,
      offset,
    ])) as { id: number }[];
  return rows.map((r) => r.id);
}

async function findFiltered(
  ctx: ChannelsCtx,
  where: { sql: string; params: unknown[] },
  by: { tags: string[] },
) {
  const rows = (await ctx.em
    .getConnection()
    .execute(
      `select id from channels ${where.sql ? `${where.sql} and` : 'where'} tag in (${by.tags.map(() => '?').join(',')})`,
      [...where.params, ...by.tags],
    )) as { id: number }[];
  return rows.length ? ctx.em.find(Channel, { id: { $in: rows.map((r) => r.id) } }) : [];
}

export async function getChannel(ctx: ChannelsCtx, id: number): Promise<ChannelWire> {
  requireAdmin(ctx);
  const row = Number.isSafeInteger(id) && id > 0 ? await ctx.em.findOne(Channel, { id }) : null;
  if (!row) throw new NotFoundError(ctx.t('channels:errors.notFound'));
  return serializeChannel(row, await channelKey(ctx, row));
}

/** Channels a test-all covers (enabled and auto-disabled), for the progress view. */
export async function listTestableChannels(ctx: ChannelsCtx): Promise<{ id: number; name: string }[]> {
  requireAdmin(ctx);
  const rows = await ctx.em.find(
    Channel,
    { status: { $in: [ChannelStatus.Enabled, ChannelStatus.AutoDisabled] } },
    { fields: ['id', 'name'], orderBy: { id: 'asc' } },
  );
  return rows.map((c) => ({ id: c.id, name: c.name }));
}

/** GET /api/channel/models: every model name the channels serve plus the priced ones, sorted. */
export async function listChannelModels(ctx: ChannelsCtx): Promise<string[]> {
  requireAdmin(ctx);
  const rows = (await ctx.em.getConnection().execute('select distinct model from abilities')) as {
    model: string;
  }[];
  const names = new Set(rows.map((r) => r.model));
  for (const c of await ctx.em.find(Channel, {}, { fields: ['models'] }))
    for (const m of splitList(c.models)) names.add(m);
  for (const key of ['ModelRatio', 'ModelPrice'] as const) {
    const table = ctx.options?.get(key as never) as Record<string, unknown> | null | undefined;
    if (table && typeof table === 'object') for (const m of Object.keys(table)) names.add(m);
  }
  return [...names].sort((a, b) => a.localeCompare(b));
}

// ---------------------------------------------------------------------------------------------------------------
// Mutations

/**
 * POST /api/channel/: one channel, or with mode=batch one channel per key line (seed §5 "batch create"), each
 * with its abilities, in one transaction. Returns the new ids.
 */
export async function createChannels(ctx: ChannelsCtx, input: CreateChannelInput): Promise<number[]> {
  const actor = requireAdmin(ctx);
  const keys = input.mode === 'batch' ? keyLines(input.key ?? '') : [input.key ?? ''];
  if (keys.length > MAX_BATCH_KEYS)
    throw new InputError(ctx.t('channels:errors.tooManyKeys', { max: MAX_BATCH_KEYS }), { key: [] });
  if (keys.length === 0) keys.push('');
  const served = await servedFor(ctx, input.type);
  const ids = await ctx.em.transactional(async (em) => {
    const created: { c: Channel; key: string }[] = [];
    for (const line of keys) {
      const c = em.create(Channel, {
        type: CHANNEL_DEFAULTS.type,
        autoBan: CHANNEL_DEFAULTS.autoBan,
        group: CHANNEL_DEFAULTS.group,
        priority: CHANNEL_DEFAULTS.priority,
        weight: CHANNEL_DEFAULTS.weight,
        status: ChannelStatus.Enabled,
      } as never);
      const key = applyFields(ctx, c, { ...input, key: line }, true, served) ?? '';
      created.push({ c, key });
    }
    const newIds = await allocateChannelIds(em, created.length);
    for (const [i, { c, key }] of created.entries()) {
      c.id = newIds[i] as number;
      await sealChannelKey(ctx, c, key);
    }
    await em.flush();
    await rebuildAbilities(
      em,
      created.map(({ c }) => c),
    );
    for (const { c, key } of created)
      audit(ctx, em, actor.id, 'channel.create', c.id, null, auditView(c, key));
    await em.flush();
    return created.map(({ c }) => c.id);
  });
  await invalidateRouting(ctx);
  return ids;
}

async function lockChannel(ctx: ChannelsCtx, em: ChannelsCtx['em'], id: number): Promise<Channel> {
  const row =
    Number.isSafeInteger(id) && id > 0
      ? await em.findOne(Channel, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true })
      : null;
  if (!row) throw new NotFoundError(ctx.t('channels:errors.notFound'));
  return row;
}

/** PUT /api/channel/ {id, ...changed fields}: the fields present change; abilities are rebuilt. */
export async function updateChannel(ctx: ChannelsCtx, input: UpdateChannelInput): Promise<ChannelWire> {
  const actor = requireAdmin(ctx);
  const served = await servedFor(ctx, input.type);
  const wire = await ctx.em.transactional(async (em) => {
    const c = await lockChannel(ctx, em, input.id);
    // A key that does not open can still be replaced (or the channel edited otherwise); the audit says so.
    const oldKey = await channelKey(ctx, c).catch(() => null);
    const before = auditView(c, oldKey);
    const wasStatus = c.status;
    const newKey = applyFields(ctx, c, input, false, served);
    if (newKey !== undefined) await sealChannelKey(ctx, c, newKey);
    if (input.status === ChannelStatus.Enabled && wasStatus !== ChannelStatus.Enabled)
      c.otherInfo = clearReason(c.otherInfo);
    await em.flush();
    await rebuildAbilities(em, [c]);
    const action =
      input.status !== undefined &&
      Object.keys(input).filter((k) => input[k as keyof typeof input] !== undefined).length <= 2
        ? c.status === ChannelStatus.Enabled
          ? 'channel.enable'
          : 'channel.disable'
        : 'channel.update';
    audit(ctx, em, actor.id, action, c.id, before, auditView(c, newKey ?? oldKey));
    await em.flush();
    return serializeChannel(c);
  });
  await invalidateRouting(ctx);
  return wire;
}

/** Manual enable drops the auto-disable reason (it no longer applies). */
function clearReason(otherInfo: string): string {
  try {
    const v = JSON.parse(otherInfo || '{}') as Record<string, unknown>;
    if (typeof v !== 'object' || v === null) return otherInfo;
    delete v.status_reason;
    delete v.status_time;
    return Object.keys(v).length ? JSON.stringify(v) : '';
  } catch {
    return otherInfo;
  }
}

/** Row button (seed §4): enabled -> 2 (manual disable); any other -> 1. */
export async function setChannelStatus(ctx: ChannelsCtx, id: number, status: number): Promise<ChannelWire> {
  return updateChannel(ctx, { id, status } as UpdateChannelInput);
}

/** DELETE /api/channel/{id}/: the channel and its abilities. */
export async function deleteChannel(ctx: ChannelsCtx, id: number): Promise<void> {
  await deleteChannels(ctx, [id], true);
}

/** POST /api/channel/batch {ids}: deletes those channels (and abilities); the count deleted. */
export async function deleteChannels(ctx: ChannelsCtx, ids: number[], single = false): Promise<number> {
  const actor = requireAdmin(ctx);
  const wanted = [...new Set(ids)].filter((id) => Number.isSafeInteger(id) && id > 0);
  if (wanted.length === 0) {
    if (single) throw new NotFoundError(ctx.t('channels:errors.notFound'));
    throw new InputError(ctx.t('channels:errors.selectFirst'), { ids: [] });
  }
  const count = await ctx.em.transactional(async (em) => {
    const rows = await em.find(
      Channel,
      { id: { $in: wanted } },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (single && rows.length === 0) throw new NotFoundError(ctx.t('channels:errors.notFound'));
    if (rows.length === 0) return 0;
    const found = rows.map((c) => c.id);
    await em.nativeDelete(Ability, { channelId: { $in: found } });
    for (const c of rows)
      audit(
        ctx,
        em,
        actor.id,
        'channel.delete',
        c.id,
        auditView(c, await channelKey(ctx, c).catch(() => null)),
        null,
      );
    await em.nativeDelete(Channel, { id: { $in: found } });
    await em.flush();
    return rows.length;
  });
  if (count > 0) await invalidateRouting(ctx);
  return count;
}

/** DELETE /api/channel/disabled: every manually or automatically disabled channel; the count. */
export async function deleteDisabledChannels(ctx: ChannelsCtx): Promise<number> {
  requireAdmin(ctx);
  const rows = await ctx.em.find(
    Channel,
    { status: { $in: [ChannelStatus.ManuallyDisabled, ChannelStatus.AutoDisabled] } },
    { fields: ['id'] },
  );
  if (rows.length === 0) return 0;
  return deleteChannels(
    ctx,
    rows.map((r) => r.id),
  );
}

/** POST /api/channel/batch/tag {ids, tag}: sets (or with a blank tag clears) the tag of those channels; the count. */
export async function setChannelsTag(
  ctx: ChannelsCtx,
  ids: number[],
  tag: string | undefined,
): Promise<number> {
  const actor = requireAdmin(ctx);
  const wanted = [...new Set(ids)].filter((id) => Number.isSafeInteger(id) && id > 0);
  if (wanted.length === 0) throw new InputError(ctx.t('channels:errors.selectFirst'), { ids: [] });
  const value = (tag ?? '').trim().slice(0, 128);
  if (!value) throw new InputError(ctx.t('channels:errors.tagRequired'), { tag: [] });
  const count = await ctx.em.transactional(async (em) => {
    const rows = await em.find(
      Channel,
      { id: { $in: wanted } },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    for (const c of rows) c.tag = value;
    await em.flush();
    await em.nativeUpdate(Ability, { channelId: { $in: rows.map((c) => c.id) } }, { tag: value });
    audit(ctx, em, actor.id, 'channel.batch_tag', auditTargetIds(rows.map((c) => c.id)), null, {
      ids: rows.map((c) => c.id),
      tag: value,
    });
    await em.flush();
    return rows.length;
  });
  if (count > 0) await invalidateRouting(ctx);
  return count;
}

/** POST /api/channel/tag/enabled | disabled {tag}: every channel with the tag gets status 1 or 2; the count. */
export async function setTagStatus(ctx: ChannelsCtx, tag: string, status: 1 | 2): Promise<number> {
  const actor = requireAdmin(ctx);
  const count = await ctx.em.transactional(async (em) => {
    const rows = await em.find(Channel, { tag }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (rows.length === 0) throw new NotFoundError(ctx.t('channels:errors.tagNotFound'));
    for (const c of rows) {
      if (status === ChannelStatus.Enabled && c.status !== ChannelStatus.Enabled)
        c.otherInfo = clearReason(c.otherInfo);
      c.status = status;
    }
    await em.flush();
    await em.nativeUpdate(
      Ability,
      { channelId: { $in: rows.map((c) => c.id) } },
      { enabled: status === ChannelStatus.Enabled },
    );
    audit(ctx, em, actor.id, status === 1 ? 'channel.tag_enable' : 'channel.tag_disable', tag, null, {
      tag,
      status,
      ids: rows.map((c) => c.id),
    });
    await em.flush();
    return rows.length;
  });
  await invalidateRouting(ctx);
  return count;
}

/**
 * PUT /api/channel/tag {tag, new_tag?, model_mapping?, groups?, models?, priority?, weight?}: changes every channel
 * with the tag (seed §5: a blank field is unchanged; new_tag '' dissolves the tag; nothing changed is refused).
 * Abilities of those channels are rebuilt. Returns the count.
 */
export async function editTag(ctx: ChannelsCtx, input: TagEditInput): Promise<number> {
  const actor = requireAdmin(ctx);
  const t = ctx.t;
  const newTag = input.new_tag === undefined ? undefined : input.new_tag.trim().slice(0, 128);
  const changes = {
    ...(newTag !== undefined && newTag !== input.tag ? { tag: newTag } : {}),
    ...(input.model_mapping?.trim() ? { model_mapping: input.model_mapping.trim() } : {}),
    ...(input.groups?.length ? { groups: input.groups } : {}),
    ...(input.models?.length ? { models: input.models } : {}),
    ...(input.priority !== undefined ? { priority: input.priority } : {}),
    ...(input.weight !== undefined ? { weight: Math.max(0, input.weight) } : {}),
  };
  if (changes.model_mapping && !jsonObjectOrBlank(changes.model_mapping))
    throw new InputError(t('channels:errors.modelMappingJson'), { model_mapping: [] });
  if (Object.keys(changes).length === 0) throw new InputError(t('channels:errors.noChanges'));
  const count = await ctx.em.transactional(async (em) => {
    const rows = await em.find(
      Channel,
      { tag: input.tag },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (rows.length === 0) throw new NotFoundError(t('channels:errors.tagNotFound'));
    for (const c of rows) {
      applyFields(
        ctx,
        c,
        {
          ...(changes.tag !== undefined ? { tag: changes.tag } : {}),
          model_mapping: changes.model_mapping,
          groups: changes.groups,
          models: changes.models,
          priority: changes.priority,
          weight: changes.weight,
        } as Fields,
        false,
      );
    }
    await em.flush();
    await rebuildAbilities(em, rows);
    audit(
      ctx,
      em,
      actor.id,
      'channel.tag_edit',
      input.tag,
      { tag: input.tag, ids: rows.map((c) => c.id) },
      changes,
    );
    await em.flush();
    return rows.length;
  });
  await invalidateRouting(ctx);
  return count;
}

/** POST /api/channel/fix: rebuilds the abilities of every channel; how many channels succeeded and failed. */
export async function fixAbilities(ctx: ChannelsCtx): Promise<{ success: number; fails: number }> {
  const actor = requireAdmin(ctx);
  const result = await ctx.em.transactional(async (em) => {
    const rows = await em.find(Channel, {}, { orderBy: { id: 'asc' } });
    await em.nativeDelete(Ability, {});
    let success = 0;
    let fails = 0;
    const good: Channel[] = [];
    for (const c of rows) {
      const abilities = abilityRows(c);
      if (abilities.some((a) => a.model.length > MAX_MODEL_NAME || a.group.length > MAX_GROUP_NAME)) fails++;
      else {
        good.push(c);
        success++;
      }
    }
    await rebuildAbilities(em, good);
    audit(ctx, em, actor.id, 'channel.fix', 'all', null, { success, fails });
    await em.flush();
    return { success, fails };
  });
  await invalidateRouting(ctx);
  return result;
}

/** Row "copy" (seed §2.4): a new channel with every field of the source (key included), named `<name>_copy`. */
export async function copyChannel(ctx: ChannelsCtx, id: number): Promise<number> {
  const actor = requireAdmin(ctx);
  const newId = await ctx.em.transactional(async (em) => {
    const src =
      Number.isSafeInteger(id) && id > 0 ? await em.findOne(Channel, { id }, { refresh: true }) : null;
    if (!src) throw new NotFoundError(ctx.t('channels:errors.notFound'));
    // The sealed key is bound to the source row: open it and seal it again for the copy.
    const key = await channelKey(ctx, src);
    const [copyId] = await allocateChannelIds(em, 1);
    const c = em.create(Channel, {
      id: copyId,
      type: src.type,
      name: `${src.name}_copy`.slice(0, 128),
      openaiOrganization: src.openaiOrganization,
      maxInputTokens: src.maxInputTokens,
      baseUrl: src.baseUrl,
      other: src.other,
      modelMapping: src.modelMapping,
      statusCodeMapping: src.statusCodeMapping,
      setting: src.setting,
      models: src.models,
      group: src.group,
      autoBan: src.autoBan,
      testModel: src.testModel,
      priority: src.priority,
      weight: src.weight,
      tag: src.tag,
      status: ChannelStatus.Enabled,
    } as never);
    await sealChannelKey(ctx, c, key);
    await em.flush();
    await rebuildAbilities(em, [c]);
    audit(ctx, em, actor.id, 'channel.copy', c.id, { source_id: src.id }, auditView(c, key));
    await em.flush();
    return c.id;
  });
  await invalidateRouting(ctx);
  return newId;
}

/**
 * The channel form's fields (page actions; works without JavaScript): `groups` are checkboxes, `models` is the
 * comma text plus the checked `models_pick` boxes, `auto_ban` a hidden 0 followed by a checkbox 1.
 */
export function channelFormInput(form: FormData): Record<string, unknown> {
  const text = (k: string) => {
    const v = form.getAll(k).filter((x): x is string => typeof x === 'string');
    return v.length ? v[v.length - 1] : undefined;
  };
  const models = [...splitList(text('models') ?? ''), ...form.getAll('models_pick').map(String)];
  const out: Record<string, unknown> = {};
  for (const k of [
    'id',
    'mode',
    'name',
    'type',
    'key',
    'openai_organization',
    'max_input_tokens',
    'base_url',
    'other',
    'model_mapping',
    'status_code_mapping',
    'setting',
    'auto_ban',
    'test_model',
    'priority',
    'weight',
    'tag',
  ])
    if (text(k) !== undefined) out[k] = text(k);
  out.models = [...new Set(models)];
  if (form.has('groups_present')) out.groups = form.getAll('groups').map(String);
  return out;
}

/** The group names the form offers: GroupRatio's keys plus any a channel already uses. */
export async function groupOptions(ctx: ChannelsCtx): Promise<string[]> {
  requireAdmin(ctx);
  const names = new Set<string>(['default']);
  const ratios = ctx.options?.get('GroupRatio' as never) as Record<string, unknown> | null | undefined;
  if (ratios && typeof ratios === 'object') for (const g of Object.keys(ratios)) names.add(g);
  for (const c of await ctx.em.find(Channel, {}, { fields: ['group'] }))
    for (const g of splitList(c.group)) names.add(g);
  return [...names].sort((a, b) => a.localeCompare(b));
}
