import { defineEntity, p } from '@mikro-orm/core';
import { nowSeconds } from './common.ts';

/** Async task status (seed 001 §4); '' is shown as submitting. */
export const TaskStatus = {
  NotStart: 'NOT_START',
  Submitted: 'SUBMITTED',
  Queued: 'QUEUED',
  InProgress: 'IN_PROGRESS',
  Success: 'SUCCESS',
  Failure: 'FAILURE',
  Unknown: 'UNKNOWN',
} as const;
export type TaskStatus = (typeof TaskStatus)[keyof typeof TaskStatus];

export const TaskPlatform = { Suno: 'suno' } as const;
export const TaskAction = { Music: 'MUSIC', Lyrics: 'LYRICS' } as const;

/** An async task (music generation ...). Times are unix seconds. */
export const TaskSchema = defineEntity({
  name: 'Task',
  tableName: 'tasks',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    /** unix seconds */
    createdAt: p
      .bigint('number')
      .default(0)
      .onCreate(() => nowSeconds())
      .index('tasks_created_at_index'),
    updatedAt: p
      .bigint('number')
      .default(0)
      .onCreate(() => nowSeconds())
      .onUpdate(() => nowSeconds()),
    taskId: p.string().length(191).default('').index('tasks_task_id_index'),
    platform: p.string().length(30).default('').index('tasks_platform_index'),
    userId: p.integer(),
    channelId: p.integer().default(0),
    quota: p.bigint('number').default(0),
    action: p.string().length(40).default(''),
    status: p.string().length(20).default('').index('tasks_status_index'),
    failReason: p.text().default(''),
    submitTime: p.bigint('number').default(0),
    startTime: p.bigint('number').default(0),
    finishTime: p.bigint('number').default(0),
    progress: p.string().length(20).default(''),
    /** JSON text */
    properties: p.text().default(''),
    /** JSON text: the upstream's task record */
    data: p.text().default('') /** The token charged (0: none); a refund goes back to it too (ADR 029). */,
    tokenId: p.integer().default(0),
    /** The group the task was priced in. */
    group: p.string().length(64).default(''),
    /** The relay request id of the charge (the consume log's request_id). */
    requestId: p.string().length(64).default(''),
    /** Refund state (TaskRefund): 0 none due, 1 due (failed, not yet applied by Billing), 2 applied. */
    refund: p.smallint().default(0),
  },
  indexes: [
    { name: 'tasks_user_id_id_index', properties: ['userId', 'id'] },
    { name: 'tasks_channel_id_id_index', properties: ['channelId', 'id'] },
  ],
});

export class Task extends TaskSchema.class {}
TaskSchema.setClass(Task);
