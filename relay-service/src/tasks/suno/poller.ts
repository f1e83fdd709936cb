/**
 * Polls unfinished Suno tasks (ADR 029, as the Midjourney poller): grouped by channel, asked of the upstream's
 * `POST /suno/fetch {"ids"}`, their status, fail reason and record written; a FAILURE (or a fail reason) finishes
 * the task and marks its refund due in one conditional update; a task unfinished RELAY_TASK_TIMEOUT_MS after its
 * submit fails. Due refunds go to Billing as TASK_REFUND events keyed `suno-refund:<row id>` (applied once).
 */

import type { Catalog } from '../../core/catalog.ts';
import { channelConfig } from '../../core/relay.ts';
import type { BillingReporter } from '../../grpc/billing-client.ts';
import type { Logger } from '../../log.ts';
import type { RelayStore } from '../../store/types.ts';
import { refundPayload } from '../charge.ts';
import type { SunoRepo, SunoTaskRow, SunoTaskUpdate } from './repo.ts';
import { sunoModel } from './service.ts';

export type SunoPollerDeps = {
  repo: SunoRepo;
  catalog: Catalog;
  store: RelayStore;
  reporter: BillingReporter | null;
  log: Logger;
  invalidateAccounts: (userIds: number[], tokenIds: number[]) => void;
  timeoutMs: number;
  fetch?: typeof fetch;
  batch?: number;
  now?: () => number;
};

const FETCH_TIMEOUT_MS = 15_000;
const FINAL = new Set(['SUCCESS', 'FAILURE']);

type Upstream = { status: string; failReason: string; startTime: number; finishTime: number; data: string };

function parseUpstream(v: unknown): [string, Upstream] | null {
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  if (typeof o.task_id !== 'string' || !o.task_id) return null;
  const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? Math.floor(x) : 0);
  return [
    o.task_id,
    {
      status: typeof o.status === 'string' ? o.status : '',
      failReason: typeof o.fail_reason === 'string' ? o.fail_reason : '',
      startTime: n(o.start_time),
      finishTime: n(o.finish_time),
      data: o.data === undefined || o.data === null ? '' : JSON.stringify(o.data),
    },
  ];
}

export class SunoPoller {
  readonly #d: SunoPollerDeps;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;

  constructor(deps: SunoPollerDeps) {
    this.#d = deps;
    this.#fetch = deps.fetch ?? fetch;
    this.#now = deps.now ?? Date.now;
  }

  async pollOnce(): Promise<{ polled: number; finished: number; refunded: number }> {
    const d = this.#d;
    const tasks = await d.repo.unfinished(d.batch ?? 500);
    let finished = 0;
    const byChannel = new Map<number, SunoTaskRow[]>();
    for (const t of tasks) {
      if (!t.taskId) {
        if (await this.#fail(t, 'the task has no upstream id')) finished++;
        continue;
      }
      byChannel.set(t.channelId, [...(byChannel.get(t.channelId) ?? []), t]);
    }
    for (const [channelId, list] of byChannel) {
      const found = await this.#fetchUpstream(
        channelId,
        list.map((t) => t.taskId),
      );
      for (const t of list) {
        const up = found?.get(t.taskId);
        if (up && (await this.#apply(t, up))) {
          finished++;
          continue;
        }
        if (this.#now() - t.submitTime * 1000 > d.timeoutMs) {
          const why = up
            ? `still ${up.status || 'unfinished'} upstream`
            : found
              ? 'the upstream no longer knows the task'
              : 'the upstream could not be reached';
          if (await this.#fail(t, this.#timeoutReason(why))) finished++;
        }
      }
    }
    const refunded = await this.refundDue();
    return { polled: tasks.length, finished, refunded };
  }

  async #fetchUpstream(channelId: number, ids: string[]): Promise<Map<string, Upstream> | null> {
    const channel = this.#d.catalog.snapshot.channels.get(channelId);
    if (!channel) return null;
    try {
      const res = await this.#fetch(`${channel.baseUrl}/suno/fetch`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${channelConfig(channel).key}`,
        },
        body: JSON.stringify({ ids, action: '' }),
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const body = (await res.json()) as { code?: unknown; data?: unknown };
      if (body.code !== 'success' || !Array.isArray(body.data)) throw new Error(`code ${String(body.code)}`);
      const out = new Map<string, Upstream>();
      for (const v of body.data) {
        const p = parseUpstream(v);
        if (p) out.set(p[0], p[1]);
      }
      return out;
    } catch (err) {
      this.#d.log.warn(`suno poll of channel #${channelId} failed: ${(err as Error).message}`);
      return null;
    }
  }

  async #apply(t: SunoTaskRow, up: Upstream): Promise<boolean> {
    const now = Math.floor(this.#now() / 1000);
    // A fail reason is a failure whatever the status says (new-api).
    const failed = up.status === 'FAILURE' || up.failReason !== '';
    const status = failed ? 'FAILURE' : up.status || t.status;
    const done = FINAL.has(status);
    const u: SunoTaskUpdate = {
      status,
      progress: done ? '100%' : t.progress,
      failReason: up.failReason || (failed ? 'the upstream failed the task' : ''),
      startTime: up.startTime || t.startTime,
      finishTime: done ? up.finishTime || now : 0,
      data: up.data || t.data,
    };
    if (done) return this.#d.repo.finish(t.id, u, now);
    await this.#d.repo.progress(t.id, u, now);
    return false;
  }

  #timeoutReason(why: string): string {
    const ms = this.#d.timeoutMs;
    const after = ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
    return `timed out after ${after}: ${why}`;
  }

  #fail(t: SunoTaskRow, reason: string): Promise<boolean> {
    const now = Math.floor(this.#now() / 1000);
    return this.#d.repo.finish(
      t.id,
      {
        status: 'FAILURE',
        progress: '100%',
        failReason: reason,
        startTime: t.startTime,
        finishTime: now,
        data: t.data,
      },
      now,
    );
  }

  /** Reports due refunds to Billing; marks acknowledged ones done. Returns how many Billing applied now. */
  async refundDue(): Promise<number> {
    const d = this.#d;
    if (!d.reporter) return 0;
    const due = await d.repo.refundsDue(200);
    if (due.length === 0) return 0;
    const keyOf = (t: SunoTaskRow) => `suno-refund:${t.id}`;
    const now = this.#now();
    const acks = await d.reporter.report(
      due.map((t) =>
        refundPayload({
          key: keyOf(t),
          userId: t.userId,
          tokenId: t.tokenId,
          channelId: t.channelId,
          model: sunoModel(t.action),
          group: t.group,
          quota: t.quota,
          reason: `Suno task ${t.taskId || t.id} failed (${t.failReason}); ${t.quota} quota refunded`,
          now,
        }),
      ),
      FETCH_TIMEOUT_MS,
    );
    const byKey = new Map(acks.map((a) => [a.requestId, a]));
    const done = due.filter((t) => {
      const ack = byKey.get(keyOf(t));
      if (ack?.status === 'rejected')
        d.log.warn(`refund of suno task ${t.id} rejected by Billing: ${ack.message}`);
      return ack !== undefined;
    });
    await d.repo.refundDone(done.map((t) => t.id));
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
