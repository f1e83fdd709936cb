/**
 * The relay's writes and reads of `tasks` for Suno (ADR 029, as midjourney/repo.ts): a task leaves an unfinished
 * status once, by a conditional update, and only the update that finishes it as FAILURE marks its refund due.
 * Times are unix seconds, as new-api stores them.
 */
import type { Sql } from '../../core/repo.ts';

const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
const s = (v: unknown) => (v === null || v === undefined ? '' : String(v));

export type SunoTaskRow = {
  id: number;
  taskId: string;
  userId: number;
  tokenId: number;
  group: string;
  channelId: number;
  quota: number;
  action: string;
  status: string;
  failReason: string;
  submitTime: number;
  startTime: number;
  finishTime: number;
  progress: string;
  data: string;
};

export type SunoTaskUpdate = {
  status: string;
  progress: string;
  failReason: string;
  startTime: number;
  finishTime: number;
  data: string;
};

const SELECT = `select id, task_id, user_id, token_id, "group", channel_id, quota, action, status, fail_reason,
  submit_time, start_time, finish_time, progress, data from tasks`;
const UNFINISHED = `platform = 'suno' and status not in ('SUCCESS', 'FAILURE')`;

function toRow(r: Record<string, unknown>): SunoTaskRow {
  return {
    id: num(r.id),
    taskId: s(r.task_id),
    userId: num(r.user_id),
    tokenId: num(r.token_id),
    group: s(r.group),
    channelId: num(r.channel_id),
    quota: num(r.quota),
    action: s(r.action),
    status: s(r.status),
    failReason: s(r.fail_reason),
    submitTime: num(r.submit_time),
    startTime: num(r.start_time),
    finishTime: num(r.finish_time),
    progress: s(r.progress),
    data: s(r.data),
  };
}

export function createSunoRepo(sql: Sql) {
  return {
    async insert(t: {
      taskId: string;
      userId: number;
      tokenId: number;
      group: string;
      channelId: number;
      quota: number;
      action: string;
      submitTime: number;
      requestId: string;
      properties: string;
    }): Promise<number> {
      const [row] = await sql<{ id: number }>(
        `insert into tasks (created_at, updated_at, task_id, platform, user_id, channel_id, quota, action, status,
           fail_reason, submit_time, start_time, finish_time, progress, properties, data, token_id, "group",
           request_id, refund)
         values (?, ?, ?, 'suno', ?, ?, ?, ?, 'NOT_START', '', ?, 0, 0, '0%', ?, '', ?, ?, ?, 0) returning id`,
        [
          t.submitTime,
          t.submitTime,
          t.taskId,
          t.userId,
          t.channelId,
          t.quota,
          t.action,
          t.submitTime,
          t.properties,
          t.tokenId,
          t.group,
          t.requestId,
        ],
      );
      return num(row?.id);
    },

    /** The caller's Suno task with this upstream id. */
    async byTaskId(userId: number, taskId: string): Promise<SunoTaskRow | null> {
      const rows = await sql(
        `${SELECT} where platform = 'suno' and user_id = ? and task_id = ? order by id desc limit 1`,
        [userId, taskId],
      );
      return rows[0] ? toRow(rows[0]) : null;
    },

    async byTaskIds(userId: number, taskIds: readonly string[]): Promise<SunoTaskRow[]> {
      if (taskIds.length === 0) return [];
      const rows = await sql(
        `${SELECT} where platform = 'suno' and user_id = ?
           and task_id in (select json_array_elements_text(?::json)) order by id`,
        [userId, JSON.stringify(taskIds)],
      );
      return rows.map(toRow);
    },

    async unfinished(limit: number): Promise<SunoTaskRow[]> {
      const rows = await sql(`${SELECT} where ${UNFINISHED} order by id limit ?`, [limit]);
      return rows.map(toRow);
    },

    async progress(id: number, u: SunoTaskUpdate, now: number): Promise<void> {
      await sql(
        `update tasks set status = ?, progress = ?, fail_reason = ?, start_time = ?, data = ?, updated_at = ?
         where id = ? and ${UNFINISHED}`,
        [u.status, u.progress, u.failReason, u.startTime, u.data, now, id],
      );
    },

    /** Finishes an unfinished task; a charged FAILURE marks its refund due in the same statement. */
    async finish(id: number, u: SunoTaskUpdate, now: number): Promise<boolean> {
      const rows = await sql(
        `update tasks set status = ?, progress = ?, fail_reason = ?, start_time = ?, finish_time = ?, data = ?,
           updated_at = ?, refund = case when ? = 'FAILURE' and quota > 0 then 1 else refund end
         where id = ? and ${UNFINISHED} returning id`,
        [u.status, u.progress, u.failReason, u.startTime, u.finishTime, u.data, now, u.status, id],
      );
      return rows.length > 0;
    },

    async refundsDue(limit: number): Promise<SunoTaskRow[]> {
      const rows = await sql(`${SELECT} where platform = 'suno' and refund = 1 order by id limit ?`, [limit]);
      return rows.map(toRow);
    },

    async refundDone(ids: readonly number[]): Promise<void> {
      if (ids.length === 0) return;
      await sql(
        `update tasks set refund = 2 where refund = 1 and id in (select json_array_elements_text(?::json)::int)`,
        [JSON.stringify(ids)],
      );
    },
  };
}

export type SunoRepo = ReturnType<typeof createSunoRepo>;
