/**
 * What an asynchronous task costs and gives back (ADR 029). A submit holds the action's fixed price on user and
 * token before the upstream is asked (so concurrent submits cannot overdraw), settles it through the usage outbox
 * when the upstream accepts (the consume log row and the balance change reach Billing exactly once by request
 * id, like any relayed call), and releases it when the upstream refuses. A failed task's refund is a
 * TASK_REFUND usage event keyed by the task (`mj-refund:<row id>`): Billing's ledger applies it once.
 */
import type { OptionService } from '@switchyard/db/options/service.ts';
import { UsageEvent, UsageKind } from '@switchyard/proto/switchyard/billing/v1/billing.ts';
import type { Caller } from '../core/auth.ts';
import { RelayError } from '../core/errors.ts';
import { LOCAL_ENTRY_PREFIX } from '../core/outbox.ts';
import { type Price, priceContent, priceDetails, resolvePrice } from '../core/pricing.ts';
import { newRequestId, type OutboxSink, type RelayCore, rateLimitFor } from '../core/relay.ts';
import { usage } from '../core/usage.ts';
import { encodeUsagePayload } from '../core/usage-payload.ts';
import type { Logger } from '../log.ts';
import type { RateLimit, RelayStore } from '../store/types.ts';

export type TaskChargeDeps = {
  core: RelayCore;
  store: RelayStore;
  options: OptionService;
  outbox: OutboxSink;
  log: Logger;
  now?: () => number;
};

/** A held task charge: settle it when the upstream accepts, release it otherwise. */
export type TaskHold = {
  requestId: string;
  caller: Caller;
  model: string;
  price: Price;
  amount: number;
  tokenId: number | null;
  limit: RateLimit | undefined;
  started: number;
};

/** How long a task hold may stay open: the submit's upstream call and a margin. */
const HOLD_TTL_MS = 10 * 60_000;

export class TaskCharges {
  readonly #d: TaskChargeDeps;
  readonly #now: () => number;

  constructor(deps: TaskChargeDeps) {
    this.#d = deps;
    this.#now = deps.now ?? Date.now;
  }

  /** Prices `model` for the caller and holds it; a 403 when it has no price (and unset prices are refused). */
  async hold(caller: Caller, model: string): Promise<TaskHold> {
    const d = this.#d;
    const tables = d.core.priceTables();
    let price = resolvePrice(tables, model, caller.group);
    if (!price) {
      if (caller.user.setting.accept_unset_model_ratio_model !== true)
        throw new RelayError({
          status: 403,
          message: `model ${model} has no price set; ask the administrator to set its ratio or price`,
          type: 'invalid_request_error',
          code: 'model_price_not_set',
        });
      price = resolvePrice({ ...tables, selfUseMode: true }, model, caller.group)!;
    }
    // A task has no tokens: a ratio-priced model (self-use mode) costs nothing, a fixed price its price · group.
    const amount =
      price.kind === 'fixed' ? Math.round(price.modelPrice * tables.quotaPerUnit * price.groupRatio) : 0;
    const requestId = newRequestId();
    const tokenId = caller.token && !caller.token.unlimitedQuota ? caller.token.id : null;
    const limit = rateLimitFor(d.options, caller.user.id);
    await d.core.reserve({
      requestId,
      userId: caller.user.id,
      tokenId,
      amount,
      limit,
      holdTtlMs: HOLD_TTL_MS,
    });
    return { requestId, caller, model, price, amount, tokenId, limit, started: this.#now() };
  }

  async release(h: TaskHold): Promise<void> {
    await this.#d.store
      .release(h.requestId)
      .catch((e) => this.#d.log.error(`release ${h.requestId} failed`, e));
  }

  /** The upstream accepted: the hold becomes the charge, reported to Billing through the outbox. */
  async settle(h: TaskHold, channelId: number, clientIp: string): Promise<void> {
    const d = this.#d;
    const now = this.#now();
    const u = usage({});
    const event = UsageEvent.fromPartial({
      requestId: h.requestId,
      userId: h.caller.user.id,
      tokenId: h.caller.token?.id ?? 0,
      channelIds: [channelId],
      modelName: h.model,
      upstreamModel: h.model,
      usage: { promptTokens: 0, completionTokens: 0 },
      quota: h.amount,
      isStream: false,
      useTimeMs: now - h.started,
      frtMs: 0,
      group: h.caller.group,
      otherJson: JSON.stringify(
        priceDetails(h.price, u, { frtMs: 0, channelIds: [channelId], requestModel: h.model }),
      ),
      createdAtMs: now,
      ip: clientIp,
      tokenName: h.caller.token ? '' : h.caller.tokenName,
      kind: UsageKind.USAGE_KIND_CONSUME,
      content: priceContent(h.price, u),
    });
    const payload = encodeUsagePayload(event);
    let entryId: string;
    try {
      ({ entryId } = await d.store.settle({
        requestId: h.requestId,
        userId: h.caller.user.id,
        tokenId: h.tokenId,
        amount: h.amount,
        success: true,
        ...(h.limit ? { limit: h.limit } : {}),
        payload,
        now,
      }));
    } catch (err) {
      d.log.warn(
        `settle ${h.requestId}: store unavailable (${(err as Error).message}); reporting from memory`,
      );
      entryId = `${LOCAL_ENTRY_PREFIX}${h.requestId}`;
    }
    d.outbox.enqueue({
      id: entryId,
      requestId: h.requestId,
      userId: h.caller.user.id,
      tokenId: h.tokenId,
      amount: h.amount,
      payload,
      createdAt: now,
    });
  }
}

/** A failed task's refund as Billing receives it (one per task; the key makes a second report a no-op). */
export function refundPayload(r: {
  key: string;
  userId: number;
  tokenId: number;
  channelId: number;
  model: string;
  group: string;
  quota: number;
  reason: string;
  now: number;
}): string {
  return encodeUsagePayload(
    UsageEvent.fromPartial({
      requestId: r.key,
      userId: r.userId,
      tokenId: r.tokenId,
      channelIds: r.channelId > 0 ? [r.channelId] : [],
      modelName: r.model,
      upstreamModel: r.model,
      usage: { promptTokens: 0, completionTokens: 0 },
      quota: r.quota,
      isStream: false,
      useTimeMs: 0,
      frtMs: 0,
      group: r.group,
      otherJson: '',
      createdAtMs: r.now,
      ip: '',
      tokenName: '',
      kind: UsageKind.USAGE_KIND_TASK_REFUND,
      content: r.reason.slice(0, 2000),
    }),
  );
}
