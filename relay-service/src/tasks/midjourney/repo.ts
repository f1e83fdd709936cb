/**
 * The relay's writes and reads of `midjourney_tasks` (the relay is the table's writer, ARCHITECTURE.md §3).
 * Every state change that can race another relay is a conditional update: a task leaves an unfinished status
 * once, and only the update that finishes it as FAILURE marks its refund due (ADR 029).
 */
import type { Sql } from '../../core/repo.ts';
import type { TaskRow, UpstreamTask } from './wire.ts';

const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
const s = (v: unknown) => (v === null || v === undefined ? '' : String(v));

const COLUMNS = `id, code, user_id, token_id, "group", action, mj_id, prompt, prompt_en, description, state,
  submit_time, start_time, finish_time, image_url, status, progress, fail_reason, channel_id, quota, buttons,
  properties`;
const SELECT = `select ${COLUMNS} from midjourney_tasks`;

/** Not finished: neither SUCCESS nor FAILURE (new-api also treats '100%' as done). */
const UNFINISHED = `status not in ('SUCCESS', 'FAILURE')`;

function toRow(r: Record<string, unknown>): TaskRow {
  return {
    id: num(r.id),
    code: num(r.code),
    userId: num(r.user_id),
    tokenId: num(r.token_id),
    group: s(r.group),
    action: s(r.action),
    mjId: s(r.mj_id),
    prompt: s(r.prompt),
    promptEn: s(r.prompt_en),
    description: s(r.description),
    state: s(r.state),
    submitTime: num(r.submit_time),
    startTime: num(r.start_time),
    finishTime: num(r.finish_time),
    imageUrl: s(r.image_url),
    status: s(r.status),
    progress: s(r.progress),
    failReason: s(r.fail_reason),
    channelId: num(r.channel_id),
    quota: num(r.quota),
    buttons: s(r.buttons),
    properties: s(r.properties),
  };
}

export type NewTask = {
  code: number;
  userId: number;
  tokenId: number;
  group: string;
  action: string;
  mjId: string;
  prompt: string;
  description: string;
  state: string;
  submitTime: number;
  finishTime: number;
  imageUrl: string;
  status: string;
  progress: string;
  channelId: number;
  quota: number;
  requestId: string;
  properties: string;
  /** SHA-256 of the callback secret given to the upstream ('' when none was, ADR 036). */
  notifyHash: string;
};

export type TaskUpdate = Pick<
  UpstreamTask,
  'status' | 'progress' | 'imageUrl' | 'failReason' | 'promptEn' | 'description' | 'startTime' | 'finishTime'
> & { buttons: string; properties: string };

export function createMidjourneyRepo(sql: Sql) {
  return {
    async insert(t: NewTask): Promise<number> {
      const [row] = await sql<{ id: number }>(
        `insert into midjourney_tasks (code, user_id, token_id, "group", action, mj_id, prompt, description, state,
           created_at, submit_time, finish_time, image_url, status, progress, channel_id, quota, request_id,
           properties, notify_hash)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning id`,
        [
          t.code,
          t.userId,
          t.tokenId,
          t.group,
          t.action,
          t.mjId,
          t.prompt,
          t.description,
          t.state,
          Math.floor(t.submitTime / 1000),
          t.submitTime,
          t.finishTime,
          t.imageUrl,
          t.status,
          t.progress,
          t.channelId,
          t.quota,
          t.requestId,
          t.properties,
          t.notifyHash,
        ],
      );
      return num(row?.id);
    },

    /** The caller's task with this upstream id (the newest when a duplicate submit stored it twice). */
    async byMjId(userId: number, mjId: string): Promise<TaskRow | null> {
      const rows = await sql(`${SELECT} where user_id = ? and mj_id = ? order by id desc limit 1`, [
        userId,
        mjId,
      ]);
      return rows[0] ? toRow(rows[0]) : null;
    },

    /**
     * The tasks with this upstream id that were given a callback URL, with the hash of its secret (a `/mj/notify`
     * callback names its task by the upstream id; the secret decides which row, if any, it may touch).
     */
    async withNotifyHash(mjId: string): Promise<{ row: TaskRow; notifyHash: string }[]> {
      const rows = await sql(
        `select ${COLUMNS}, notify_hash from midjourney_tasks where mj_id = ? and notify_hash <> '' order by id desc limit 20`,
        [mjId],
      );
      return rows.map((r) => ({ row: toRow(r), notifyHash: s(r.notify_hash) }));
    },

    async byId(id: number): Promise<TaskRow | null> {
      const rows = await sql(`${SELECT} where id = ?`, [id]);
      return rows[0] ? toRow(rows[0]) : null;
    },

    /** Any user's task with this upstream id (the image proxy, which has no key). */
    async byOnlyMjId(mjId: string): Promise<TaskRow | null> {
      const rows = await sql(`${SELECT} where mj_id = ? order by id desc limit 1`, [mjId]);
      return rows[0] ? toRow(rows[0]) : null;
    },

    async byMjIds(userId: number, mjIds: readonly string[]): Promise<TaskRow[]> {
      if (mjIds.length === 0) return [];
      const rows = await sql(
        `${SELECT} where user_id = ? and mj_id in (select json_array_elements_text(?::json)) order by id`,
        [userId, JSON.stringify(mjIds)],
      );
      return rows.map(toRow);
    },

    /** Unfinished tasks, oldest first. */
    async unfinished(limit: number): Promise<TaskRow[]> {
      const rows = await sql(`${SELECT} where ${UNFINISHED} order by id limit ?`, [limit]);
      return rows.map(toRow);
    },

    /** Progress of an unfinished task (not to a final status; see finish). */
    async progress(id: number, u: TaskUpdate): Promise<void> {
      await sql(
        `update midjourney_tasks set status = ?, progress = ?, image_url = ?, fail_reason = ?, prompt_en = ?,
           description = ?, start_time = ?, buttons = ?, properties = ? where id = ? and ${UNFINISHED}`,
        [
          u.status,
          u.progress,
          u.imageUrl,
          u.failReason,
          u.promptEn,
          u.description,
          u.startTime,
          u.buttons,
          u.properties,
          id,
        ],
      );
    },

    /**
     * Finishes an unfinished task as SUCCESS or FAILURE. A FAILURE of a charged task marks its refund due in the
     * same statement. True only for the one update that finished it (a second relay's finds it finished).
     */
    async finish(id: number, u: TaskUpdate): Promise<boolean> {
      const rows = await sql(
        `update midjourney_tasks set status = ?, progress = ?, image_url = ?, fail_reason = ?, prompt_en = ?,
           description = ?, start_time = ?, finish_time = ?, buttons = ?, properties = ?,
           refund = case when ? = 'FAILURE' and quota > 0 then 1 else refund end
         where id = ? and ${UNFINISHED} returning id`,
        [
          u.status,
          u.progress,
          u.imageUrl,
          u.failReason,
          u.promptEn,
          u.description,
          u.startTime,
          u.finishTime,
          u.buttons,
          u.properties,
          u.status,
          id,
        ],
      );
      return rows.length > 0;
    },

    /** Failed tasks whose refund Billing has not applied yet. */
    async refundsDue(limit: number): Promise<TaskRow[]> {
      const rows = await sql(`${SELECT} where refund = 1 order by id limit ?`, [limit]);
      return rows.map(toRow);
    },

    async refundDone(ids: readonly number[]): Promise<void> {
      if (ids.length === 0) return;
      await sql(
        `update midjourney_tasks set refund = 2 where refund = 1 and id in (select json_array_elements_text(?::json)::int)`,
        [JSON.stringify(ids)],
      );
    },
  };
}

export type MidjourneyRepo = ReturnType<typeof createMidjourneyRepo>;
