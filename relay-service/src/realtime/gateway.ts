/**
 * `GET /v1/realtime?model=...` (OpenAI Realtime over WebSocket, as new-api serves it): everything that can
 * refuse the session happens before the handshake completes, so a refusal is an HTTP answer in OpenAI's error
 * envelope: the key (header or the `openai-insecure-api-key.` subprotocol), the token checks, the model's route
 * and price, the rate limit and a quota hold for one response, then the upstream of a realtime channel (OpenAI,
 * Azure). Then the session pipes both ways and bills every `response.done` once (ADR 030).
 */
import { createHash } from 'node:crypto';
import type { OptionService } from '@switchyard/db/options/service.ts';
import { UsageEvent, UsageKind } from '@switchyard/proto/switchyard/billing/v1/billing.ts';
import {
  type Accounts,
  type Caller,
  checkToken,
  extractKey,
  parseKey,
  WS_KEY_PROTOCOL_PREFIX,
} from '../core/auth.ts';
import { type Catalog, hasRoute, selectChannel } from '../core/catalog.ts';
import { RelayError } from '../core/errors.ts';
import { LOCAL_ENTRY_PREFIX } from '../core/outbox.ts';
import {
  computeQuota,
  estimateQuota,
  type Price,
  type PriceTables,
  priceContent,
  priceDetails,
  resolvePrice,
} from '../core/pricing.ts';
import { channelConfig, newRequestId, type OutboxSink, type RelayCore, rateLimitFor } from '../core/relay.ts';
import type { ChannelRecord } from '../core/repo.ts';
import { countTextTokens } from '../core/tokenize.ts';
import { disableReason } from '../core/upstream.ts';
import { usage as makeUsage, type Usage } from '../core/usage.ts';
import { encodeUsagePayload } from '../core/usage-payload.ts';
import type { ClientIpResolver } from '../http/client-ip.ts';
import { openAiError } from '../http/openai.ts';
import type { Logger } from '../log.ts';
import type { ConnInfo, ServerWebSocket, UpgradeDecision, UpgradeHandler } from '../runtime.ts';
import type { RateLimit, RelayStore } from '../store/types.ts';
import type { FlowLimits } from './flow.ts';
import { DEFAULT_FLOW_LIMITS, RealtimeSession, type SessionBilling } from './session.ts';
import {
  type BufferedSocket,
  openUpstream,
  REALTIME_CHANNEL_TYPES,
  realtimeTarget,
  UpstreamOpenError,
} from './upstream.ts';

export const REALTIME_PATH = '/v1/realtime';

export type RealtimeServices = {
  core: RelayCore;
  accounts: Accounts;
  catalog: Catalog;
  options: OptionService;
  store: RelayStore;
  outbox: OutboxSink;
  log: Logger;
  clientIp?: ClientIpResolver;
  /** No message either way for this long ends a session (RELAY_UPSTREAM_TIMEOUT_MS). */
  idleMs: number;
  /** How long opening the upstream may take. */
  openTimeoutMs?: number;
  /** How long in-flight responses get to report their usage when a session ends. Default 5 s. */
  graceMs?: number;
  /** Backpressure of both directions (ADR 039); also the largest message taken from the upstream. */
  limits?: FlowLimits;
  now?: () => number;
};

export type RealtimeGateway = {
  upgrade: UpgradeHandler;
  /** Sessions now open. */
  readonly sessions: number;
  /** Ends every session (the relay is stopping) once each is billed. */
  close(): Promise<void>;
};

/** A hold lives as long as a session can stay idle twice, plus a margin; every bill renews it. */
const HOLD_MARGIN_MS = 60_000;

/**
 * The log's request id of one response: the session's id and the response's, joined when that fits the column
 * (64), else hashed. The same response always gets the same id, so a repeated `response.done` is billed once.
 */
export function responseRequestId(sessionId: string, responseId: string): string {
  const joined = `${sessionId}-${responseId}`;
  if (joined.length <= 64 && /^[\w.-]+$/.test(responseId)) return joined;
  return `${sessionId}-${createHash('sha256').update(responseId).digest('hex').slice(0, 31)}`;
}

/** The subprotocol to select: `realtime` when offered, else the first offered item that is not a key. */
export function selectProtocol(offered: string | null): string | null {
  if (!offered) return null;
  const items = offered
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s && !s.startsWith(WS_KEY_PROTOCOL_PREFIX));
  return items.includes('realtime') ? 'realtime' : (items[0] ?? null);
}

function refusal(err: RelayError): Response {
  return openAiError({ ...err, message: err.message });
}

export function createRealtimeGateway(s: RealtimeServices): RealtimeGateway {
  const now = s.now ?? Date.now;
  const sessions = new Set<RealtimeSession>();
  const limits = s.limits ?? DEFAULT_FLOW_LIMITS;

  async function authenticate(request: Request, url: URL, ip: string, model: string): Promise<Caller> {
    const raw = extractKey(request.headers, url);
    if (!raw)
      throw new RelayError({
        status: 401,
        message: 'no API key provided',
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      });
    const { key, channelId } = parseKey(raw);
    const entry = key ? await s.accounts.lookup(key, now()) : null;
    if (!entry)
      throw new RelayError({
        status: 401,
        message: 'invalid API key',
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      });
    return checkToken(
      entry,
      { ip, now: now(), pinnedChannelId: channelId, model },
      { usableGroups: s.options.get('UserUsableGroups'), groupRatio: s.options.get('GroupRatio') },
    );
  }

  /** Channels of the route that serve realtime, in the catalog's order, up to RetryTimes + 1 of them. */
  function* candidates(caller: Caller, model: string): Generator<ChannelRecord> {
    const snap = s.catalog.snapshot;
    if (caller.pinnedChannelId !== null) {
      const ch = snap.channels.get(caller.pinnedChannelId);
      if (!ch)
        throw new RelayError({
          status: 400,
          message: `channel ${caller.pinnedChannelId} does not exist`,
          type: 'invalid_request_error',
          code: 'channel_not_found',
        });
      if (ch.status !== 1)
        throw new RelayError({
          status: 403,
          message: 'the pinned channel is disabled',
          type: 'invalid_request_error',
          code: 'channel_disabled',
        });
      if (REALTIME_CHANNEL_TYPES.has(ch.type)) yield ch;
      return;
    }
    const tried = new Set<number>();
    let attempts = s.options.get('RetryTimes') + 1;
    for (;;) {
      const ch = selectChannel(snap, caller.group, model, tried);
      if (!ch) return;
      tried.add(ch.id);
      if (!REALTIME_CHANNEL_TYPES.has(ch.type)) continue;
      yield ch;
      if (--attempts <= 0) return;
    }
  }

  /** A refusal that qualifies (401, or AutomaticDisableKeywords) auto-disables the channel, as on HTTP calls. */
  async function maybeDisable(ch: ChannelRecord, err: UpstreamOpenError): Promise<void> {
    if (
      err.status === null ||
      !s.options.get('AutomaticDisableChannelEnabled') ||
      !ch.autoBan ||
      ch.status !== 1
    )
      return;
    const reason = disableReason(
      { status: err.status, message: err.detail || err.message, type: '', code: null },
      ch.type,
      s.options.get('AutomaticDisableKeywords'),
    );
    if (reason) await s.core.disableChannel(ch, reason).catch((e) => s.log.warn(`disable failed: ${e}`));
  }

  const upgrade: UpgradeHandler = async (request: Request, conn: ConnInfo): Promise<UpgradeDecision> => {
    const url = new URL(request.url);
    if (url.pathname !== REALTIME_PATH && url.pathname !== `${REALTIME_PATH}/`) return null;
    const ip = s.clientIp
      ? s.clientIp(conn.remoteAddress, request.headers)
      : conn.remoteAddress.replace(/^::ffff:/, '');
    let holdId: string | null = null;
    try {
      const model = url.searchParams.get('model') ?? '';
      if (!model)
        throw new RelayError({
          status: 400,
          message: 'model is required',
          type: 'invalid_request_error',
          param: 'model',
        });
      const caller = await authenticate(request, url, ip, model);
      const snap = s.catalog.snapshot;
      if (caller.pinnedChannelId === null && !hasRoute(snap, caller.group, model))
        throw new RelayError({
          status: 503,
          message: `no available channel for model ${model} in group ${caller.group}`,
          type: 'new_api_error',
          code: 'model_not_found',
        });
      const tables = s.core.priceTables();
      const found = resolvePrice(tables, model, caller.group);
      if (!found && caller.user.setting.accept_unset_model_ratio_model !== true)
        throw new RelayError({
          status: 403,
          message: `model ${model} has no price set; ask the administrator to set its ratio or price`,
          type: 'invalid_request_error',
          code: 'model_price_not_set',
        });
      const price = found ?? resolvePrice({ ...tables, selfUseMode: true }, model, caller.group)!;

      // The session's standing hold: what one response may cost (ADR 030). The rate limit counts the session.
      const sessionId = newRequestId();
      const limit = rateLimitFor(s.options, caller.user.id);
      const tokenId = caller.token && !caller.token.unlimitedQuota ? caller.token.id : null;
      const holdTtlMs = s.idleMs * 2 + HOLD_MARGIN_MS;
      const baseHold = responseHold(price, tables);
      holdId = `${sessionId}-h0`;
      await s.core.reserve({
        requestId: holdId,
        userId: caller.user.id,
        tokenId,
        amount: baseHold,
        limit,
        holdTtlMs,
      });

      const beta =
        request.headers.get('openai-beta')?.includes('realtime=v1') === true ||
        (request.headers.get('sec-websocket-protocol') ?? '').includes('openai-beta.realtime-v1');
      let upstream: BufferedSocket | null = null;
      let served: ChannelRecord | null = null;
      let lastError: UpstreamOpenError | null = null;
      const upstreamModelOf = (ch: ChannelRecord) => ch.modelMapping[model] || model;
      const channelIds: number[] = [];
      for (const ch of candidates(caller, model)) {
        channelIds.push(ch.id);
        try {
          const target = realtimeTarget(channelConfig(ch), upstreamModelOf(ch), beta);
          upstream = await openUpstream(target, s.openTimeoutMs ?? 10_000, limits.max);
          served = ch;
          break;
        } catch (err) {
          lastError =
            err instanceof UpstreamOpenError ? err : new UpstreamOpenError((err as Error).message, null);
          s.log.warn(
            `realtime: channel #${ch.id} ${ch.name}: ${lastError.message}${lastError.detail ? ` (${lastError.detail})` : ''}`,
          );
          await maybeDisable(ch, lastError);
        }
      }
      if (!upstream || !served) {
        throw lastError
          ? new RelayError({
              status: lastError.status === 429 ? 429 : 502,
              message: lastError.status === 429 ? 'upstream load saturated, retry later' : lastError.message,
              type: 'upstream_error',
              code: 'upstream_error',
            })
          : new RelayError({
              status: 503,
              message: `no channel serves the realtime API for model ${model} in group ${caller.group}`,
              type: 'new_api_error',
              code: 'model_not_found',
            });
      }
      const upstreamSocket = upstream;
      const billing = sessionBilling({
        s,
        sessionId,
        caller,
        model,
        upstreamModel: upstreamModelOf(served),
        channelIds,
        price,
        tables,
        tokenId,
        limit,
        holdTtlMs,
        baseHold,
        firstHold: holdId,
        clientIp: ip,
      });
      holdId = null; // the session owns it from here
      return {
        protocol: selectProtocol(request.headers.get('sec-websocket-protocol')),
        accept(client: ServerWebSocket) {
          const session = new RealtimeSession({
            client,
            upstream: upstreamSocket,
            billing,
            idleMs: s.idleMs,
            graceMs: s.graceMs ?? 5_000,
            limits,
            now,
            onError: (message, err) => s.log.error(`realtime ${sessionId}: ${message}`, err),
          });
          sessions.add(session);
          void session.done.then(() => sessions.delete(session));
          session.start();
        },
        abandon() {
          upstreamSocket.socket.close();
          void billing.end().catch(() => {});
        },
      };
    } catch (err) {
      if (holdId) await s.store.release(holdId).catch(() => {});
      if (err instanceof RelayError) return refusal(err);
      throw err;
    }
  };

  return {
    upgrade,
    get sessions() {
      return sessions.size;
    },
    async close() {
      await Promise.all([...sessions].map((x) => x.end('the relay is stopping')));
    },
  };
}

/**
 * The hold a session keeps for its next response (ADR 030): PreConsumedQuota tokens of audio in and as many of
 * the dearest output (text at the completion ratio or audio at audio × audio completion), or the fixed price of
 * one response.
 */
export function responseHold(price: Price, tables: PriceTables): number {
  const n = tables.preConsumedQuota;
  return estimateQuota(price, { promptTokens: 0, audioPromptTokens: n, defaultMaxTokens: n }, tables);
}

type BillingCtx = {
  s: RealtimeServices;
  sessionId: string;
  caller: Caller;
  model: string;
  upstreamModel: string;
  channelIds: number[];
  price: Price;
  tables: PriceTables;
  tokenId: number | null;
  limit: RateLimit | undefined;
  holdTtlMs: number;
  baseHold: number;
  firstHold: string;
  clientIp: string;
};

/**
 * Per response: settle its cost under its own request id (store settle + outbox → Billing gRPC, as for HTTP
 * calls, so a log row appears per response), then renew the standing hold at max(base hold, this response's
 * cost). When the balance no longer covers it, the session ends.
 */
function sessionBilling(ctx: BillingCtx): SessionBilling {
  const { s, caller } = ctx;
  const now = ctx.s.now ?? Date.now;
  let holdId: string | null = ctx.firstHold;
  let holds = 1;
  let first = true;
  return {
    async response(r) {
      const estimated = r.usage === null;
      const u: Usage =
        r.usage ?? makeUsage({ completionTokens: r.text ? await countTextTokens(r.text, ctx.model) : 0 });
      const amount = computeQuota(ctx.price, u, ctx.tables);
      const at = now();
      const requestId = responseRequestId(ctx.sessionId, r.responseId);
      const other = {
        ...priceDetails(ctx.price, u, {
          frtMs: r.firstTokenAt === null ? 0 : r.firstTokenAt - r.startedAt,
          channelIds: ctx.channelIds,
          upstreamModel: ctx.upstreamModel,
          requestModel: ctx.model,
          usageEstimated: estimated,
        }),
        // new-api's realtime keys (gateway-behaviour §3.4), on every response, audio or not.
        ws: true,
        text_input: Math.max(0, u.promptTokens - u.audioPromptTokens),
        text_output: Math.max(0, u.completionTokens - u.audioCompletionTokens),
        audio_input: u.audioPromptTokens,
        audio_output: u.audioCompletionTokens,
        audio_ratio: ctx.price.kind === 'ratio' ? ctx.price.audioRatio : 1,
        audio_completion_ratio: ctx.price.kind === 'ratio' ? ctx.price.audioCompletionRatio : 1,
      };
      const event = UsageEvent.fromPartial({
        requestId,
        userId: caller.user.id,
        tokenId: caller.token?.id ?? 0,
        channelIds: ctx.channelIds,
        modelName: ctx.model,
        upstreamModel: ctx.upstreamModel,
        usage: {
          promptTokens: u.promptTokens,
          completionTokens: u.completionTokens,
          audioPromptTokens: u.audioPromptTokens,
          audioCompletionTokens: u.audioCompletionTokens,
        },
        quota: amount,
        isStream: true,
        useTimeMs: at - r.startedAt,
        frtMs: r.firstTokenAt === null ? 0 : r.firstTokenAt - r.startedAt,
        group: caller.group,
        otherJson: JSON.stringify(other),
        createdAtMs: at,
        ip: ctx.clientIp,
        tokenName: caller.token ? '' : caller.tokenName,
        kind: UsageKind.USAGE_KIND_CONSUME,
        content: `${priceContent(ctx.price, u)}, realtime`,
      });
      const payload = encodeUsagePayload(event);
      let entryId: string;
      try {
        ({ entryId } = await s.store.settle({
          requestId,
          userId: caller.user.id,
          tokenId: ctx.tokenId,
          amount,
          success: true,
          // The session counted once in the rate limit's total window; its first bill counts the success.
          ...(first && ctx.limit ? { limit: ctx.limit } : {}),
          payload,
          now: at,
        }));
      } catch (err) {
        s.log.warn(
          `settle ${requestId}: store unavailable (${(err as Error).message}); reporting from memory`,
        );
        entryId = `${LOCAL_ENTRY_PREFIX}${requestId}`;
      }
      first = false;
      s.outbox.enqueue({
        id: entryId,
        requestId,
        userId: caller.user.id,
        tokenId: ctx.tokenId,
        amount,
        payload,
        createdAt: at,
      });

      // Renew the standing hold for the next response.
      if (holdId) await s.store.release(holdId).catch(() => {});
      holdId = `${ctx.sessionId}-h${holds++}`;
      try {
        await s.core.reserve({
          requestId: holdId,
          userId: caller.user.id,
          tokenId: ctx.tokenId,
          amount: Math.max(ctx.baseHold, amount),
          limit: undefined,
          holdTtlMs: ctx.holdTtlMs,
        });
      } catch (err) {
        holdId = null;
        const e = err instanceof RelayError ? err : null;
        return {
          ok: false,
          type: e?.type ?? 'new_api_error',
          code: e?.code ?? 'quota_hold_failed',
          message: e
            ? `${e.message}; the realtime session ends here`
            : 'the gateway cannot hold quota for the next response; the realtime session ends here',
        };
      }
      return { ok: true };
    },
    async end() {
      if (holdId) await s.store.release(holdId);
      holdId = null;
    },
  };
}
