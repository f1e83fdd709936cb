import { Role } from '@switchyard/db/entities/user.ts';
import { z } from 'zod';
import type { RequestCtx } from '#app/domain/context.server.ts';
import { ForbiddenError, UnauthorizedError } from '#app/domain/errors.ts';
import { parseInput as parseWith } from '#app/domain/validation.ts';

/**
 * Drawing tasks (seed 001 §2.11, §3 Drawing task, §4 drawing states): the admin list over every user's
 * midjourney_tasks rows and the self list over the signed-in user's rows (the user id always comes from the
 * actor). The relay writes the rows (ADR 029); the console only reads them. The wire shape is new-api's
 * Midjourney model (snake_case), paged as { items, page, page_size, total }.
 */
export type MidjourneyCtx = Pick<RequestCtx, 'em' | 'actor' | 't'> & {
  options?: Pick<RequestCtx['options'], 'get'>;
};

export type MidjourneyWire = {
  id: number;
  code: number;
  user_id: number;
  action: string;
  mj_id: string;
  prompt: string;
  prompt_en: string;
  description: string;
  state: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
  image_url: string;
  status: string;
  progress: string;
  fail_reason: string;
  channel_id: number;
  quota: number;
  buttons: string;
  properties: string;
};

export type MidjourneyPage = { items: MidjourneyWire[]; page: number; page_size: number; total: number };

/** Absent or empty is 0; digits become a number; anything else fails. */
const int = (max: number) =>
  z.preprocess(
    (v) => (v === '' || v == null ? 0 : typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v),
    z.number().int().min(0).max(max),
  );

/**
 * GET /api/mj/?p&page_size&channel_id&mj_id&start_timestamp&end_timestamp (times in unix milliseconds, as
 * new-api's GetAllMidjourney reads them). p is 1-based (0 means 1); page_size 1..100.
 */
export const midjourneyQuerySchema = z.object({
  p: z.coerce.number().int().min(0).catch(1),
  page_size: z.coerce.number().int().min(1).max(100).catch(10),
  channel_id: int(2147483647),
  mj_id: z.preprocess((v) => (v == null ? '' : typeof v === 'string' ? v.trim() : v), z.string().max(128)),
  start_timestamp: int(Number.MAX_SAFE_INTEGER),
  end_timestamp: int(Number.MAX_SAFE_INTEGER),
});
export type MidjourneyQuery = z.output<typeof midjourneyQuerySchema>;

export function parseMidjourneyQuery(ctx: Pick<MidjourneyCtx, 't'>, value: unknown): MidjourneyQuery {
  return parseWith(ctx.t, midjourneyQuerySchema, value, { ns: 'midjourney', messages: 'raw' });
}

type Actor = NonNullable<MidjourneyCtx['actor']>;

function requireActor(ctx: MidjourneyCtx): Actor {
  if (!ctx.actor) throw new UnauthorizedError(ctx.t('midjourney:errors.unauthorized'));
  return ctx.actor;
}

type Row = {
  id: number;
  code: number;
  user_id: number;
  action: string;
  mj_id: string;
  prompt: string;
  prompt_en: string;
  description: string;
  state: string;
  submit_time: string | number;
  start_time: string | number;
  finish_time: string | number;
  image_url: string;
  status: string;
  progress: string;
  fail_reason: string;
  channel_id: number;
  quota: string | number;
  buttons: string;
  properties: string;
};

const COLUMNS =
  'id, code, user_id, action, mj_id, prompt, prompt_en, description, state, submit_time, start_time, ' +
  'finish_time, image_url, status, progress, fail_reason, channel_id, quota, buttons, properties';

/** With MjForwardUrlEnabled the image goes through the gateway's image proxy, as new-api answers it. */
function imageUrl(ctx: MidjourneyCtx, r: Row): string {
  if (!r.image_url || !ctx.options?.get('MjForwardUrlEnabled')) return r.image_url;
  const base = String(ctx.options.get('ServerAddress') ?? '').replace(/\/+$/, '');
  return `${base}/mj/image/${encodeURIComponent(r.mj_id)}`;
}

function serialize(ctx: MidjourneyCtx, r: Row, self: boolean): MidjourneyWire {
  return {
    id: Number(r.id),
    code: r.code,
    user_id: r.user_id,
    action: r.action,
    mj_id: r.mj_id,
    prompt: r.prompt,
    prompt_en: r.prompt_en,
    description: r.description,
    state: r.state,
    submit_time: Number(r.submit_time),
    start_time: Number(r.start_time),
    finish_time: Number(r.finish_time),
    image_url: imageUrl(ctx, r),
    status: r.status,
    progress: r.progress,
    fail_reason: r.fail_reason,
    channel_id: self ? 0 : r.channel_id,
    quota: Number(r.quota),
    buttons: r.buttons,
    properties: r.properties,
  };
}

async function page(ctx: MidjourneyCtx, userId: number | null, q: MidjourneyQuery): Promise<MidjourneyPage> {
  const parts: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    parts.push(sql);
    params.push(value);
  };
  if (userId !== null) add('user_id = ?', userId);
  else if (q.channel_id) add('channel_id = ?', q.channel_id);
  if (q.mj_id) add('mj_id = ?', q.mj_id);
  if (q.start_timestamp) add('submit_time >= ?', q.start_timestamp);
  if (q.end_timestamp) add('submit_time <= ?', q.end_timestamp);
  const where = parts.length ? parts.join(' and ') : 'true';
  const pageNo = Math.max(q.p, 1);
  const conn = ctx.em.getConnection();
  const [rows, count] = (await Promise.all([
    conn.execute(`select ${COLUMNS} from midjourney_tasks where ${where} order by id desc limit ? offset ?`, [
      ...params,
      q.page_size,
      (pageNo - 1) * q.page_size,
    ]),
    conn.execute(`select count(*)::int as n from midjourney_tasks where ${where}`, params),
  ])) as [Row[], { n: number }[]];
  return {
    items: rows.map((r) => serialize(ctx, r, userId !== null)),
    page: pageNo,
    page_size: q.page_size,
    total: count[0]?.n ?? 0,
  };
}

/** GET /api/mj/ (admin): every user's tasks, with the channel filter. */
export function listAllMidjourney(ctx: MidjourneyCtx, q: MidjourneyQuery): Promise<MidjourneyPage> {
  const actor = requireActor(ctx);
  if (actor.role < Role.Admin) throw new ForbiddenError(ctx.t('midjourney:errors.forbidden'));
  return page(ctx, null, q);
}

/** GET /api/mj/self/: the signed-in user's tasks only (channel_id is ignored and not shown). */
export function listSelfMidjourney(ctx: MidjourneyCtx, q: MidjourneyQuery): Promise<MidjourneyPage> {
  return page(ctx, requireActor(ctx).id, q);
}
