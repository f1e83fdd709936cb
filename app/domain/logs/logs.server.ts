import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { LogType } from '@switchyard/db/entities/log.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { z } from 'zod';
import type { RequestCtx } from '#app/domain/context.server.ts';
import { ForbiddenError, InputError, NotFoundError, UnauthorizedError } from '#app/domain/errors.ts';
import { parseInput as parseWith } from '#app/domain/validation.ts';
import { LOG_COUNT_CAP, type LogPage, type LogStat, type LogUserInfo, type LogWire } from './constants.ts';

export type { LogPage, LogStat, LogUserInfo, LogWire };

/**
 * Usage logs (seed 001 §2.10, §3 Log record / Log stats, §4 log types, §6, §7 Logs): the admin list and stats
 * over every user's rows, the self variants over the signed-in user's rows only (the user id always comes from
 * the actor, never from the request), the user-info lookup and the admin cleanup before a time.
 *
 * Speed on millions of rows: filters are equalities on indexed columns (user_id / type / channel_id together
 * with created_at, or username, token_name, model_name), rows are ordered by created_at desc, id desc, and the
 * list never counts the whole table: it counts at most LOG_COUNT_CAP matching rows (`total_capped` says the
 * count stopped) and fetches page_size + 1 rows to know whether a next page exists.
 */
export type LogsCtx = Pick<RequestCtx, 'em' | 'actor' | 't'> & { ip?: string };

// ---------------------------------------------------------------------------------------------------------------
// Schemas (query strings: every value is a string or absent)

/** Absent is ''; a string is trimmed. */
const text = (max: number) =>
  z.preprocess((v) => (v == null ? '' : typeof v === 'string' ? v.trim() : v), z.string().max(max));
/** Absent or empty is `fallback`; digits become a number; anything else fails. */
const int = (min: number, max: number, fallback: number) =>
  z.preprocess(
    (v) =>
      v === '' || v == null ? fallback : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v,
    z.number().int().min(min).max(max),
  );

/** GET /api/log/self/ (and /api/log/ with username and channel). p is 1-based (0 means 1); page_size 1..100. */
export const logQuerySchema = z.object({
  p: z.coerce.number().int().min(0).catch(1),
  page_size: z.coerce.number().int().min(1).max(100).catch(10),
  type: int(0, 32767, 0),
  username: text(64),
  token_name: text(128),
  model_name: text(255),
  start_timestamp: int(0, Number.MAX_SAFE_INTEGER, 0),
  end_timestamp: int(0, Number.MAX_SAFE_INTEGER, 0),
  channel: int(0, 2147483647, 0),
  group: text(64),
});
export type LogQuery = z.output<typeof logQuerySchema>;

/** DELETE /api/log/?target_timestamp=: unix seconds, required. */
export const clearLogsSchema = z.object({ target_timestamp: int(0, Number.MAX_SAFE_INTEGER, 0) });

export function parseInput<S extends z.ZodType>(
  ctx: Pick<LogsCtx, 't'>,
  schema: S,
  value: unknown,
): z.output<S> {
  return parseWith(ctx.t, schema, value, { ns: 'logs', messages: 'raw' });
}

/** How the page shows quota (seed 000 §9): currency or abbreviated numbers. */
export function quotaDisplay(options: Pick<RequestCtx['options'], 'get'>) {
  return {
    displayInCurrency: Boolean(options.get('DisplayInCurrencyEnabled')),
    quotaPerUnit: Number(options.get('QuotaPerUnit')) || 500000,
  };
}

// ---------------------------------------------------------------------------------------------------------------

type Row = {
  id: string | number;
  user_id: number;
  created_at: string | number;
  type: number;
  content: string;
  username: string;
  token_name: string;
  token_id: number;
  model_name: string;
  quota: string | number;
  prompt_tokens: number;
  completion_tokens: number;
  use_time: number;
  is_stream: boolean;
  channel_id: number;
  channel_name: string;
  group: string;
  other: string;
  ip: string;
};

function serialize(r: Row): LogWire {
  return {
    id: Number(r.id),
    user_id: r.user_id,
    created_at: Number(r.created_at),
    type: r.type,
    content: r.content,
    username: r.username,
    token_name: r.token_name,
    token_id: r.token_id,
    model_name: r.model_name,
    quota: Number(r.quota),
    prompt_tokens: r.prompt_tokens,
    completion_tokens: r.completion_tokens,
    use_time: r.use_time,
    is_stream: r.is_stream,
    channel: r.channel_id,
    channel_name: r.channel_name,
    group: r.group,
    other: r.other,
    ip: r.ip,
  };
}

/** What a user sees of their own row: no channel, and `other` without admin_info (the retry path). */
function forSelf(w: LogWire): LogWire {
  let other = w.other;
  if (other) {
    try {
      const parsed: unknown = JSON.parse(other);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && 'admin_info' in parsed) {
        const { admin_info: _hidden, ...rest } = parsed as Record<string, unknown>;
        other = JSON.stringify(rest);
      }
    } catch {
      other = '';
    }
  }
  return { ...w, channel: 0, channel_name: '', other };
}

// ---------------------------------------------------------------------------------------------------------------
// Guards and the WHERE clause

type Actor = NonNullable<LogsCtx['actor']>;

function requireActor(ctx: LogsCtx): Actor {
  if (!ctx.actor) throw new UnauthorizedError(ctx.t('logs:errors.unauthorized'));
  return ctx.actor;
}

function requireAdmin(ctx: LogsCtx): Actor {
  const actor = requireActor(ctx);
  if (actor.role < Role.Admin) throw new ForbiddenError(ctx.t('logs:errors.forbidden'));
  return actor;
}

/** Self calls: the actor's id. Admin calls: every user, or (username filter) the id that name belongs to. */
type Scope = { userId: number } | { admin: true; nameUserId?: number };

/**
 * The admin username filter also pins the user id the name belongs to (users.username is unique), so the query
 * walks logs_user_id_created_at_index: on a bare `username = ?` PostgreSQL prefers a backward scan of
 * created_at and, for a rare or old name, reads most of the table (measured: ~1 s on 2M rows). A name no user
 * has now (renamed or removed) falls back to the username column alone.
 */
async function adminScope(ctx: LogsCtx, q: Partial<LogQuery>): Promise<Scope> {
  if (!q.username) return { admin: true };
  const [row] = (await ctx.em
    .getConnection()
    .execute('select id from users where username = ? limit 1', [q.username])) as { id: number }[];
  return row ? { admin: true, nameUserId: row.id } : { admin: true };
}

/** Equalities only, so each filter can use its index; `withTime: false` leaves out the time window (rpm/tpm). */
function where(scope: Scope, q: Partial<LogQuery>, withTime = true): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    parts.push(sql);
    params.push(value);
  };
  if ('userId' in scope) add('user_id = ?', scope.userId);
  else {
    if (scope.nameUserId) add('user_id = ?', scope.nameUserId);
    if (q.username) add('username = ?', q.username);
    if (q.channel) add('channel_id = ?', q.channel);
  }
  if (q.type) add('type = ?', q.type);
  if (q.token_name) add('token_name = ?', q.token_name);
  if (q.model_name) add('model_name = ?', q.model_name);
  if (q.group) add('"group" = ?', q.group);
  if (withTime && q.start_timestamp) add('created_at >= ?', q.start_timestamp);
  if (withTime && q.end_timestamp) add('created_at <= ?', q.end_timestamp);
  return { sql: parts.length ? parts.join(' and ') : 'true', params };
}

const COLUMNS =
  'id, user_id, created_at, type, content, username, token_name, token_id, model_name, quota, prompt_tokens, ' +
  'completion_tokens, use_time, is_stream, channel_id, channel_name, "group", other, ip';

async function page(ctx: LogsCtx, scope: Scope, q: LogQuery): Promise<LogPage> {
  const pageNo = Math.max(q.p, 1);
  const pageSize = q.page_size;
  const offset = (pageNo - 1) * pageSize;
  const w = where(scope, q);
  const conn = ctx.em.getConnection();
  const rows = (await conn.execute(
    `select ${COLUMNS} from logs where ${w.sql} order by created_at desc, id desc limit ? offset ?`,
    [...w.params, pageSize + 1, offset],
  )) as Row[];
  const hasMore = rows.length > pageSize;
  let total: number;
  let capped = false;
  if (pageNo === 1 && !hasMore) total = rows.length;
  else {
    const [c] = (await conn.execute(
      `select count(*)::int as n from (select 1 from logs where ${w.sql} limit ?) t`,
      [...w.params, LOG_COUNT_CAP + 1],
    )) as { n: number }[];
    capped = (c?.n ?? 0) > LOG_COUNT_CAP;
    total = Math.min(c?.n ?? 0, LOG_COUNT_CAP);
  }
  const items = rows.slice(0, pageSize).map(serialize);
  return {
    items: 'userId' in scope ? items.map(forSelf) : items,
    page: pageNo,
    page_size: pageSize,
    total,
    total_capped: capped,
    has_more: hasMore,
  };
}

/**
 * Log stats (new-api SumUsedQuota): quota = the sum over consume rows matching the filters and time window;
 * rpm / tpm = consume rows and their prompt + completion tokens in the last 60 seconds (same filters, no window).
 */
async function stat(ctx: LogsCtx, scope: Scope, q: Partial<LogQuery>): Promise<LogStat> {
  const conn = ctx.em.getConnection();
  const consume = { ...q, type: LogType.Consume };
  const w = where(scope, consume);
  const recent = where(scope, consume, false);
  const since = Math.floor(Date.now() / 1000) - 60;
  const [[sum], [rate]] = (await Promise.all([
    conn.execute(`select coalesce(sum(quota), 0)::bigint as quota from logs where ${w.sql}`, w.params),
    conn.execute(
      'select count(*)::int as rpm, coalesce(sum(prompt_tokens + completion_tokens), 0)::bigint as tpm ' +
        `from logs where ${recent.sql} and created_at >= ?`,
      [...recent.params, since],
    ),
  ])) as [{ quota: string }[], { rpm: number; tpm: string }[]];
  return { quota: Number(sum?.quota ?? 0), rpm: Number(rate?.rpm ?? 0), tpm: Number(rate?.tpm ?? 0) };
}

// ---------------------------------------------------------------------------------------------------------------
// Use cases

/** GET /api/log/ (admin): every user's rows, with username and channel filters. */
export async function listAllLogs(ctx: LogsCtx, q: LogQuery): Promise<LogPage> {
  requireAdmin(ctx);
  return page(ctx, await adminScope(ctx, q), q);
}

/** GET /api/log/self/: the signed-in user's rows only (username and channel are ignored). */
export function listSelfLogs(ctx: LogsCtx, q: LogQuery): Promise<LogPage> {
  const actor = requireActor(ctx);
  return page(ctx, { userId: actor.id }, q);
}

/** GET /api/log/stat (admin). */
export async function statAllLogs(ctx: LogsCtx, q: Partial<LogQuery>): Promise<LogStat> {
  requireAdmin(ctx);
  return stat(ctx, await adminScope(ctx, q), q);
}

/** GET /api/log/self/stat. */
export function statSelfLogs(ctx: LogsCtx, q: Partial<LogQuery>): Promise<LogStat> {
  const actor = requireActor(ctx);
  return stat(ctx, { userId: actor.id }, q);
}

/** The user-info dialog of the admin log table (seed 001 §3 User info). */
export async function getLogUserInfo(ctx: LogsCtx, id: number): Promise<LogUserInfo> {
  requireAdmin(ctx);
  const user =
    Number.isSafeInteger(id) && id > 0 ? await ctx.em.findOne(User, { id }, { filters: false }) : null;
  if (!user) throw new NotFoundError(ctx.t('logs:errors.userNotFound'));
  return {
    id: user.id,
    username: user.username,
    quota: Number(user.quota),
    used_quota: Number(user.usedQuota),
    request_count: Number(user.requestCount),
    group: user.group,
  };
}

function validTarget(ctx: LogsCtx, target: number): number {
  if (!Number.isSafeInteger(target) || target <= 0)
    throw new InputError(ctx.t('logs:errors.targetRequired'), { target_timestamp: [] });
  return target;
}

/** How many rows a cleanup before `target` would delete, counted up to LOG_COUNT_CAP (the confirm step). */
export async function countLogsBefore(
  ctx: LogsCtx,
  target: number,
): Promise<{ count: number; capped: boolean }> {
  requireAdmin(ctx);
  validTarget(ctx, target);
  const [c] = (await ctx.em
    .getConnection()
    .execute('select count(*)::int as n from (select 1 from logs where created_at < ? limit ?) t', [
      target,
      LOG_COUNT_CAP + 1,
    ])) as { n: number }[];
  const n = c?.n ?? 0;
  return { count: Math.min(n, LOG_COUNT_CAP), capped: n > LOG_COUNT_CAP };
}

const DELETE_BATCH = 5_000;

/**
 * DELETE /api/log/?target_timestamp= (admin): removes every log row created before `target` (unix seconds) and
 * answers how many. It deletes in batches of DELETE_BATCH ids (created_at index), each its own statement, so a
 * cleanup of millions of rows neither holds one huge transaction nor blocks billing inserts for long. An
 * AuditEntry records who, the cut-off and the count.
 */
export async function clearLogsBefore(ctx: LogsCtx, target: number): Promise<number> {
  const actor = requireAdmin(ctx);
  validTarget(ctx, target);
  const conn = ctx.em.getConnection();
  let deleted = 0;
  for (;;) {
    const [r] = (await conn.execute(
      'with d as (delete from logs where id in (select id from logs where created_at < ? limit ?) returning 1) ' +
        'select count(*)::int as n from d',
      [target, DELETE_BATCH],
    )) as { n: number }[];
    const n = r?.n ?? 0;
    deleted += n;
    if (n < DELETE_BATCH) break;
  }
  const em = ctx.em.fork();
  em.create(AuditEntry, {
    actorId: actor.id,
    action: 'log.clear',
    targetType: 'log',
    targetId: '',
    before: JSON.stringify({ target_timestamp: target }),
    after: JSON.stringify({ deleted }),
    ip: ctx.ip ?? '',
  });
  await em.flush();
  return deleted;
}
