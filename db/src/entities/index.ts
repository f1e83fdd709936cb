import { Ability } from './ability.ts';
import { AuditEntry } from './audit-entry.ts';
import { Channel } from './channel.ts';
import { Log } from './log.ts';
import { MidjourneyTask } from './midjourney-task.ts';
import { NotificationOutbox } from './notification-outbox.ts';
import { Option } from './option.ts';
import { Order } from './order.ts';
import { QuotaData } from './quota-data.ts';
import { Redemption } from './redemption.ts';
import { RelayOutbox } from './relay-outbox.ts';
import { Session } from './session.ts';
import { Task } from './task.ts';
import { Token } from './token.ts';
import { UsageLedger } from './usage-ledger.ts';
import { User } from './user.ts';
import { VerificationCode } from './verification-code.ts';
import { Version } from './version.ts';

export * from './ability.ts';
export * from './audit-entry.ts';
export * from './channel.ts';
export * from './common.ts';
export * from './log.ts';
export * from './midjourney-task.ts';
export * from './notification-outbox.ts';
export * from './option.ts';
export * from './order.ts';
export * from './quota-data.ts';
export * from './redemption.ts';
export * from './relay-outbox.ts';
export * from './session.ts';
export * from './task.ts';
export * from './token.ts';
export * from './usage-ledger.ts';
export * from './user.ts';
export * from './verification-code.ts';
export * from './version.ts';

/** Every entity, listed explicitly (no folder discovery). */
export const entities = [
  User,
  Session,
  Token,
  Channel,
  Ability,
  Redemption,
  Order,
  Option,
  Log,
  QuotaData,
  MidjourneyTask,
  Task,
  Version,
  AuditEntry,
  VerificationCode,
  UsageLedger,
  RelayOutbox,
  NotificationOutbox,
];
