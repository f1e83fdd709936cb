/**
 * Keeps `midjourney_tasks` current (ADR 029). One relay at a time runs it (the scheduler's leader lease; the
 * in-process lease without Redis): unfinished tasks are read in batches, grouped by channel and fetched with
 * midjourney-proxy's `POST /mj/task/list-by-condition {"ids": [...]}`; progress, image, buttons and fail reason
 * are written; a task finishes once (conditional update), and a FAILURE of a charged task marks its refund due
 * in the same statement. A task without an upstream id, or not finished within the timeout (still running
 * upstream, lost by the upstream, channel gone or unreachable), fails with the reason saying which. Due refunds are then reported to Billing as
 * TASK_REFUND events keyed `mj-refund:<task id>` and marked done when acknowledged: a relay that dies between
 * the two leaves the refund due, and the next poll reports it again, which Billing's ledger applies once.
 * The upstream's callback (`callback`, ADR 036) is a cue to fetch one task now and apply it the same way.
 */

import type { Catalog } from '../../core/catalog.ts';
import { channelConfig } from '../../core/relay.ts';
import type { BillingReporter } from '../../grpc/billing-client.ts';
import type { Logger } from '../../log.ts';
import type { RelayStore } from '../../store/types.ts';
import { refundPayload } from '../charge.ts';
import { secretMatches } from './notify.ts';
import type { MidjourneyRepo, TaskUpdate } from './repo.ts';
import { FINAL_STATUSES, modelOfAction, parseUpstreamTask, type TaskRow, type UpstreamTask } from './wire.ts';

export type PollerDeps = {
  repo: MidjourneyRepo;
  catalog: Catalog;
  store: RelayStore;
  reporter: BillingReporter | null;
  log: Logger;
  /** Drops the relay's cached account entries of these users and tokens (a refund changed them). */
  invalidateAccounts: (userIds: number[], tokenIds: number[]) => void;
  /** A task not finished this long after its submit fails (RELAY_TASK_TIMEOUT_MS, default 1 h as new-api). */
  timeoutMs: number;
  fetch?: typeof fetch;
  /** Tasks read per poll. */
  batch?: number;
  now?: () => number;
};

/** Upstream wait per channel batch (new-api: 15 s). */
const FETCH_TIMEOUT_MS = 15_000;

export type PollResult = { polled: number; finished: number; refunded: number };

/**
 * What a callback came to: `malformed` (no task object), `refused` (no task of that id has this secret),
 * `unconfirmed` (the upstream could not be asked; the poller will), `applied` (the upstream's state was written).
 */
export type CallbackOutcome =
  | { kind: 'malformed' }
  | { kind: 'refused' }
  | { kind: 'unconfirmed'; mjId: string }
  | { kind: 'applied'; mjId: string; status: string };

export class MidjourneyPoller {
  readonly #d: PollerDeps;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;

  constructor(deps: PollerDeps) {
    this.#d = deps;
    this.#fetch = deps.fetch ?? fetch;
    this.#now = deps.now ?? Date.now;
  }

  /** One round: update unfinished tasks, then report due refunds. */
  async pollOnce(): Promise<PollResult> {
    const d = this.#d;
    const tasks = await d.repo.unfinished(d.batch ?? 500);
    let finished = 0;
    const byChannel = new Map<number, TaskRow[]>();
    for (const t of tasks) {
      if (!t.mjId) {
        if (await this.#fail(t, 'the task has no upstream id')) finished++;
        continue;
      }
      const list = byChannel.get(t.channelId) ?? [];
      list.push(t);
      byChannel.set(t.channelId, list);
    }
    for (const [channelId, list] of byChannel) {
      const found = await this.#fetchUpstream(
        channelId,
        list.map((t) => t.mjId),
      );
      for (const t of list) {
        const up = found?.get(t.mjId);
        if (up && (await this.#apply(t, up))) {
          finished++;
          continue;
        }
        // Not finished within the timeout (new-api: 1 h), whether the upstream still runs it, lost it or is gone.
        if (this.#now() - t.submitTime > d.timeoutMs) {
          const why = up
            ? `still ${up.status || 'unfinished'} upstream`
            : found
              ? 'the upstream no longer knows the task'
              : 'the upstream could not be reached';
          if (await this.#fail({ ...t, progress: up?.progress || t.progress }, this.#timeoutReason(why)))
            finished++;
        }
      }
    }
    const refunded = await this.refundDue();
    return { polled: tasks.length, finished, refunded };
  }

  /**
   * `/mj/notify/<secret>`: the upstream's callback for a task the relay gave a callback URL at submit (ADR 036).
   * Heard only when `secret` is that task's (the body's `id` names the task; the stored hash is compared in
   * constant time). The body is only a hint: the task is fetched from its upstream and what the upstream says is
   * applied as a poll would, so a FAILURE finishes it and is refunded once, and nothing a caller claims changes it.
   */
  async callback(secret: string, body: unknown): Promise<CallbackOutcome> {
    const claimed = parseUpstreamTask(body);
    if (!claimed) return { kind: 'malformed' };
    const candidates = await this.#d.repo.withNotifyHash(claimed.id);
    let row: TaskRow | null = null;
    // Every candidate is compared (not the first match only), so the time taken does not say which one matched.
    for (const c of candidates) if (secretMatches(secret, c.notifyHash) && !row) row = c.row;
    if (!row) return { kind: 'refused' };
    if (FINAL_STATUSES.includes(row.status as (typeof FINAL_STATUSES)[number]))
      return { kind: 'applied', mjId: row.mjId, status: row.status };
    const up = await this.#fetchOne(row.channelId, row.mjId);
    if (!up) return { kind: 'unconfirmed', mjId: row.mjId };
    if (await this.#apply(row, up))
      await this.refundDue().catch((err: unknown) =>
        this.#d.log.warn(`midjourney refunds after a callback: ${(err as Error).message}`),
      );
    const now = await this.#d.repo.byId(row.id);
    return { kind: 'applied', mjId: row.mjId, status: now?.status ?? row.status };
  }

  /** One task as its upstream's `GET /mj/task/{id}/fetch` describes it; null when it cannot be had. */
  async #fetchOne(channelId: number, mjId: string): Promise<UpstreamTask | null> {
    const channel = this.#d.catalog.snapshot.channels.get(channelId);
    if (!channel) return null;
    try {
      const res = await this.#fetch(`${channel.baseUrl}/mj/task/${encodeURIComponent(mjId)}/fetch`, {
        headers: { 'mj-api-secret': channelConfig(channel).key },
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const task = parseUpstreamTask(await res.json());
      if (task?.id !== mjId) throw new Error('the answer is not the task asked for');
      return task;
    } catch (err) {
      this.#d.log.warn(
        `midjourney fetch of task ${mjId} on channel #${channelId} failed: ${(err as Error).message}`,
      );
      return null;
    }
  }

  /** The upstream's tasks by id; null when the channel is gone or did not answer. */
  async #fetchUpstream(channelId: number, ids: string[]): Promise<Map<string, UpstreamTask> | null> {
    const channel = this.#d.catalog.snapshot.channels.get(channelId);
    if (!channel) return null;
    try {
      const res = await this.#fetch(`${channel.baseUrl}/mj/task/list-by-condition`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'mj-api-secret': channelConfig(channel).key },
        body: JSON.stringify({ ids }),
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const body = (await res.json()) as unknown;
      if (!Array.isArray(body)) throw new Error('the answer is not a list');
      const out = new Map<string, UpstreamTask>();
      for (const v of body) {
        const t = parseUpstreamTask(v);
        if (t) out.set(t.id, t);
      }
      return out;
    } catch (err) {
      this.#d.log.warn(`midjourney poll of channel #${channelId} failed: ${(err as Error).message}`);
      return null;
    }
  }

  /** Writes what the upstream says; true when this update finished the task. */
  async #apply(t: TaskRow, up: UpstreamTask): Promise<boolean> {
    // A fail reason before 100% is a failure whatever the status says (new-api).
    const failed = up.status === 'FAILURE' || (up.failReason !== '' && up.progress !== '100%');
    const status = failed ? 'FAILURE' : up.status || t.status;
    const u: TaskUpdate = {
      status,
      progress: up.progress || t.progress,
      imageUrl: up.imageUrl,
      failReason: up.failReason || (failed ? 'the upstream failed the task' : ''),
      promptEn: up.promptEn || t.promptEn,
      description: up.description || t.description,
      startTime: up.startTime || t.startTime,
      finishTime: up.finishTime || (status === 'SUCCESS' || status === 'FAILURE' ? this.#now() : 0),
      buttons: up.buttons === null ? t.buttons : JSON.stringify(up.buttons),
      properties: up.properties === null ? t.properties : JSON.stringify(up.properties),
    };
    if (status === 'SUCCESS' || status === 'FAILURE') return this.#d.repo.finish(t.id, u);
    await this.#d.repo.progress(t.id, u);
    return false;
  }

  #timeoutReason(why: string): string {
    const ms = this.#d.timeoutMs;
    const after = ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
    return `timed out after ${after}: ${why}`;
  }

  #fail(t: TaskRow, reason: string): Promise<boolean> {
    return this.#d.repo.finish(t.id, {
      status: 'FAILURE',
      progress: t.progress,
      imageUrl: t.imageUrl,
      failReason: reason,
      promptEn: t.promptEn,
      description: t.description,
      startTime: t.startTime,
      finishTime: this.#now(),
      buttons: t.buttons,
      properties: t.properties,
    });
  }

  /** Reports the refunds of failed tasks to Billing; marks those acknowledged done. Returns how many. */
  async refundDue(): Promise<number> {
    const d = this.#d;
    if (!d.reporter) return 0;
    const due = await d.repo.refundsDue(200);
    if (due.length === 0) return 0;
    const keyOf = (t: TaskRow) => `mj-refund:${t.id}`;
    const now = this.#now();
    const payloads = due.map((t) =>
      refundPayload({
        key: keyOf(t),
        userId: t.userId,
        tokenId: t.tokenId,
        channelId: t.channelId,
        model: modelOfAction(t.action),
        group: t.group,
        quota: t.quota,
        reason: `Midjourney task ${t.mjId || t.id} failed (${t.failReason}); ${t.quota} quota refunded`,
        now,
      }),
    );
    const acks = await d.reporter.report(payloads, FETCH_TIMEOUT_MS);
    const byKey = new Map(acks.map((a) => [a.requestId, a]));
    const done = due.filter((t) => {
      const ack = byKey.get(keyOf(t));
      if (ack?.status === 'rejected')
        d.log.warn(`refund of task ${t.id} rejected by Billing: ${ack.message}`);
      return ack !== undefined;
    });
    await d.repo.refundDone(done.map((t) => t.id));
    // Billing raised the committed balances: cached ones are reloaded on the next call.
    const users = [...new Set(done.map((t) => t.userId))];
    const tokens = [...new Set(done.filter((t) => t.tokenId > 0).map((t) => t.tokenId))];
    await Promise.all([
      ...users.map((id) => d.store.invalidateBalance({ kind: 'user', id })),
      ...tokens.map((id) => d.store.invalidateBalance({ kind: 'token', id })),
    ]);
    d.invalidateAccounts(users, tokens);
    return done.filter((t) => byKey.get(keyOf(t))?.status === 'accepted').length;
  }
}
