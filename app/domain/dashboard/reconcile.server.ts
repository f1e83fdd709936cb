/**
 * The data dashboard's background job (ADR 026). Billing upserts `quota_data` (user x model x hour) in each
 * charge's own transaction; this job, every DataExportInterval minutes and on one console replica at a time,
 * rebuilds the recent hours of `quota_data` from the consume log rows so that hours billed while
 * DataExportEnabled was off, or rows lost or damaged since, come right.
 *
 * Exactly once:
 * - Only an hour whose usage is completely logged is rebuilt: every `usage_ledger` consume row of that user and
 *   hour has its log row (joined by request id). With LogConsumeEnabled off, or logs deleted, the hour is left as
 *   Billing wrote it. Channel tests (ledger kind 2) never count.
 * - Values are *set* (never added) from the logs, keyed by the unique (user_id, model_name, created_at): a rerun
 *   changes nothing.
 * - A transaction-level advisory lock (JOB_LOCK_KEY, try) lets one replica run at a time; a second one skips.
 * - Before writing, the job takes WRITE_LOCK_KEY exclusively; Billing takes it shared before touching anything
 *   when it writes quota_data. So while the job recomputes and writes, no charge is in flight: every committed
 *   charge is in both the logs and quota_data, none half. The exclusive lock is only taken when a first,
 *   lock-free read (one statement, one snapshot) found an hour to change, so in the normal case Billing never
 *   waits for the job.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { UsageLedgerKind } from '@switchyard/db/entities/usage-ledger.ts';
import type { OptionService } from '@switchyard/db/options/service.ts';

/** pg advisory lock keys (fixed numbers; every replica uses the same). */
export const JOB_LOCK_KEY = 7_304_117_502;
export const WRITE_LOCK_KEY = 7_304_117_503;

const HOUR = 3600;

export type ReconcileResult = {
  /** false when another replica held the job lock (nothing was done) */
  ran: boolean;
  /** first hour (inclusive) and end (exclusive) of the rebuilt window, unix seconds */
  from: number;
  to: number;
  /** user x hour groups whose rows were rewritten */
  groups: number;
  upserted: number;
  deleted: number;
};

type Agg = { count: number; quota: number; tokens: number };
type Window = {
  /** "user:hour" of every group whose ledger rows all have their log row */
  complete: Set<string>;
  /** expected rows from the logs: "user:hour" -> model -> aggregate */
  expected: Map<string, Map<string, Agg>>;
  /** current quota_data rows, same keys */
  actual: Map<string, Map<string, Agg>>;
};

type WindowRow = {
  k: 'g' | 'e' | 'a';
  user_id: number;
  hour: string | number;
  model_name: string;
  c: string | number;
  q: string | number;
  t: string | number;
};

/**
 * One statement (one snapshot) reads the ledger completeness per user x hour, the aggregates the logs give and
 * what quota_data holds, for hours in [from, to).
 */
async function readWindow(tx: EntityManager, from: number, to: number): Promise<Window> {
  const rows = (await tx.execute(
    `with ledger as (
       select g.user_id, g.created_at - g.created_at % ${HOUR} as hour, l.model_name, l.quota,
              l.prompt_tokens + l.completion_tokens as tokens, l.id as log_id
       from usage_ledger g left join logs l on l.request_id = g.request_id
       where g.kind = ? and g.created_at >= ? and g.created_at < ?
     )
     select 'g' as k, user_id, hour, '' as model_name, count(*) as c, count(log_id) as q, 0 as t
       from ledger group by user_id, hour
     union all
     select 'e', user_id, hour, model_name, count(*), sum(quota), sum(tokens)
       from ledger where log_id is not null group by user_id, hour, model_name
     union all
     select 'a', user_id, created_at, model_name, count, quota, token_used
       from quota_data where created_at >= ? and created_at < ?`,
    [UsageLedgerKind.Consume, from, to, from, to],
  )) as WindowRow[];
  const w: Window = { complete: new Set(), expected: new Map(), actual: new Map() };
  for (const r of rows) {
    const key = `${r.user_id}:${Number(r.hour)}`;
    if (r.k === 'g') {
      if (Number(r.c) === Number(r.q)) w.complete.add(key);
      continue;
    }
    const into = r.k === 'e' ? w.expected : w.actual;
    const models = into.get(key) ?? new Map<string, Agg>();
    models.set(r.model_name, { count: Number(r.c), quota: Number(r.q), tokens: Number(r.t) });
    into.set(key, models);
  }
  return w;
}

type Change =
  | { op: 'set'; userId: number; hour: number; model: string; agg: Agg }
  | { op: 'delete'; userId: number; hour: number; model: string };

/** What makes quota_data equal to the logs in every complete group. */
export function diffWindow(w: Window): { changes: Change[]; groups: number } {
  const changes: Change[] = [];
  let groups = 0;
  for (const key of [...w.complete].sort()) {
    const [user, hourText] = key.split(':');
    const userId = Number(user);
    const hour = Number(hourText);
    const expected = w.expected.get(key) ?? new Map<string, Agg>();
    const actual = w.actual.get(key) ?? new Map<string, Agg>();
    const before = changes.length;
    for (const [model, agg] of [...expected].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const have = actual.get(model);
      if (!have || have.count !== agg.count || have.quota !== agg.quota || have.tokens !== agg.tokens)
        changes.push({ op: 'set', userId, hour, model, agg });
    }
    for (const model of actual.keys()) {
      if (!expected.has(model)) changes.push({ op: 'delete', userId, hour, model });
    }
    if (changes.length > before) groups += 1;
  }
  return { changes, groups };
}

async function apply(tx: EntityManager, changes: Change[]): Promise<{ upserted: number; deleted: number }> {
  const sets = changes.filter((c) => c.op === 'set');
  const deletes = changes.filter((c) => c.op === 'delete');
  if (sets.length > 0) {
    await tx.execute(
      `insert into quota_data (user_id, username, model_name, created_at, count, quota, token_used)
       select v.u, coalesce(users.username, ''), v.m, v.h, v.c, v.q, v.t
       from json_to_recordset(?::json) as v(u int, m text, h bigint, c int, q bigint, t bigint)
       left join users on users.id = v.u
       order by v.u, v.m, v.h
       on conflict on constraint quota_data_user_model_hour_unique do update set
         count = excluded.count, quota = excluded.quota, token_used = excluded.token_used,
         username = excluded.username`,
      [
        JSON.stringify(
          sets.map((c) => ({
            u: c.userId,
            m: c.model,
            h: c.hour,
            c: c.op === 'set' ? c.agg.count : 0,
            q: c.op === 'set' ? c.agg.quota : 0,
            t: c.op === 'set' ? c.agg.tokens : 0,
          })),
        ),
      ],
    );
  }
  if (deletes.length > 0) {
    await tx.execute(
      `delete from quota_data q using json_to_recordset(?::json) as v(u int, m text, h bigint)
       where q.user_id = v.u and q.model_name = v.m and q.created_at = v.h`,
      [JSON.stringify(deletes.map((c) => ({ u: c.userId, m: c.model, h: c.hour })))],
    );
  }
  return { upserted: sets.length, deleted: deletes.length };
}

/** The hours one run rebuilds: the last two intervals (at least the previous hour) up to the current hour's end. */
export function reconcileWindow(nowSec: number, intervalMinutes: number): { from: number; to: number } {
  const lookback = Math.max(2 * intervalMinutes * 60, HOUR);
  const from = Math.floor((nowSec - lookback) / HOUR) * HOUR;
  const to = Math.floor(nowSec / HOUR) * HOUR + HOUR;
  return { from, to };
}

/**
 * Rebuilds quota_data for the whole hours in [from, to) from the logs (see the module comment).
 * `faults` let a test act between the locked read and the writes, or fail the run before its commit.
 */
export async function reconcileQuotaData(
  em: () => EntityManager,
  range: { from: number; to: number },
  faults: { afterRead?: () => void | Promise<void>; beforeCommit?: () => void | Promise<void> } = {},
): Promise<ReconcileResult> {
  const from = Math.floor(range.from / HOUR) * HOUR;
  const to = Math.ceil(range.to / HOUR) * HOUR;
  return em().transactional(async (tx) => {
    const none = { from, to, groups: 0, upserted: 0, deleted: 0 };
    const [lock] = (await tx.execute('select pg_try_advisory_xact_lock(?) as ok', [JOB_LOCK_KEY])) as {
      ok: boolean;
    }[];
    if (!lock?.ok) return { ran: false, ...none };
    // Lock-free look first: in one snapshot every committed charge is in both the logs and quota_data.
    if (diffWindow(await readWindow(tx, from, to)).changes.length === 0) return { ran: true, ...none };
    // Something to change: wait for the charges in flight and hold new ones back while reading and writing.
    await tx.execute('select pg_advisory_xact_lock(?)', [WRITE_LOCK_KEY]);
    const { changes, groups } = diffWindow(await readWindow(tx, from, to));
    await faults.afterRead?.();
    const done = await apply(tx, changes);
    await faults.beforeCommit?.();
    return { ran: true, from, to, groups, ...done };
  });
}

export type QuotaDataJob = {
  /** Runs now (unless disabled) and re-arms; resolves with the run's result (null when DataExportEnabled is off). */
  runNow(): Promise<ReconcileResult | null>;
  /** ms until the next run as armed now (for tests), null when nothing is armed */
  nextInMs(): number | null;
  stop(): Promise<void>;
};

/**
 * Runs reconcileQuotaData every DataExportInterval minutes while DataExportEnabled is on. Both options are read
 * live: a change (made here or announced by another process through the option cache) re-arms the timer at
 * once, counting the new interval from the last run.
 */
export function scheduleQuotaDataJob(deps: {
  em: () => EntityManager;
  options: Pick<OptionService, 'get' | 'onChange'>;
  log: (msg: string) => void;
  now?: () => number;
}): QuotaDataJob {
  const now = deps.now ?? Date.now;
  let lastRun = now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let dueAt: number | null = null;
  let running: Promise<ReconcileResult | null> | null = null;
  let stopped = false;

  const intervalMs = () => Math.max(1, Number(deps.options.get('DataExportInterval')) || 5) * 60_000;
  const enabled = () => Boolean(deps.options.get('DataExportEnabled'));

  const arm = () => {
    clearTimeout(timer);
    dueAt = null;
    if (stopped || !enabled()) return;
    dueAt = lastRun + intervalMs();
    timer = setTimeout(
      () => {
        void runNow();
      },
      Math.max(0, dueAt - now()),
    );
    timer.unref?.();
  };

  const runNow = (): Promise<ReconcileResult | null> => {
    if (running) return running;
    running = (async () => {
      lastRun = now();
      if (!enabled()) return null;
      const minutes = intervalMs() / 60_000;
      try {
        const result = await reconcileQuotaData(deps.em, reconcileWindow(Math.floor(now() / 1000), minutes));
        if (result.upserted + result.deleted > 0)
          deps.log(
            `quota_data: rebuilt ${result.groups} user-hours (${result.upserted} rows set, ${result.deleted} removed)`,
          );
        return result;
      } catch (err) {
        deps.log(`quota_data reconciliation failed: ${(err as Error).message}`);
        return null;
      }
    })().finally(() => {
      running = null;
      arm();
    });
    return running;
  };

  const unsubscribe = deps.options.onChange((key) => {
    if (key === 'DataExportInterval' || key === 'DataExportEnabled') arm();
  });
  arm();

  return {
    runNow,
    nextInMs: () => (dueAt === null ? null : Math.max(0, dueAt - now())),
    async stop() {
      stopped = true;
      unsubscribe();
      clearTimeout(timer);
      dueAt = null;
      await running;
    },
  };
}
