import { defineEntity, p } from '@mikro-orm/core';
import { nowSeconds } from './common.ts';

/** Drawing task status (seed 001 §4). */
/** Refund state of a charged task (ADR 029). */
export const TaskRefund = { None: 0, Due: 1, Done: 2 } as const;

export const MidjourneyTaskStatus = {
  NotStart: 'NOT_START',
  Submitted: 'SUBMITTED',
  InProgress: 'IN_PROGRESS',
  Success: 'SUCCESS',
  Failure: 'FAILURE',
  Modal: 'MODAL',
} as const;
export type MidjourneyTaskStatus = (typeof MidjourneyTaskStatus)[keyof typeof MidjourneyTaskStatus];

/** Submit result code: 1 submitted, 21 waiting, 22 duplicate, 0 not submitted. */
export const MidjourneySubmitCode = { NotSubmitted: 0, Submitted: 1, Waiting: 21, Duplicate: 22 } as const;

/** A drawing (Midjourney-proxy) task. submit/start/finish times are unix milliseconds like the proxy's. */
export const MidjourneyTaskSchema = defineEntity({
  name: 'MidjourneyTask',
  tableName: 'midjourney_tasks',
  properties: {
    id: p.integer().primary().autoincrement(),
    code: p.smallint().default(0),
    userId: p.integer(),
    action: p.string().length(40).default(''),
    mjId: p.string().length(128).default('').index('midjourney_tasks_mj_id_index'),
    prompt: p.text().default(''),
    promptEn: p.text().default(''),
    description: p.text().default(''),
    state: p.text().default(''),
    /** unix seconds */
    createdAt: p
      .bigint('number')
      .default(0)
      .onCreate(() => nowSeconds()),
    /** unix milliseconds */
    submitTime: p.bigint('number').default(0),
    startTime: p.bigint('number').default(0),
    finishTime: p.bigint('number').default(0),
    imageUrl: p.text().default(''),
    status: p.string().length(20).default('').index('midjourney_tasks_status_index'),
    /** percent text such as "45%" */
    progress: p.string().length(30).default(''),
    failReason: p.text().default(''),
    channelId: p.integer().default(0),
    quota: p.bigint('number').default(0),
    /** JSON text */
    buttons: p.text().default(''),
    /** JSON text */
    properties: p
      .text()
      .default('') /** The token charged (0: none); a refund goes back to it too (ADR 029). */,
    tokenId: p.integer().default(0),
    /** The group the task was priced in. */
    group: p.string().length(64).default(''),
    /** The relay request id of the charge (the consume log's request_id). */
    requestId: p.string().length(64).default(''),
    /** Refund state (TaskRefund): 0 none due, 1 due (failed, not yet applied by Billing), 2 applied. */
    refund: p.smallint().default(0),
    /**
     * SHA-256 (hex) of the secret in the callback URL the relay gave the upstream at submit ('' when it gave none):
     * only a callback carrying that secret is heard (ADR 036). Never serialized.
     */
    notifyHash: p.string().length(64).default('').hidden(),
  },
  indexes: [
    { name: 'midjourney_tasks_user_id_id_index', properties: ['userId', 'id'] },
    { name: 'midjourney_tasks_channel_id_id_index', properties: ['channelId', 'id'] },
  ],
});

export class MidjourneyTask extends MidjourneyTaskSchema.class {}
MidjourneyTaskSchema.setClass(MidjourneyTask);
