/**
 * Billing of settled usage (ARCHITECTURE.md §4, §5): the relay reports UsageEvents; each batch is applied in one
 * transaction, idempotently by request id. `usage_ledger` is the idempotency record (it exists even when
 * LogConsumeEnabled turns consume log rows off); the balance, counter, quota_data and log writes are set-based,
 * one statement per table for the whole batch.
 *
 * This module knows nothing of gRPC: app/grpc/server.server.ts maps the generated types onto these.
 */
import { DeadlockException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { LogType } from '@switchyard/db/entities/log.ts';
import { UsageLedgerKind } from '@switchyard/db/entities/usage-ledger.ts';
import type { OptionService } from '@switchyard/db/options/service.ts';
import { warningThreshold } from '#app/domain/account/setting.ts';
import { WRITE_LOCK_KEY as QUOTA_DATA_WRITE_LOCK } from '#app/domain/dashboard/reconcile.server.ts';
import { recordQuotaWarnings } from '#app/domain/notify/outbox.server.ts';

/** Same numbers as switchyard.billing.v1.UsageKind. */
export const UsageKind = UsageLedgerKind;
export type UsageKind = UsageLedgerKind;

/** Token name and content of channel-test log rows (gateway-behaviour §2 "Channel tests"). */
export const CHANNEL_TEST_LOG_NAME = '模型测试';

/** Largest batch one ReportUsage call may carry. */
export const MAX_USAGE_BATCH = 1000;

const INT32_MAX = 2_147_483_647;

/** The fields of switchyard.billing.v1.UsageEvent that Billing reads (the generated type is assignable). */
export type UsageEventInput = {
  requestId: string;
  userId: number;
  tokenId: number;
  channelIds: number[];
  modelName: string;
  upstreamModel: string;
  usage?: UsageTokensInput | undefined;
  quota: number;
  isStream: boolean;
  useTimeMs: number;
  frtMs: number;
  group: string;
  otherJson: string;
  createdAtMs: number;
  ip: string;
  tokenName: string;
  kind: number;
  content: string;
};

export type UsageTokensInput = {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  audioPromptTokens?: number;
  audioCompletionTokens?: number;
  imageTokens?: number;
};

export type UsageAckStatus = 'accepted' | 'duplicate' | 'rejected';
export type UsageAckResult = { requestId: string; status: UsageAckStatus; message: string };

/**
 * A balance that a batch took below the user's warning threshold (ADR 022): decided in the billing transaction,
 * handed over after the commit.
 */
export type QuotaWarning = {
  userId: number;
  email: string;
  /** users.setting as stored (notify_type, webhook_url, ...) */
  setting: string;
  /** the balance after the batch */
  quota: number;
  threshold: number;
  /** Its notification_outbox row (ADR 028), set when Billing wrote it. */
  outboxId?: number | undefined;
};

export type BillingDeps = {
  /** A fresh EntityManager per call. */
  em: () => EntityManager;
  options: Pick<OptionService, 'get'>;
  /**
   * Receives the quota warnings of a committed batch. Must return at once (it queues the deliveries); whatever it
   * throws is logged and ignored, so a notification can never fail or slow billing.
   */
  quotaWarnings?: (warnings: QuotaWarning[]) => void;
};

/** A validated event with the values the SQL needs. */
type Prepared = {
  index: number;
  event: UsageEventInput;
  kind: UsageKind;
  /** unix seconds */
  createdAt: number;
  /** the channel that served the call (last of the chain), 0 for none */
  channelId: number;
  promptTokens: number;
  completionTokens: number;
  other: string;
};

/**
 * Bills a batch. Answers one ack per event, in request order: `accepted` (billed now), `duplicate` (billed by an
 * earlier report or earlier in this batch) or `rejected` (malformed or for an unknown user; never billed, must not
 * be retried). Throws when the database fails: then nothing of the batch was applied and the caller retries it.
 */
export async function reportUsage(deps: BillingDeps, events: UsageEventInput[]): Promise<UsageAckResult[]> {
  const acks: UsageAckResult[] = events.map((e) => ({
    requestId: typeof e.requestId === 'string' ? e.requestId : '',
    status: 'rejected',
    message: '',
  }));
  const firstById = new Map<string, Prepared>();
  const repeats: { ack: UsageAckResult; first: Prepared }[] = [];
  events.forEach((event, index) => {
    const prepared = prepare(event, index);
    const ack = acks[index] as UsageAckResult;
    if (typeof prepared === 'string') {
      ack.message = prepared;
      return;
    }
    const first = firstById.get(event.requestId);
    if (first) repeats.push({ ack, first });
    else firstById.set(event.requestId, prepared);
  });
  const valid = [...firstById.values()];
  if (valid.length > 0) {
    const logEnabled = deps.options.get('LogConsumeEnabled');
    const exportEnabled = deps.options.get('DataExportEnabled');
    const remindThreshold = deps.options.get('QuotaRemindThreshold');
    const outcome = await withDeadlockRetry(() =>
      deps.em().transactional((tx) => applyBatch(tx, valid, { logEnabled, exportEnabled, remindThreshold })),
    );
    if (outcome.warnings.length > 0 && deps.quotaWarnings) {
      try {
        deps.quotaWarnings(outcome.warnings);
      } catch (error) {
        console.error('[billing] quota warnings not queued', error);
      }
    }
    for (const p of valid) {
      const ack = acks[p.index] as UsageAckResult;
      if (outcome.unknownUsers.has(p.event.userId)) {
        ack.message = `unknown user ${p.event.userId}`;
      } else {
        ack.status = outcome.inserted.has(p.event.requestId) ? 'accepted' : 'duplicate';
      }
    }
  }
  // A repeat inside one batch is billed at most once: rejected like its first occurrence, else a duplicate.
  for (const { ack, first } of repeats) {
    const firstAck = acks[first.index] as UsageAckResult;
    if (firstAck.status === 'rejected') ack.message = firstAck.message;
    else ack.status = 'duplicate';
  }
  return acks;
}

// ---------------------------------------------------------------------------------------------------------------
// Validation

function isCount(v: unknown, max = Number.MAX_SAFE_INTEGER): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= max;
}

function isId(v: unknown): v is number {
  return isCount(v, INT32_MAX) && v > 0;
}

function isText(v: unknown, max: number): v is string {
  return typeof v === 'string' && v.length <= max;
}

/** The prepared event, or why it is malformed. Limits follow the column types so one bad event cannot fail a batch. */
function prepare(e: UsageEventInput, index: number): Prepared | string {
  if (typeof e.requestId !== 'string' || e.requestId.length === 0) return 'request_id is empty';
  if (e.requestId.length > 64) return 'request_id is longer than 64 characters';
  if (!isId(e.userId)) return 'user_id must be a positive 32-bit integer';
  if (!isCount(e.tokenId, INT32_MAX)) return 'token_id must be a non-negative 32-bit integer';
  if (e.kind !== UsageKind.Consume && e.kind !== UsageKind.ChannelTest && e.kind !== UsageKind.TaskRefund)
    return `unknown usage kind ${e.kind}`;
  if (!Array.isArray(e.channelIds) || !e.channelIds.every(isId))
    return 'channel_ids must be positive integers';
  if (typeof e.modelName !== 'string' || e.modelName.length === 0) return 'model_name is empty';
  if (e.modelName.length > 255) return 'model_name is longer than 255 characters';
  if (!isCount(e.quota)) return 'quota must be a non-negative integer';
  if (!isCount(e.createdAtMs) || e.createdAtMs === 0) return 'created_at_ms must be a positive integer';
  if (!isCount(e.useTimeMs) || !isCount(e.frtMs))
    return 'use_time_ms and frt_ms must be non-negative integers';
  if (!isText(e.group, 64)) return 'group is longer than 64 characters';
  if (!isText(e.ip, 64)) return 'ip is longer than 64 characters';
  if (!isText(e.tokenName, 128)) return 'token_name is longer than 128 characters';
  if (!isText(e.content, 1_000_000) || !isText(e.upstreamModel, 255))
    return 'content or upstream_model is invalid';
  if (!isText(e.otherJson, 1_000_000)) return 'other_json is too long';
  const usage = e.usage ?? { promptTokens: 0, completionTokens: 0 };
  for (const [name, value] of Object.entries(usage)) {
    if (value !== undefined && !isCount(value, INT32_MAX))
      return `usage.${name} must be a non-negative integer`;
  }
  let other: Record<string, unknown> = {};
  if (e.otherJson !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(e.otherJson);
    } catch {
      return 'other_json is not valid JSON';
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return 'other_json must be a JSON object';
    }
    other = parsed as Record<string, unknown>;
  }
  if (Math.round(e.useTimeMs / 1000) > INT32_MAX) return 'use_time_ms is too large';
  const channelId = e.channelIds.at(-1) ?? 0;
  return {
    index,
    event: e,
    kind: e.kind,
    createdAt: Math.floor(e.createdAtMs / 1000),
    channelId,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    other: e.otherJson === '' && !fillsOther(e) ? '' : otherText(e, other),
  };
}

/** other_json with what the event's own fields add; the relay's text as it is when that adds nothing. */
function otherText(e: UsageEventInput, parsed: Record<string, unknown>): string {
  const full = completeOther(parsed, e);
  return full === parsed && e.otherJson !== '' ? e.otherJson : JSON.stringify(full);
}

function fillsOther(e: UsageEventInput): boolean {
  return (
    e.frtMs > 0 || e.channelIds.length > 0 || (e.upstreamModel !== '' && e.upstreamModel !== e.modelName)
  );
}

/**
 * Adds the log details the event carries in its own fields (first-response time, channel chain, model mapping)
 * when the relay did not put them in other_json already; what the relay wrote wins.
 */
function completeOther(other: Record<string, unknown>, e: UsageEventInput): Record<string, unknown> {
  const add: Record<string, unknown> = {};
  if (!('frt' in other) && e.frtMs > 0) add.frt = e.frtMs;
  if (e.upstreamModel !== '' && e.upstreamModel !== e.modelName) {
    if (!('is_model_mapped' in other)) add.is_model_mapped = true;
    if (!('upstream_model_name' in other)) add.upstream_model_name = e.upstreamModel;
  }
  if (e.channelIds.length > 0) {
    const admin = other.admin_info;
    if (admin === undefined) add.admin_info = { use_channel: e.channelIds.map(String) };
    else if (admin && typeof admin === 'object' && !Array.isArray(admin) && !('use_channel' in admin)) {
      add.admin_info = { ...admin, use_channel: e.channelIds.map(String) };
    }
  }
  // The relay's own events carry all of it already: then `other` itself comes back.
  return Object.keys(add).length > 0 ? { ...other, ...add } : other;
}

// ---------------------------------------------------------------------------------------------------------------
// The transaction

type BatchOutcome = { inserted: Set<string>; unknownUsers: Set<number>; warnings: QuotaWarning[] };

/** The locked user rows: names for the log rows, balance and marker for the quota warning. */
type UserRow = {
  id: number;
  username: string;
  quota: number | string;
  setting: string;
  email: string;
  quota_warned: boolean;
};

/** `(?, ?, ...), (?, ?, ...)` for `rows` rows of `cols` placeholders, each cast as given. */
function valuesList(rows: number, casts: string[]): string {
  const row = `(${casts.map((c) => (c ? `?::${c}` : '?')).join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
}

function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

function sortedNumbers(values: Iterable<number>): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

/**
 * Row locks are taken in one global order (users by id, ledger by request id, then tokens, channels and quota_data
 * by key), so concurrent batches wait for each other instead of deadlocking; a deadlock that still happens (other
 * writers) rolls the batch back and withDeadlockRetry runs it again.
 */
async function applyBatch(
  tx: EntityManager,
  events: Prepared[],
  opts: { logEnabled: boolean; exportEnabled: boolean; remindThreshold: number },
): Promise<BatchOutcome> {
  // 0. Writing quota_data: hold the dashboard job's write lock shared, so that its rebuild (which takes it
  //    exclusively) never sees this charge half applied (ADR 026). Batches do not wait for each other here.
  if (opts.exportEnabled) await tx.execute('select pg_advisory_xact_lock_shared(?)', [QUOTA_DATA_WRITE_LOCK]);
  // 1. Users: lock the rows (serialises batches of the same user) and read names for the log rows and what the
  //    quota warning needs: under the lock, `quota` is the balance before this batch.
  const userIds = sortedNumbers(events.map((p) => p.event.userId));
  const userRows = (await tx.execute(
    'select id, username, quota, setting, email, quota_warned from users ' +
      `where id in (${placeholders(userIds.length)}) order by id for update`,
    userIds,
  )) as UserRow[];
  const usernames = new Map(userRows.map((r) => [Number(r.id), r.username]));
  const locked = new Map(userRows.map((r) => [Number(r.id), r]));
  const unknownUsers = new Set(userIds.filter((id) => !usernames.has(id)));
  const known = events
    .filter((p) => !unknownUsers.has(p.event.userId))
    .sort((a, b) =>
      a.event.requestId < b.event.requestId ? -1 : a.event.requestId > b.event.requestId ? 1 : 0,
    );
  if (known.length === 0) return { inserted: new Set(), unknownUsers, warnings: [] };

  // 2. The idempotency record: only the rows inserted now are billed.
  const ledgerRows = (await tx.execute(
    'insert into usage_ledger (request_id, user_id, token_id, quota, kind, created_at) ' +
      'select r, u, t, q, k, c from json_to_recordset(?::json) ' +
      'as v(r text, u int, t int, q bigint, k smallint, c bigint) ' +
      'on conflict (request_id) do nothing returning request_id',
    [
      JSON.stringify(
        known.map((p) => ({
          r: text(p.event.requestId),
          u: p.event.userId,
          t: p.event.tokenId,
          q: p.event.quota,
          k: p.kind,
          c: p.createdAt,
        })),
      ),
    ],
  )) as { request_id: string }[];
  const inserted = new Set(ledgerRows.map((r) => r.request_id));
  const fresh = known.filter((p) => inserted.has(p.event.requestId));
  if (fresh.length === 0) return { inserted, unknownUsers, warnings: [] };

  // Token and channel names for the log rows, filled by the row locks of applyConsume where it takes them.
  const names: Names = { usernames, tokens: new Map(), channels: new Map() };
  const consume = fresh.filter((p) => p.kind === UsageKind.Consume);
  const warnings =
    consume.length > 0
      ? await applyConsume(tx, consume, names, { ...opts, users: locked })
      : ([] as QuotaWarning[]);
  const refunds = fresh.filter((p) => p.kind === UsageKind.TaskRefund);
  if (refunds.length > 0) await applyRefunds(tx, refunds, names);
  // Refunds are system log rows, written whatever LogConsumeEnabled says (it is about consume rows).
  if (opts.logEnabled) await insertLogs(tx, fresh, names);
  else if (refunds.length > 0) await insertLogs(tx, refunds, names);
  return { inserted, unknownUsers, warnings };
}

type Names = { usernames: Map<number, string>; tokens: Map<number, string>; channels: Map<number, string> };

/** Reads `id, name` rows into `into`. */
async function readNames(
  tx: EntityManager,
  query: string,
  ids: number[],
  into: Map<number, string>,
): Promise<void> {
  const rows = (await tx.execute(query, ids)) as { id: number; name: string }[];
  for (const r of rows) into.set(Number(r.id), r.name);
}

/**
 * Whether a charge from `before` to `after` sends the quota warning, and the marker to store (ADR 022). The marker
 * says "warned since the balance was last at or above the threshold": a balance found at or above it (a top-up,
 * a redemption, an administrator's change or a raised threshold since) re-arms the warning, one below it that was
 * not warned yet (a lowered balance or a raised threshold) is warned once.
 */
export function quotaCrossing(
  before: number,
  after: number,
  threshold: number,
  warned: boolean,
): { send: boolean; warned: boolean } {
  const below = after < threshold;
  return { send: below && (!warned || before >= threshold), warned: below };
}

async function applyConsume(
  tx: EntityManager,
  events: Prepared[],
  names: Names,
  opts: { exportEnabled: boolean; remindThreshold: number; users: Map<number, UserRow> },
): Promise<QuotaWarning[]> {
  const { exportEnabled } = opts;
  const users = new Map<number, { quota: number; count: number }>();
  const tokens = new Map<number, { quota: number; accessed: number }>();
  const channels = new Map<number, number>();
  const hours = new Map<
    string,
    { userId: number; model: string; hour: number; count: number; quota: number; tokens: number }
  >();
  for (const p of events) {
    const { userId, tokenId, quota, modelName } = p.event;
    const u = users.get(userId) ?? { quota: 0, count: 0 };
    u.quota += quota;
    u.count += 1;
    users.set(userId, u);
    if (tokenId > 0) {
      const t = tokens.get(tokenId) ?? { quota: 0, accessed: 0 };
      t.quota += quota;
      t.accessed = Math.max(t.accessed, p.createdAt);
      tokens.set(tokenId, t);
    }
    if (p.channelId > 0) channels.set(p.channelId, (channels.get(p.channelId) ?? 0) + quota);
    const hour = Math.floor(p.createdAt / 3600) * 3600;
    const key = JSON.stringify([userId, modelName, hour]);
    const h = hours.get(key) ?? { userId, model: modelName, hour, count: 0, quota: 0, tokens: 0 };
    h.count += 1;
    h.quota += quota;
    h.tokens += p.promptTokens + p.completionTokens;
    hours.set(key, h);
  }

  const userIds = sortedNumbers(users.keys());
  // The rows are locked since step 1, so before/after are exact and concurrent batches of one user take turns:
  // exactly one of them sees the crossing, and a replay (no fresh event) charges nothing and decides nothing.
  const warnings: QuotaWarning[] = [];
  const marks = new Map<number, boolean>();
  for (const id of userIds) {
    const row = opts.users.get(id)!;
    const before = Number(row.quota);
    const after = before - users.get(id)!.quota;
    const threshold = warningThreshold(row.setting, opts.remindThreshold);
    const crossing = quotaCrossing(before, after, threshold, row.quota_warned === true);
    marks.set(id, crossing.warned);
    if (crossing.send)
      warnings.push({ userId: id, email: row.email, setting: row.setting, quota: after, threshold });
  }
  // Durable (ADR 028): the warning is pending in the outbox when the charge commits, whatever happens after.
  await recordQuotaWarnings(tx, warnings, Date.now());
  await tx.execute(
    'update users as u set quota = u.quota - v.quota, used_quota = u.used_quota + v.quota, ' +
      'request_count = u.request_count + v.n, quota_warned = v.warned ' +
      `from (values ${valuesList(userIds.length, ['int', 'bigint', 'int', 'boolean'])}) as v(id, quota, n, warned) ` +
      'where u.id = v.id',
    userIds.flatMap((id) => [id, users.get(id)!.quota, users.get(id)!.count, marks.get(id)!]),
  );

  if (tokens.size > 0) {
    const ids = sortedNumbers(tokens.keys());
    // Lock in id order first: an UPDATE ... FROM locks in plan order, which differs between batches.
    await readNames(
      tx,
      `select id, name from tokens where id in (${placeholders(ids.length)}) order by id for update`,
      ids,
      names.tokens,
    );
    await tx.execute(
      'update tokens as t set used_quota = t.used_quota + v.quota, ' +
        'remain_quota = case when t.unlimited_quota then t.remain_quota else t.remain_quota - v.quota end, ' +
        'accessed_time = greatest(t.accessed_time, v.accessed) ' +
        `from (values ${valuesList(ids.length, ['int', 'bigint', 'bigint'])}) as v(id, quota, accessed) ` +
        'where t.id = v.id',
      ids.flatMap((id) => [id, tokens.get(id)!.quota, tokens.get(id)!.accessed]),
    );
  }

  if (channels.size > 0) {
    const ids = sortedNumbers(channels.keys());
    await readNames(
      tx,
      `select id, name from channels where id in (${placeholders(ids.length)}) order by id for update`,
      ids,
      names.channels,
    );
    await tx.execute(
      'update channels as c set used_quota = c.used_quota + v.quota ' +
        `from (values ${valuesList(ids.length, ['int', 'bigint'])}) as v(id, quota) where c.id = v.id`,
      ids.flatMap((id) => [id, channels.get(id)!]),
    );
  }

  if (exportEnabled && hours.size > 0) {
    // Sorted so that concurrent upserts of the same keys take their locks in the same order.
    const rows = [...hours.values()].sort(
      (a, b) =>
        a.userId - b.userId || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0) || a.hour - b.hour,
    );
    await tx.execute(
      'insert into quota_data (user_id, username, model_name, created_at, count, quota, token_used) values ' +
        `${valuesList(rows.length, ['int', '', '', 'bigint', 'int', 'bigint', 'bigint'])} ` +
        'on conflict on constraint quota_data_user_model_hour_unique do update set ' +
        'count = quota_data.count + excluded.count, quota = quota_data.quota + excluded.quota, ' +
        'token_used = quota_data.token_used + excluded.token_used, username = excluded.username',
      rows.flatMap((r) => [
        r.userId,
        names.usernames.get(r.userId) ?? '',
        r.model,
        r.hour,
        r.count,
        r.quota,
        r.tokens,
      ]),
    );
  }
  return warnings;
}

/**
 * Failed asynchronous tasks (ADR 029): the task's charge goes back to the user's balance and to the token's
 * remaining quota (the token's used_quota goes down by it, as new-api's token refund does). The user's used_quota
 * keeps the consume log's charge: the refund is its own system log row, so used_quota still equals the sum of the
 * consume logs. The ledger row inserted just before is what makes a second report of the same refund a no-op.
 */
async function applyRefunds(tx: EntityManager, events: Prepared[], names: Names): Promise<void> {
  const users = new Map<number, number>();
  const tokens = new Map<number, number>();
  for (const p of events) {
    const { userId, tokenId, quota } = p.event;
    users.set(userId, (users.get(userId) ?? 0) + quota);
    if (tokenId > 0) tokens.set(tokenId, (tokens.get(tokenId) ?? 0) + quota);
  }
  const userIds = sortedNumbers(users.keys());
  await tx.execute(
    'update users as u set quota = u.quota + v.quota ' +
      `from (values ${valuesList(userIds.length, ['int', 'bigint'])}) as v(id, quota) where u.id = v.id`,
    userIds.flatMap((id) => [id, users.get(id)!]),
  );
  if (tokens.size > 0) {
    const ids = sortedNumbers(tokens.keys());
    await readNames(
      tx,
      `select id, name from tokens where id in (${placeholders(ids.length)}) order by id for update`,
      ids,
      names.tokens,
    );
    await tx.execute(
      // No clamp: a refund may be billed before its charge (both come from the relay's outboxes), and the two
      // must commute.
      'update tokens as t set used_quota = t.used_quota - v.quota, ' +
        'remain_quota = case when t.unlimited_quota then t.remain_quota else t.remain_quota + v.quota end ' +
        `from (values ${valuesList(ids.length, ['int', 'bigint'])}) as v(id, quota) where t.id = v.id`,
      ids.flatMap((id) => [id, tokens.get(id)!]),
    );
  }
}

async function insertLogs(tx: EntityManager, events: Prepared[], names: Names): Promise<void> {
  const tokenIds = sortedNumbers(
    events
      .filter((p) => p.event.tokenName === '' && p.event.tokenId > 0 && !names.tokens.has(p.event.tokenId))
      .map((p) => p.event.tokenId),
  );
  if (tokenIds.length > 0) {
    const query = `select id, name from tokens where id in (${placeholders(tokenIds.length)})`;
    await readNames(tx, query, tokenIds, names.tokens);
  }
  const channelIds = sortedNumbers(
    events.filter((p) => p.channelId > 0 && !names.channels.has(p.channelId)).map((p) => p.channelId),
  );
  if (channelIds.length > 0) {
    const query = `select id, name from channels where id in (${placeholders(channelIds.length)})`;
    await readNames(tx, query, channelIds, names.channels);
  }

  const rows = events.map((p) => {
    const e = p.event;
    const test = p.kind === UsageKind.ChannelTest;
    return {
      u: e.userId,
      c: p.createdAt,
      y: p.kind === UsageKind.TaskRefund ? LogType.System : LogType.Consume,
      ct: text(e.content || (test ? CHANNEL_TEST_LOG_NAME : '')),
      un: text(names.usernames.get(e.userId) ?? ''),
      tn: text(e.tokenName || (test ? CHANNEL_TEST_LOG_NAME : (names.tokens.get(e.tokenId) ?? ''))),
      t: e.tokenId,
      m: text(e.modelName),
      q: e.quota,
      pt: p.promptTokens,
      ctk: p.completionTokens,
      ut: Math.round(e.useTimeMs / 1000),
      s: e.isStream,
      ch: p.channelId,
      cn: text(names.channels.get(p.channelId) ?? ''),
      g: text(e.group),
      o: text(p.other),
      r: text(e.requestId),
      ip: text(e.ip),
    };
  });
  // The whole batch is one JSON parameter: PostgreSQL parses one literal instead of ~20 per row, and the
  // ORM (which inlines parameters into the SQL text) escapes one string instead of every value.
  await tx.execute(
    'insert into logs (user_id, created_at, type, content, username, token_name, token_id, model_name, quota, ' +
      'prompt_tokens, completion_tokens, use_time, is_stream, channel_id, channel_name, "group", other, ' +
      'request_id, ip) ' +
      'select u, c, y, ct, un, tn, t, m, q, pt, ctk, ut, s, ch, cn, g, o, r, ip from json_to_recordset(?::json) ' +
      'as v(u int, c bigint, y smallint, ct text, un text, tn text, t int, m text, q bigint, pt int, ctk int, ' +
      'ut int, s boolean, ch int, cn text, g text, o text, r text, ip text)',
    [JSON.stringify(rows)],
  );
}

/**
 * A string as PostgreSQL text accepts it from JSON: lone UTF-16 surrogates become U+FFFD (what a UTF-8 encoder
 * writes for them) and NUL characters are dropped (text cannot hold them). Without this one odd model name or
 * user agent would fail its whole batch on every retry.
 */
function text(s: string): string {
  const wellFormed = s.isWellFormed() ? s : s.toWellFormed();
  return wellFormed.includes('\0') ? wellFormed.replaceAll('\0', '') : wellFormed;
}

/** Runs `fn` again (a few times) when PostgreSQL aborted it as a deadlock or serialization failure. */
async function withDeadlockRetry<T>(fn: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof DeadlockException) || attempt >= attempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, 10 * attempt + Math.random() * 20));
    }
  }
}
