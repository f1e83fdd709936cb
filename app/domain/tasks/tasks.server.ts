import { Role } from '@switchyard/db/entities/user.ts';
import { z } from 'zod';
import type { RequestCtx } from '#app/domain/context.server.ts';
import { ForbiddenError, UnauthorizedError } from '#app/domain/errors.ts';
import { parseInput as parseWith } from '#app/domain/validation.ts';
import type { TaskPage, TaskWire } from './constants.ts';

export type { TaskPage, TaskWire };

/**
 * Async (Suno) tasks for the console (seed 001 §2.12, §3 Async task, §7 Tasks): the admin list over every
 * user's rows with a channel filter, and the self list over the signed-in user's rows only (the user id always
 * comes from the actor). The `tasks` rows are written by the relay (ADR 029); the console only reads them.
 * Like new-api's GetAllTask / GetUserTask, the window is on submit_time (unix seconds), rows come newest first,
 * and data is { items, total, page, page_size }.
 */
export type TasksCtx = Pick<RequestCtx, 'em' | 'actor' | 't'>;

/** Absent or empty is `fallback`; digits become a number; anything else fails. */
const int = (min: number, max: number, fallback: number) =>
  z.preprocess(
    (v) =>
      v === '' || v == null ? fallback : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v,
    z.number().int().min(min).max(max),
  );
const text = (max: number) =>
  z.preprocess((v) => (v == null ? '' : typeof v === 'string' ? v.trim() : v), z.string().max(max));

/**
 * GET /api/task/ and /api/task/self: p is 1-based (0 means 1), page_size 1..100 (new-api's page query);
 * channel_id (admin only), task_id, platform, action, status are equalities; start/end_timestamp unix seconds.
 */
export const taskQuerySchema = z.object({
  p: int(0, 1_000_000, 1),
  page_size: int(1, 100, 10),
  channel_id: int(0, 2147483647, 0),
  task_id: text(191),
  platform: text(30),
  action: text(40),
  status: text(20),
  start_timestamp: int(0, Number.MAX_SAFE_INTEGER, 0),
  end_timestamp: int(0, Number.MAX_SAFE_INTEGER, 0),
});
export type TaskQuery = z.output<typeof taskQuerySchema>;

export function parseTaskQuery(ctx: Pick<TasksCtx, 't'>, value: unknown): TaskQuery {
  return parseWith(ctx.t, taskQuerySchema, value, { ns: 'tasks', messages: 'raw' });
}

type Row = {
  id: string | number;
  created_at: string | number;
  updated_at: string | number;
  task_id: string;
  platform: string;
  user_id: number;
  group: string;
  channel_id: number;
  quota: string | number;
  action: string;
  status: string;
  fail_reason: string;
  submit_time: string | number;
  start_time: string | number;
  finish_time: string | number;
  progress: string;
  properties: string;
  data: string;
  username: string | null;
};

/** A JSON text column as its value (new-api sends properties and data as JSON); unreadable text stays text. */
function json(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function serialize(r: Row, admin: boolean): TaskWire {
  return {
    id: Number(r.id),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
    task_id: r.task_id,
    platform: r.platform,
    user_id: r.user_id,
    group: r.group,
    channel_id: admin ? r.channel_id : 0,
    quota: Number(r.quota),
    action: r.action,
    status: r.status,
    fail_reason: r.fail_reason,
    submit_time: Number(r.submit_time),
    start_time: Number(r.start_time),
    finish_time: Number(r.finish_time),
    progress: r.progress,
    properties: json(r.properties),
    data: json(r.data),
    ...(admin ? { username: r.username ?? '' } : {}),
  };
}

type Actor = NonNullable<TasksCtx['actor']>;

function requireActor(ctx: TasksCtx): Actor {
  if (!ctx.actor) throw new UnauthorizedError(ctx.t('tasks:errors.unauthorized'));
  return ctx.actor;
}

async function page(ctx: TasksCtx, scope: { userId: number } | { admin: true }, q: TaskQuery) {
  const parts: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    parts.push(sql);
    params.push(value);
  };
  const admin = 'admin' in scope;
  if (!admin) add('t.user_id = ?', scope.userId);
  else if (q.channel_id) add('t.channel_id = ?', q.channel_id);
  if (q.task_id) add('t.task_id = ?', q.task_id);
  if (q.platform) add('t.platform = ?', q.platform);
  if (q.action) add('t.action = ?', q.action);
  if (q.status) add('t.status = ?', q.status);
  if (q.start_timestamp) add('t.submit_time >= ?', q.start_timestamp);
  if (q.end_timestamp) add('t.submit_time <= ?', q.end_timestamp);
  const where = parts.length ? parts.join(' and ') : 'true';
  const pageNo = Math.max(q.p, 1);
  const conn = ctx.em.getConnection();
  const [rows, [count]] = (await Promise.all([
    conn.execute(
      'select t.id, t.created_at, t.updated_at, t.task_id, t.platform, t.user_id, t."group", t.channel_id, ' +
        't.quota, t.action, t.status, t.fail_reason, t.submit_time, t.start_time, t.finish_time, t.progress, ' +
        `t.properties, t.data, u.username from tasks t left join users u on u.id = t.user_id where ${where} ` +
        'order by t.id desc limit ? offset ?',
      [...params, q.page_size, (pageNo - 1) * q.page_size],
    ),
    conn.execute(`select count(*)::int as n from tasks t where ${where}`, params),
  ])) as [Row[], { n: number }[]];
  return {
    items: rows.map((r) => serialize(r, admin)),
    total: count?.n ?? 0,
    page: pageNo,
    page_size: q.page_size,
  } satisfies TaskPage;
}

/** GET /api/task/ (admin): every user's tasks, with the channel filter; rows carry channel_id and username. */
export function listAllTasks(ctx: TasksCtx, q: TaskQuery): Promise<TaskPage> {
  const actor = requireActor(ctx);
  if (actor.role < Role.Admin) throw new ForbiddenError(ctx.t('tasks:errors.forbidden'));
  return page(ctx, { admin: true }, q);
}

/** GET /api/task/self: the signed-in user's tasks only (channel_id is ignored and not shown). */
export function listSelfTasks(ctx: TasksCtx, q: TaskQuery): Promise<TaskPage> {
  const actor = requireActor(ctx);
  return page(ctx, { userId: actor.id }, q);
}
