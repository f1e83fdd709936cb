/**
 * The data dashboard (issue 15, new-api's 数据看板): `quota_data` rows (user x model x hour, ADR 026) read as
 * new-api's GET /api/data/ (admin: every user summed per model and hour, or one username's rows) and
 * /api/data/self/ (the caller's rows, at most a month), and the page's series per model and bucket in the
 * user's time zone. The user id of the self reads always comes from the actor.
 */
import { Role } from '@switchyard/db/entities/user.ts';
import { z } from 'zod';
import { formatQuota, type QuotaDisplay } from '#app/domain/account/quota-format.ts';
import { ForbiddenError, InputError } from '#app/domain/errors.ts';
import type { DomainCtx } from '#app/domain/http.server.ts';
import { parseInput } from '#app/domain/validation.ts';
import { type Cell, type DashboardSeries, MAX_BUCKETS } from './constants.ts';
import { bucketLabel, bucketStarts, type Granularity } from './time.ts';

export type { Cell, DashboardSeries };

export type DashboardCtx = Pick<DomainCtx, 'em' | 'actor' | 't' | 'options'>;

/** new-api's QuotaData JSON. */
export type QuotaDataWire = {
  id: number;
  user_id: number;
  username: string;
  model_name: string;
  created_at: number;
  token_used: number;
  count: number;
  quota: number;
};

/** A self query may span at most this many seconds (new-api: "时间跨度不能超过 1 个月"). */
export const SELF_MAX_SPAN = 2_592_000;

/** Unix seconds as new-api's strconv.ParseInt reads them: an optional sign and digits, required. */
const timestamp = (field: string) =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^[+-]?\d{1,15}$/.test(v.trim()) ? Number(v.trim()) : undefined),
    z.number({ message: `errors.${field}` }).int(),
  );

const username = z.preprocess(
  (v) => (v == null ? '' : typeof v === 'string' ? v.trim() : v),
  z.string().max(64),
);

/** GET /api/data/ */
export const allQuerySchema = z.object({
  start_timestamp: timestamp('startTimestamp'),
  end_timestamp: timestamp('endTimestamp'),
  username,
  /** sent by new-api's frontend, not read by its backend */
  default_time: z.string().optional().catch(undefined),
});
/** GET /api/data/self/ */
export const selfQuerySchema = allQuerySchema.pick({ start_timestamp: true, end_timestamp: true });

export function parseQuery<S extends z.ZodType>(
  ctx: Pick<DashboardCtx, 't'>,
  schema: S,
  value: unknown,
): z.output<S> {
  return parseInput(ctx.t, schema, value, { ns: 'dashboard', messages: 'translated' });
}

type Row = {
  id: number | string;
  user_id: number;
  username: string;
  model_name: string;
  created_at: number | string;
  token_used: number | string;
  count: number | string;
  quota: number | string;
};

function serialize(r: Row): QuotaDataWire {
  return {
    id: Number(r.id),
    user_id: Number(r.user_id),
    username: r.username,
    model_name: r.model_name,
    created_at: Number(r.created_at),
    token_used: Number(r.token_used),
    count: Number(r.count),
    quota: Number(r.quota),
  };
}

function requireActor(ctx: DashboardCtx) {
  if (!ctx.actor) throw new ForbiddenError(ctx.t('dashboard:errors.forbidden'));
  return ctx.actor;
}

/**
 * Admin read: with a username that user's hourly rows, else every user's rows summed per model and hour
 * (id, user_id and username then zero and empty, as new-api's grouped query answers).
 */
export async function listAllQuotaData(
  ctx: DashboardCtx,
  q: { start_timestamp: number; end_timestamp: number; username: string },
): Promise<QuotaDataWire[]> {
  const actor = requireActor(ctx);
  if (actor.role < Role.Admin) throw new ForbiddenError(ctx.t('dashboard:errors.forbidden'));
  const conn = ctx.em.getConnection();
  const rows = (
    q.username
      ? await conn.execute(
          'select id, user_id, username, model_name, created_at, token_used, count, quota from quota_data ' +
            'where username = ? and created_at >= ? and created_at <= ? order by created_at, model_name, id',
          [q.username, q.start_timestamp, q.end_timestamp],
        )
      : await conn.execute(
          "select 0 as id, 0 as user_id, '' as username, model_name, created_at, sum(token_used) as token_used, " +
            'sum(count) as count, sum(quota) as quota from quota_data where created_at >= ? and created_at <= ? ' +
            'group by model_name, created_at order by created_at, model_name',
          [q.start_timestamp, q.end_timestamp],
        )
  ) as Row[];
  return rows.map(serialize);
}

/** Self read: the caller's rows only; a span over a month is refused. */
export async function listSelfQuotaData(
  ctx: DashboardCtx,
  q: { start_timestamp: number; end_timestamp: number },
): Promise<QuotaDataWire[]> {
  const actor = requireActor(ctx);
  if (q.end_timestamp - q.start_timestamp > SELF_MAX_SPAN)
    throw new InputError(ctx.t('dashboard:errors.spanTooLong'));
  const rows = (await ctx.em
    .getConnection()
    .execute(
      'select id, user_id, username, model_name, created_at, token_used, count, quota from quota_data ' +
        'where user_id = ? and created_at >= ? and created_at <= ? order by created_at, model_name, id',
      [actor.id, q.start_timestamp, q.end_timestamp],
    )) as Row[];
  return rows.map(serialize);
}

// ---------------------------------------------------------------------------------------------------------------
// The page

const zero = (): Cell => ({ quota: 0, tokens: 0, count: 0 });

const pgZones = new Map<string, boolean>();
/**
 * The zone when PostgreSQL knows it too (its tz database can be older than the runtime's), else 'UTC'; cached.
 */
export async function checkedTimeZone(ctx: Pick<DashboardCtx, 'em'>, tz: string): Promise<string> {
  if (tz === 'UTC') return tz;
  const cached = pgZones.get(tz);
  if (cached !== undefined) return cached ? tz : 'UTC';
  const rows = (await ctx.em
    .getConnection()
    .execute('select 1 from pg_timezone_names where name = ? limit 1', [tz])) as unknown[];
  const known = rows.length > 0;
  if (pgZones.size < 1000) pgZones.set(tz, known);
  return known ? tz : 'UTC';
}

/**
 * Series for the page: admins every user (or one username), others their own rows; the range is
 * [start, end] (unix seconds, end inclusive) bucketed in `timeZone`.
 */
export async function dashboardSeries(
  ctx: DashboardCtx,
  q: { start: number; end: number; granularity: Granularity; timeZone: string; username: string },
  display: QuotaDisplay,
): Promise<DashboardSeries> {
  const actor = requireActor(ctx);
  const admin = actor.role >= Role.Admin;
  const timeZone = await checkedTimeZone(ctx, q.timeZone);
  if (timeZone !== q.timeZone) q = { ...q, timeZone };
  if (q.end < q.start) throw new InputError(ctx.t('dashboard:errors.endBeforeStart'));
  if (!admin && q.end - q.start > SELF_MAX_SPAN) throw new InputError(ctx.t('dashboard:errors.spanTooLong'));
  const starts = bucketStarts(q.start, q.end, q.granularity, q.timeZone, MAX_BUCKETS);
  if (!starts) throw new InputError(ctx.t('dashboard:errors.tooManyBuckets', { max: MAX_BUCKETS }));
  // quota_data hours are whole UTC hours: an hour row belongs to the range when it starts inside it.
  const filter = admin ? (q.username ? 'username = ?' : 'true') : 'user_id = ?';
  const params: unknown[] = admin ? (q.username ? [q.username] : []) : [actor.id];
  const rows = (await ctx.em
    .getConnection()
    .execute(
      'select extract(epoch from date_trunc(?, to_timestamp(created_at) at time zone ?) at time zone ?)::bigint as b, ' +
        'model_name, sum(quota) as quota, sum(token_used) as tokens, sum(count) as count from quota_data ' +
        `where ${filter} and created_at >= ? and created_at <= ? group by 1, 2`,
      [q.granularity, q.timeZone, q.timeZone, ...params, q.start - (q.start % 3600), q.end],
    )) as { b: string | number; model_name: string; quota: string; tokens: string; count: string }[];

  const index = (b: number) => {
    // the last bucket starting at or before b (exact in the normal case)
    let lo = 0;
    let hi = starts.length - 1;
    if (b < (starts[0] ?? 0)) return 0;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= b) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const byModel = new Map<string, Cell[]>();
  for (const r of rows) {
    const cells = byModel.get(r.model_name) ?? starts.map(zero);
    const cell = cells[index(Number(r.b))] as Cell;
    cell.quota += Number(r.quota);
    cell.tokens += Number(r.tokens);
    cell.count += Number(r.count);
    byModel.set(r.model_name, cells);
  }
  const sum = (cells: Cell[]) =>
    cells.reduce(
      (t, c) => ({ quota: t.quota + c.quota, tokens: t.tokens + c.tokens, count: t.count + c.count }),
      zero(),
    );
  const models = [...byModel.entries()]
    .map(([name, cells]) => ({ name, total: sum(cells), cells }))
    .sort(
      (a, b) => b.total.quota - a.total.quota || b.total.count - a.total.count || (a.name < b.name ? -1 : 1),
    );
  const bucketTotals = starts.map((_, i) => sum(models.map((m) => m.cells[i] as Cell)));
  const totals = sum(bucketTotals);
  const minutes = Math.max(1, (q.end - q.start) / 60);
  return {
    granularity: q.granularity,
    timeZone: q.timeZone,
    start: q.start,
    end: q.end,
    buckets: starts.map((s) => ({ start: s, label: bucketLabel(s, q.granularity, q.timeZone) })),
    models: models.map(({ name, total }) => ({ name, total })),
    cells: models.map((m) => m.cells),
    totals,
    bucketTotals,
    rpm: Math.round((totals.count / minutes) * 1000) / 1000,
    tpm: Math.round((totals.tokens / minutes) * 1000) / 1000,
    quotaText: formatQuota(totals.quota, display),
  };
}
