/** Wire shapes and display helpers of async tasks, shared by the server and the /task page. */

/** One task as /api/task answers it (new-api's TaskDto; `username` on the admin list only). */
export type TaskWire = {
  id: number;
  created_at: number;
  updated_at: number;
  task_id: string;
  platform: string;
  user_id: number;
  group: string;
  channel_id: number;
  quota: number;
  action: string;
  status: string;
  fail_reason: string;
  /** unix seconds */
  submit_time: number;
  start_time: number;
  finish_time: number;
  progress: string;
  properties: unknown;
  data: unknown;
  username?: string;
};

export type TaskPage = { items: TaskWire[]; total: number; page: number; page_size: number };

/** Async task states (seed 001 §4); '' is shown as submitting. */
export const TASK_STATUS_KEYS: Record<string, string> = {
  SUCCESS: 'success',
  NOT_START: 'notStart',
  SUBMITTED: 'submitted',
  IN_PROGRESS: 'inProgress',
  FAILURE: 'failure',
  QUEUED: 'queued',
  UNKNOWN: 'unknown',
  '': 'submitting',
};

/** The i18n key (under `status.`) of a status; a value outside the seed's list shows as unknown. */
export function taskStatusKey(status: string): string {
  return TASK_STATUS_KEYS[status] ?? 'unknown';
}

/** Seconds between submit and finish, or null while unfinished. */
export function taskDuration(t: Pick<TaskWire, 'submit_time' | 'finish_time'>): number | null {
  if (!t.submit_time || !t.finish_time || t.finish_time < t.submit_time) return null;
  return t.finish_time - t.submit_time;
}
