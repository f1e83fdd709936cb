/**
 * The relay pipeline (ARCHITECTURE.md §4): price → hold (with rate limits, one store round trip) → channel
 * attempts (priority tiers, weighted, never the same channel twice) → adaptor → stream or body back to the
 * client → settle the actual cost and append the usage event to the outbox in one atomic store call.
 * Fronts (HTTP, gRPC) parse their input into a RelayCall and render the RelayResult or RelayError.
 */
import type { OptionService } from '@switchyard/db/options/service.ts';
import { UsageEvent, UsageKind } from '@switchyard/proto/switchyard/billing/v1/billing.ts';
import type { Logger } from '../log.ts';
import { chatStreamToClaude, chatToClaude, claudeToChat } from '../providers/bridges/claude-chat.ts';
import { chatStreamToGemini, chatToGemini, geminiToChat } from '../providers/bridges/gemini-chat.ts';
import { geminiEmbedToOpenAI, openAIToGeminiEmbed } from '../providers/bridges/gemini-embed.ts';
import {
  chatStreamToResponses,
  chatToResponses,
  responsesRefusal,
  responsesToChat,
} from '../providers/bridges/responses-chat.ts';
import { type FrameTransformer, frameRunner } from '../providers/frames.ts';
import { ENDPOINT_PATHS } from '../providers/openai/channels.ts';
import { adaptorFor } from '../providers/registry.ts';
import type {
  ChannelConfig,
  Endpoint,
  ProviderAdaptor,
  ProviderSettings,
  RelayInput,
  UpstreamError,
} from '../providers/types.ts';
import { UpstreamFailure } from '../providers/types.ts';
import { runtime } from '../runtime.ts';
import type { AccountRef, OutboxEntry, RateLimit, RelayStore } from '../store/types.ts';
import type { Caller } from './auth.ts';
import { type Catalog, hasRoute, selectChannel } from './catalog.ts';
import { buildUpstreamRequest, credentials } from './credentials.ts';
import { RelayError } from './errors.ts';
import { requestHold } from './hold.ts';
import { LOCAL_ENTRY_PREFIX } from './outbox.ts';
import {
  computeQuota,
  estimateQuota,
  type PriceTables,
  priceContent,
  priceDetails,
  priceTablesFrom,
  type Price as ResolvedPrice,
  resolvePrice,
} from './pricing.ts';
import type { ChannelRecord, Repo } from './repo.ts';
import { findSensitive, promptText, sensitivePolicy } from './sensitive.ts';
import { maskAnswerBody, maskingStage } from './sensitive-mask.ts';
import { stallFrame } from './stream-stall.ts';
import { countTextTokens } from './tokenize.ts';
import { clientMessage, disableReason, isRetryable, mapStatus } from './upstream.ts';
import {
  fetchClient,
  type UpstreamChunks,
  type UpstreamClient,
  type UpstreamReply,
  undiciClient,
} from './upstream-client.ts';
import { usage as makeUsage, type Usage } from './usage.ts';
import { encodeUsagePayload } from './usage-payload.ts';

export type RelayCall = {
  endpoint: Endpoint;
  /** The requested model (what is billed and logged). */
  model: string;
  stream: boolean;
  body: Record<string, unknown> | FormData;
  caller: Caller;
  clientHeaders: Headers;
  clientIp: string;
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
};

export type RelayResult =
  | { kind: 'body'; status: number; headers: Headers; body: BodyInit; requestId: string }
  | { kind: 'stream'; status: number; headers: Headers; body: ReadableStream<Uint8Array>; requestId: string };

export type OutboxSink = { enqueue(entry: OutboxEntry): void };

export type RelayDeps = {
  store: RelayStore;
  repo: Repo;
  catalog: Catalog;
  options: OptionService;
  outbox: OutboxSink;
  log: Logger;
  fetch?: typeof fetch;
  upstreamTimeoutMs: number;
  /** A stream whose client takes nothing for this long is ended (RELAY_STREAM_STALL_MS; default 30 s). */
  streamStallMs?: number;
  /** How long a balance loaded into the store lives there (RELAY_BALANCE_TTL_MS). */
  balanceTtlMs: number;
  now?: () => number;
};

const HOLD_TTL_MARGIN_MS = 60_000;
const STREAMING: ReadonlySet<Endpoint> = new Set([
  'chat',
  'completions',
  'responses',
  'messages',
  'generate',
]);

/**
 * An inbound format that reaches channels without it by conversion to an OpenAI endpoint (`target`, chat unless
 * said): request → that endpoint's body, its answer → the format. The client's body is handed back to the answer
 * conversions for formats whose answer echoes the request (Responses).
 */
type InboundBridge = {
  target?: Endpoint;
  toChat(body: Record<string, unknown>, stream: boolean): Record<string, unknown>;
  fromChat(chatJson: string, model: string, body: Record<string, unknown>): string;
  /** For formats that stream. */
  streamFromChat?(model: string, body: Record<string, unknown>): FrameTransformer;
  /** What a chat upstream cannot do for this request (a 400 for the client), or null. */
  refuse?(body: Record<string, unknown>): { message: string; param: string } | null;
};

/** Keyed by the inbound endpoint. These formats also have their own stream framing (no `data: [DONE]`). */
const BRIDGES: Partial<Record<Endpoint, InboundBridge>> = {
  messages: {
    toChat: (body) => claudeToChat(body),
    fromChat: chatToClaude,
    streamFromChat: chatStreamToClaude,
  },
  generate: { toChat: geminiToChat, fromChat: chatToGemini, streamFromChat: chatStreamToGemini },
  responses: {
    toChat: responsesToChat,
    fromChat: chatToResponses,
    streamFromChat: chatStreamToResponses,
    refuse: responsesRefusal,
  },
  // Gemini embedContent / batchEmbedContents on channels serving OpenAI embeddings.
  embed: { target: 'embeddings', toChat: geminiEmbedToOpenAI, fromChat: openAIToGeminiEmbed },
};

export function newRequestId(): string {
  return crypto.randomUUID().replaceAll('-', '');
}

/** The channel config an adaptor sees; one key line picked at random when a channel holds several. */
export function channelConfig(ch: ChannelRecord, random: () => number = Math.random): ChannelConfig {
  const keys = ch.key
    .split('\n')
    .map((k) => k.trim())
    .filter(Boolean);
  const key = keys.length > 1 ? (keys[Math.floor(random() * keys.length)] ?? '') : (keys[0] ?? '');
  return {
    id: ch.id,
    type: ch.type,
    name: ch.name,
    key,
    baseUrl: ch.baseUrl,
    other: ch.other,
    openaiOrganization: ch.openaiOrganization,
    setting: ch.setting,
    paramOverride: ch.paramOverride,
  };
}

export function rateLimitFor(options: OptionService, userId: number): RateLimit | undefined {
  if (!options.get('ModelRequestRateLimitEnabled')) return undefined;
  const minutes = options.get('ModelRequestRateLimitDurationMinutes');
  if (minutes <= 0) return undefined;
  return {
    key: String(userId),
    windowMs: minutes * 60_000,
    maxTotal: options.get('ModelRequestRateLimitCount'),
    maxSuccess: options.get('ModelRequestRateLimitSuccessCount'),
  };
}

type Attempt = { channel: ChannelRecord; upstreamModel: string; adaptor: ProviderAdaptor };

export class RelayCore {
  readonly #d: RelayDeps;
  readonly #upstream: UpstreamClient;
  readonly #now: () => number;
  /** Streams in flight: each entry cuts its stream and resolves once it is settled. */
  readonly #streams = new Set<() => Promise<void>>();

  constructor(deps: RelayDeps) {
    this.#d = deps;
    // An injected fetch (tests) is always used; otherwise Node gets the undici fast path.
    this.#upstream = deps.fetch
      ? fetchClient(deps.fetch)
      : runtime.name === 'node'
        ? undiciClient(fetchClient(fetch))
        : fetchClient(fetch);
    this.#now = deps.now ?? Date.now;
  }

  /** Quota used so far by the token (or the user for unlimited tokens), committed plus not yet billed. */
  async usedQuota(caller: Caller): Promise<number> {
    const useToken = caller.token && !caller.token.unlimitedQuota;
    return this.#d.repo.usedQuota(caller.user.id, useToken ? caller.token!.id : null);
  }

  /**
   * Cuts every stream still in flight (the relay is stopping) and waits until each one is settled for what it
   * delivered, so that no stream ends unbilled with its hold left to the sweeper.
   */
  async endStreams(): Promise<void> {
    await Promise.all([...this.#streams].map((end) => end()));
  }

  priceTables(): PriceTables {
    return priceTablesFrom(this.#d.options);
  }

  async relay(call: RelayCall): Promise<RelayResult> {
    const d = this.#d;
    const requestId = newRequestId();
    const started = this.#now();
    const { caller } = call;
    const tables = this.priceTables();

    const sensitive = sensitivePolicy(d.options);
    if (sensitive.onPrompt) {
      const found = findSensitive(promptText(call.endpoint, call.body), sensitive.words);
      if (found.length > 0)
        throw new RelayError({
          status: 400,
          message: `sensitive words detected: ${found.join(', ')}`,
          type: 'invalid_request_error',
          code: 'sensitive_words_detected',
        });
    }

    // A model no channel of the group serves is unknown here (new-api's 503 model_not_found), whether or not it
    // has a price; a served model without a price is the administrator's gap, and says so.
    const snapshot = d.catalog.snapshot;
    if (caller.pinnedChannelId === null && !hasRoute(snapshot, caller.group, call.model))
      throw new RelayError({
        status: 503,
        message: `no available channel for model ${call.model} in group ${caller.group}`,
        type: 'new_api_error',
        code: 'model_not_found',
      });

    const price = resolvePrice(tables, call.model, caller.group);
    const acceptUnset = caller.user.setting.accept_unset_model_ratio_model === true;
    if (!price && !acceptUnset)
      throw new RelayError({
        status: 403,
        message: `model ${call.model} has no price set; ask the administrator to set its ratio or price`,
        type: 'invalid_request_error',
        code: 'model_price_not_set',
      });
    const effectivePrice: ResolvedPrice =
      price ?? resolvePrice({ ...tables, selfUseMode: true }, call.model, caller.group)!;

    // A bound of what this request can cost (core/hold.ts, ADR 009); a 400 for limits no model accepts.
    const { promptTokens, estimate } = await requestHold(
      call.endpoint,
      call.body,
      call.model,
      tables.preConsumedQuota,
    );
    const calls = estimate.calls ?? 1;
    const hold = estimateQuota(effectivePrice, estimate, tables);
    // Without an output limit the hold is flexible (ADR 009): on a balance below the ceiling it takes what is
    // spendable, down to the hold with the old allowance of PreConsumedQuota output tokens (media ceilings and
    // output counts kept), so a small balance can still make a plain SDK call that sends no max_tokens.
    const floor =
      estimate.maxTokens === undefined
        ? estimateQuota(effectivePrice, { ...estimate, defaultMaxTokens: tables.preConsumedQuota }, tables)
        : hold;

    const limit = rateLimitFor(d.options, caller.user.id);
    const tokenId = caller.token && !caller.token.unlimitedQuota ? caller.token.id : null;
    await this.reserve({
      requestId,
      userId: caller.user.id,
      tokenId,
      amount: hold,
      ...(floor < hold ? { minAmount: floor } : {}),
      limit,
      holdTtlMs: d.upstreamTimeoutMs * 2 + HOLD_TTL_MARGIN_MS,
    });

    const ctx: SettleCtx = {
      requestId,
      call,
      tokenId,
      limit,
      price: effectivePrice,
      tables,
      promptTokens,
      calls,
      started,
      channelIds: [],
    };
    try {
      return await this.#attempts(ctx);
    } catch (err) {
      await d.store.release(requestId).catch((e) => d.log.error(`release ${requestId} failed`, e));
      throw err;
    }
  }

  /** Rate limits and the quota hold in one store call, loading missing balances (tasks: a fixed-price hold). */
  async reserve(req: {
    requestId: string;
    userId: number;
    tokenId: number | null;
    amount: number;
    minAmount?: number;
    limit: RateLimit | undefined;
    holdTtlMs: number;
  }): Promise<void> {
    const d = this.#d;
    for (let i = 0; i < 6; i++) {
      // Without the store no hold can be taken, so nothing may reach an upstream: refuse with a retryable 503.
      const r = await d.store
        .reserve({ ...req, limit: req.limit, now: this.#now() })
        .catch((err: unknown) => Promise.reject(storeUnavailable(err)));
      if (r.ok) return;
      if (r.reason === 'balance_unknown') {
        // The store checks the user first; a user it does not know usually comes with a token it does not know
        // either (a first call, or both balances expired), so both load at once: one reserve less and the two
        // reads in parallel. Loading a balance the store already has changes nothing (loadBalance never
        // overwrites one).
        const accounts: AccountRef[] = [r.account];
        if (r.account.kind === 'user' && req.tokenId !== null)
          accounts.push({ kind: 'token', id: req.tokenId });
        await Promise.all(accounts.map((a) => this.loadBalance(a))).catch((err: unknown) =>
          Promise.reject(storeUnavailable(err)),
        );
        continue;
      }
      if (r.reason === 'rate_limited')
        throw new RelayError({
          status: 429,
          message: `you have reached the request rate limit; retry in ${Math.ceil(r.retryAfterMs / 1000)} s`,
          type: 'rate_limit_error',
          code: 'rate_limit_exceeded',
          // Relays pass their own clock: a peer's slightly later timestamp must not push the wait past the window.
          retryAfterMs: req.limit ? Math.min(r.retryAfterMs, req.limit.windowMs) : r.retryAfterMs,
        });
      throw new RelayError({
        status: 403,
        message:
          r.reason === 'insufficient_user_quota'
            ? 'your quota is not enough for this request'
            : 'this token does not have enough quota left for this request',
        type: 'insufficient_user_quota',
        code: r.reason,
      });
    }
    throw new RelayError({
      status: 503,
      message: 'balances are changing too fast; retry',
      type: 'new_api_error',
      code: 'balance_busy',
    });
  }

  /** Loads an account's committed quota into the store (generation-checked; see store/types.ts). */
  async loadBalance(account: AccountRef): Promise<void> {
    const d = this.#d;
    const gen = await d.store.balanceGeneration(account);
    const committed =
      account.kind === 'user'
        ? await d.repo.userQuota(account.id)
        : await d.repo.tokenRemainQuota(account.id);
    await d.store.loadBalance(account, gen, committed ?? 0, d.balanceTtlMs);
  }

  async #attempts(ctx: SettleCtx): Promise<RelayResult> {
    const d = this.#d;
    const { call } = ctx;
    const tried = new Set<number>();
    const retries = call.caller.pinnedChannelId !== null ? 0 : d.options.get('RetryTimes');
    let lastError: RelayError | null = null;

    for (let attempt = 0; attempt <= retries; attempt++) {
      const picked = this.#pick(ctx, tried);
      if (!picked) break;
      tried.add(picked.channel.id);
      ctx.channelIds.push(picked.channel.id);
      const outcome = await this.#callUpstream(ctx, picked);
      if (outcome.ok) return outcome.result;
      lastError = outcome.error;
      if (!outcome.retryable) break;
    }
    if (lastError) throw lastError;
    // Channels exist for the model, but none of them can take this inbound format (an embeddings-only M3E model
    // called for chat, Responses on a rerank-only type): the client's call is wrong, not the gateway.
    if (ctx.unservable)
      throw new RelayError({
        status: 400,
        message: `no channel for model ${call.model} in group ${call.caller.group} can serve ${endpointName(call.endpoint)} requests`,
        type: 'invalid_request_error',
        code: 'unsupported_endpoint',
      });
    throw new RelayError({
      status: 503,
      message: `no available channel for model ${call.model} in group ${call.caller.group}`,
      type: 'new_api_error',
      code: 'model_not_found',
    });
  }

  #pick(ctx: SettleCtx, tried: Set<number>): Attempt | null {
    const { call } = ctx;
    const snap = this.#d.catalog.snapshot;
    let channel: ChannelRecord | null;
    if (call.caller.pinnedChannelId !== null) {
      channel = snap.channels.get(call.caller.pinnedChannelId) ?? null;
      if (!channel || tried.has(channel.id))
        throw new RelayError({
          status: channel ? 503 : 400,
          message: channel
            ? 'the pinned channel failed'
            : `channel ${call.caller.pinnedChannelId} does not exist`,
          type: 'invalid_request_error',
          code: 'channel_not_found',
        });
      if (channel.status !== 1)
        throw new RelayError({
          status: 403,
          message: 'the pinned channel is disabled',
          type: 'invalid_request_error',
          code: 'channel_disabled',
        });
    } else {
      channel = selectChannel(snap, call.caller.group, call.model, tried);
    }
    if (!channel) return null;
    const adaptor = adaptorFor(channel.type);
    const upstreamModel = channel.modelMapping[call.model] || call.model;
    if (
      !adaptor ||
      !(servesNatively(adaptor, call.endpoint, channel.type) || bridgeable(call.endpoint, adaptor))
    ) {
      // A channel that can serve this endpoint neither natively nor through a bridge: count it as tried and
      // move on, remembering why for the error when no channel is left.
      tried.add(channel.id);
      ctx.unservable = true;
      if (call.caller.pinnedChannelId !== null)
        throw new RelayError({
          status: 400,
          message: `the pinned channel cannot serve ${endpointName(call.endpoint)} requests`,
          type: 'invalid_request_error',
          code: 'unsupported_endpoint',
        });
      return this.#pick(ctx, tried);
    }
    return { channel, upstreamModel, adaptor };
  }

  async #callUpstream(
    ctx: SettleCtx,
    { channel, upstreamModel, adaptor }: Attempt,
  ): Promise<{ ok: true; result: RelayResult } | { ok: false; error: RelayError; retryable: boolean }> {
    const d = this.#d;
    const { call } = ctx;
    ctx.upstreamModel = upstreamModel;
    const stream = call.stream && STREAMING.has(call.endpoint);
    // A Claude-, Gemini- or Responses-format call on a channel without that native format goes through the chat
    // bridge.
    const bridge = servesNatively(adaptor, call.endpoint, channel.type)
      ? null
      : (BRIDGES[call.endpoint] ?? null);
    const refused = bridge?.refuse?.(call.body as Record<string, unknown>);
    if (refused)
      // Another channel of the group may serve the format natively: retryable, so the attempts go on.
      return {
        ok: false,
        retryable: true,
        error: new RelayError({
          status: 400,
          message: refused.message,
          type: 'invalid_request_error',
          code: 'unsupported_parameter',
          param: refused.param,
        }),
      };
    const input: RelayInput = {
      endpoint: bridge ? (bridge.target ?? 'chat') : call.endpoint,
      upstreamModel,
      stream,
      body: bridge
        ? { ...bridge.toChat(call.body as Record<string, unknown>, stream), model: upstreamModel }
        : withModel(call.body, upstreamModel),
      clientHeaders: call.clientHeaders,
      settings: providerSettings(d.options),
    };
    // One controller for the client's abort and the upstream deadline: AbortSignal.timeout + AbortSignal.any
    // per request showed in profiles. The deadline covers a whole non-stream reply and a stream's first byte.
    const ctl = upstreamSignal(call.signal, d.upstreamTimeoutMs);
    const signal = ctl.signal;

    let cfg = channelConfig(channel);
    let res: UpstreamReply;
    try {
      // Both steps stay synchronous for adaptors without a key exchange or async signing (the hot path).
      if (adaptor.credential) cfg = await credentials.resolve(adaptor, cfg, this.#upstream, signal);
      const built = buildUpstreamRequest(adaptor, cfg, input);
      const req = built instanceof Promise ? await built : built;
      res = await this.#upstream.send(req, signal);
    } catch (err) {
      ctl.release();
      if (call.signal?.aborted) {
        return { ok: false, retryable: false, error: clientGone() };
      }
      // The credential exchange was refused (a wrong key pair) or the key cannot be used: this channel cannot
      // serve; a refusal counts as the upstream's 401 (auto-disable, status mapping), and another channel is tried.
      if (err instanceof RelayError) {
        d.log.warn(`channel #${channel.id} ${channel.name}: ${err.message}`);
        if (err.status !== 401) return { ok: false, retryable: true, error: err };
        return this.#upstreamFailed(
          channel,
          { status: 401, message: err.message, type: err.type, code: err.code },
          401,
          null,
        );
      }
      d.log.warn(`channel #${channel.id} ${channel.name}: upstream unreachable (${(err as Error).message})`);
      return {
        ok: false,
        retryable: true,
        error: new RelayError({
          status: 502,
          message: ctl.timedOut()
            ? 'the upstream did not answer in time'
            : 'the upstream could not be reached',
          type: 'upstream_error',
          code: 'upstream_unreachable',
        }),
      };
    }

    if (res.status < 200 || res.status >= 300) {
      const bodyText = await res.text().catch(() => '');
      ctl.release();
      if (res.status === 401) credentials.invalidate(adaptor, cfg);
      const upstreamErr = adaptor.parseError({ status: res.status, headers: res.headers, bodyText });
      return this.#upstreamFailed(channel, upstreamErr, res.status, res.headers.get('retry-after'));
    }

    const headers = new Headers({ 'x-request-id': ctx.requestId });
    const upstreamBody = stream ? res.chunks() : null;
    if (upstreamBody) {
      // RELAY_UPSTREAM_TIMEOUT_MS bounds a stream's gaps, not its length: long reasoning streams must survive.
      ctl.endDeadline();
      return {
        ok: true,
        result: this.#streamBack(ctx, adaptor, input, upstreamBody, headers, bridge, ctl.release),
      };
    }
    let buf: Uint8Array;
    try {
      buf = await res.bytes();
    } catch (err) {
      // The answer began but did not finish (deadline, client gone, upstream reset): nothing to bill.
      if (call.signal?.aborted) return { ok: false, retryable: false, error: clientGone() };
      d.log.warn(`channel #${channel.id} ${channel.name}: reply cut (${(err as Error).message})`);
      return {
        ok: false,
        retryable: true,
        error: new RelayError({
          status: 502,
          message: ctl.timedOut()
            ? 'the upstream did not answer in time'
            : 'the upstream reply was cut before it ended',
          type: 'upstream_error',
          code: 'upstream_unreachable',
        }),
      };
    } finally {
      ctl.release();
    }
    let parsed: ReturnType<ProviderAdaptor['parseResponse']>;
    try {
      parsed = adaptor.parseResponse(input, { status: res.status, headers: res.headers, body: buf });
    } catch (err) {
      // A 2xx that carries the provider's error (Baidu error_code, Hunyuan Response.Error, Spark header.code).
      if (!(err instanceof UpstreamFailure)) throw err;
      if (err.error.status === 401) credentials.invalidate(adaptor, cfg);
      return this.#upstreamFailed(channel, err.error, err.error.status, null);
    }
    const sensitive = sensitivePolicy(d.options);
    if (sensitive.onCompletion && sensitive.stop) {
      const found = findSensitive(parsed.completionText, sensitive.words);
      if (found.length > 0) {
        // The upstream did the work, so the call is billed; the client gets the refusal instead of the text.
        await this.#settle(
          ctx,
          parsed.usage ?? (await this.#localUsage(ctx, parsed.completionText)),
          parsed.usage === null,
          0,
        );
        return {
          ok: false,
          retryable: false,
          error: new RelayError({
            status: 400,
            message: `the answer contained sensitive words: ${found.join(', ')}`,
            type: 'invalid_request_error',
            code: 'sensitive_words_detected',
          }),
        };
      }
    }
    headers.set('content-type', parsed.contentType);
    const u = parsed.usage ?? (await this.#localUsage(ctx, parsed.completionText));
    await this.#settle(ctx, u, parsed.usage === null, 0);
    let body = bridge
      ? bridge.fromChat(
          await new Response(parsed.body).text(),
          call.model,
          call.body as Record<string, unknown>,
        )
      : parsed.body;
    // OpenAI embeddings from an upstream that reports no usage (Gemini): the client gets the count billed.
    if (!bridge && call.endpoint === 'embeddings' && parsed.usage === null)
      body = withEmbeddingUsage(await new Response(body).text(), u);
    if (
      sensitive.onCompletion &&
      !sensitive.stop &&
      findSensitive(parsed.completionText, sensitive.words).length > 0
    )
      // StopOnSensitiveEnabled off: the answer goes out with its words masked (new-api's "replace").
      body = maskAnswerBody(await new Response(body).text(), parsed.contentType, sensitive.words);
    return {
      ok: true,
      result: { kind: 'body', status: 200, headers, body, requestId: ctx.requestId },
    };
  }

  /** An upstream refusal after status-code mapping: auto-disable when it qualifies, retry when it may. */
  async #upstreamFailed(
    channel: ChannelRecord,
    upstreamErr: UpstreamError,
    upstreamStatus: number,
    retryAfter: string | null,
  ): Promise<{ ok: false; error: RelayError; retryable: boolean }> {
    const status = mapStatus(upstreamStatus, channel.statusCodeMapping);
    const mapped: UpstreamError = { ...upstreamErr, status };
    await this.#maybeDisable(channel, mapped);
    return {
      ok: false,
      retryable: isRetryable(status),
      error: new RelayError({
        status,
        message: clientMessage(mapped),
        type: mapped.type || 'upstream_error',
        code: mapped.code,
        ...(retryAfter && Number.isFinite(Number(retryAfter))
          ? { retryAfterMs: Number(retryAfter) * 1000 }
          : {}),
      }),
    };
  }

  #streamBack(
    ctx: SettleCtx,
    adaptor: ProviderAdaptor,
    input: RelayInput,
    upstream: UpstreamChunks,
    headers: Headers,
    bridge: InboundBridge | null,
    release: () => void = () => {},
  ): RelayResult {
    const conv = adaptor.streamConversion(input);
    const policy = sensitivePolicy(this.#d.options);
    const stages: FrameTransformer[] = [conv.transformer];
    if (bridge?.streamFromChat)
      stages.push(bridge.streamFromChat(ctx.call.model, ctx.call.body as Record<string, unknown>));
    // StopOnSensitiveEnabled off: words are masked in what the client receives (a stage only when it is on).
    if (policy.onCompletion && !policy.stop) stages.push(maskingStage(policy.words));
    // The conversions run inline on each upstream read: a frame reaches the client stream in the same tick it
    // arrived, with no Web Stream or pipe per stage in between.
    const runner = frameRunner(stages);
    let frtMs = 0;
    let finished: Promise<void> | null = null;
    const finish = () => {
      finished ??= (async () => {
        idle.stop();
        stall.stop();
        release();
        const t = conv.tally();
        const u = t.usage ?? (await this.#localUsage(ctx, t.completionText));
        await this.#settle(ctx, u, t.usage === null, frtMs).catch((e) =>
          this.#d.log.error(`settle ${ctx.requestId} failed`, e),
        );
      })().finally(() => this.#streams.delete(end));
      return finished;
    };
    const end = async () => {
      await upstream.cancel(new Error('the relay is stopping')).catch(() => {});
      await finish();
    };
    this.#streams.add(end);
    const idleMs = this.#d.upstreamTimeoutMs;
    const stopWords = policy.onCompletion && policy.stop ? policy.words : [];
    // Only the tail can hold a word that the last chunk completed.
    const scanTail = 4096 + Math.max(0, ...stopWords.map((w) => w.length));
    // One idle timer per stream (not a timer and a Promise per frame): armed when a pull starts waiting on the
    // upstream; if it fires while that read is pending, the upstream is cancelled, which ends the read.
    const idle = idleTimer(idleMs, () => {
      upstream.cancel(new Error('stream idle timeout')).catch(() => {});
    });
    // Backpressure (ADR 039): the body is pulled only as the client's socket drains, so a client that does not
    // read holds back the upstream. One that takes nothing for stallMs gets the stream ended: the upstream is
    // cancelled and what was produced billed at once, a last error event waits for it, and a client that does
    // not take that either within stallMs has its connection cut.
    const stallMs = this.#d.streamStallMs ?? 30_000;
    let ctrl: ReadableStreamDefaultController<Uint8Array> | null = null;
    let stalled: Timer | undefined;
    const stall = idleTimer(stallMs, () => {
      const message = `the client read nothing for ${stallMs} ms; the stream ends here`;
      this.#d.log.warn(`stream ${ctx.requestId}: ${message}`);
      upstream.cancel(new Error('the client stopped reading')).catch(() => {});
      void finish();
      const frame = stallFrame(ctx.call.endpoint, message);
      try {
        if (frame) ctrl?.enqueue(frame);
      } catch {
        // The stream is already over.
      }
      stalled = setTimeout(() => {
        try {
          ctrl?.error(new Error('the client stopped reading'));
        } catch {
          // Already over.
        }
      }, stallMs);
      if (refreshable(stalled)) stalled.unref();
    });
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        ctrl = controller;
      },
      pull: async (controller) => {
        stall.disarm();
        if (stalled !== undefined) {
          // The client took the last event after all: end the stream cleanly.
          clearTimeout(stalled);
          controller.close();
          return;
        }
        try {
          // Upstream chunks that complete no frame (a partial SSE event) produce nothing: read on.
          for (;;) {
            idle.arm();
            const next = await upstream.read();
            if (idle.disarm()) throw new Error('stream idle timeout');
            const out = next.done ? runner.end() : runner.push(next.value);
            if (!frtMs && conv.tally().sawFirstToken) frtMs = this.#now() - ctx.started;
            if (
              stopWords.length > 0 &&
              findSensitive(conv.tally().completionText.slice(-scanTail), stopWords).length > 0
            ) {
              // StopOnSensitiveEnabled: end the answer here (billed for what was produced), as a clean stream end.
              await upstream.cancel().catch(() => {});
              if (!BRIDGES[ctx.call.endpoint])
                controller.enqueue(new TextEncoder().encode('data: [DONE]\n\n'));
              controller.close();
              await finish();
              return;
            }
            for (const chunk of out) controller.enqueue(chunk);
            if (next.done) {
              // Settle before the client sees the end: a relay killed in between leaves a cut stream, not an
              // unbilled complete one.
              await finish();
              controller.close();
              return;
            }
            if (out.length > 0) {
              stall.arm();
              return;
            }
          }
        } catch (err) {
          this.#d.log.warn(`stream ${ctx.requestId} ended early: ${(err as Error).message}`);
          await upstream.cancel().catch(() => {});
          await finish();
          controller.close();
        }
      },
      cancel: async (reason) => {
        clearTimeout(stalled);
        // The client went away: stop the upstream and bill what was produced.
        await upstream.cancel(reason).catch(() => {});
        await finish();
      },
    });
    headers.set('content-type', 'text/event-stream; charset=utf-8');
    headers.set('cache-control', 'no-cache');
    return { kind: 'stream', status: 200, headers, body, requestId: ctx.requestId };
  }

  async #localUsage(ctx: SettleCtx, completionText: string): Promise<Usage> {
    const { call } = ctx;
    if (call.endpoint === 'speech' && !(call.body instanceof FormData))
      return makeUsage({ promptTokens: ctx.promptTokens });
    return makeUsage({
      promptTokens: ctx.promptTokens,
      completionTokens: completionText ? await countTextTokens(completionText, call.model) : 0,
    });
  }

  async #settle(ctx: SettleCtx, u: Usage, estimated: boolean, frtMs: number): Promise<void> {
    const d = this.#d;
    const { call } = ctx;
    const amount = computeQuota(ctx.price, u, ctx.tables, { calls: ctx.calls });
    const now = this.#now();
    const other = priceDetails(ctx.price, u, {
      frtMs,
      channelIds: ctx.channelIds,
      ...(ctx.upstreamModel ? { upstreamModel: ctx.upstreamModel } : {}),
      requestModel: call.model,
      usageEstimated: estimated,
    });
    const event = UsageEvent.fromPartial({
      requestId: ctx.requestId,
      userId: call.caller.user.id,
      tokenId: call.caller.token?.id ?? 0,
      channelIds: ctx.channelIds,
      modelName: call.model,
      upstreamModel: ctx.upstreamModel ?? call.model,
      usage: {
        promptTokens: u.promptTokens,
        completionTokens: u.completionTokens,
        cachedTokens: u.cachedTokens,
        cacheWriteTokens: u.cacheWriteTokens,
        reasoningTokens: u.reasoningTokens,
        audioPromptTokens: u.audioPromptTokens,
        audioCompletionTokens: u.audioCompletionTokens,
        imageTokens: u.imageTokens,
      },
      quota: amount,
      isStream: call.stream,
      useTimeMs: now - ctx.started,
      frtMs,
      group: call.caller.group,
      otherJson: JSON.stringify(other),
      createdAtMs: now,
      ip: call.clientIp,
      tokenName: call.caller.token ? '' : call.caller.tokenName,
      kind: UsageKind.USAGE_KIND_CONSUME,
      content: priceContent(ctx.price, u),
    });
    const payload = encodeUsagePayload(event);
    let entryId: string;
    try {
      ({ entryId } = await d.store.settle({
        requestId: ctx.requestId,
        userId: call.caller.user.id,
        tokenId: ctx.tokenId,
        amount,
        success: true,
        ...(ctx.limit ? { limit: ctx.limit } : {}),
        payload,
        now,
      }));
    } catch (err) {
      // The store went away after the upstream answered: the call happened, so keep its event in this process
      // and report it from here (Billing is idempotent by request id; a local entry is never acked in the store).
      d.log.warn(
        `settle ${ctx.requestId}: store unavailable (${(err as Error).message}); reporting from memory`,
      );
      entryId = `${LOCAL_ENTRY_PREFIX}${ctx.requestId}`;
    }
    d.outbox.enqueue({
      id: entryId,
      requestId: ctx.requestId,
      userId: call.caller.user.id,
      tokenId: ctx.tokenId,
      amount,
      payload,
      createdAt: now,
    });
  }

  async #maybeDisable(channel: ChannelRecord, err: UpstreamError): Promise<void> {
    const d = this.#d;
    if (!d.options.get('AutomaticDisableChannelEnabled') || !channel.autoBan || channel.status !== 1) return;
    const reason = disableReason(err, channel.type, d.options.get('AutomaticDisableKeywords'));
    if (!reason) return;
    await this.disableChannel(channel, reason);
  }

  /** Auto-disables (status 3) with the reason and time in other_info; the routing table drops it at once. */
  async disableChannel(channel: ChannelRecord, reason: string): Promise<boolean> {
    const d = this.#d;
    const otherInfo = {
      ...channel.otherInfo,
      status_reason: reason.slice(0, 500),
      status_time: Math.floor(this.#now() / 1000),
    };
    d.catalog.markStatus(channel.id, 3);
    // False when the database no longer has it enabled (disabled by hand meanwhile); unroutable either way.
    const changed = await d.repo.setChannelStatus(channel.id, 3, otherInfo, 1);
    if (changed) {
      d.log.warn(`channel #${channel.id} ${channel.name} auto-disabled: ${reason}`);
      // A catalog load that read the table before this write would route to the channel again until the next
      // sync: ask for a load that starts after it (rare, so the cost does not matter).
      void d.catalog.reload().catch((e) => d.log.warn(`routing reload failed: ${(e as Error).message}`));
    }
    return changed;
  }
}

type SettleCtx = {
  requestId: string;
  call: RelayCall;
  tokenId: number | null;
  limit: RateLimit | undefined;
  price: ResolvedPrice;
  tables: PriceTables;
  promptTokens: number;
  calls: number;
  started: number;
  channelIds: number[];
  upstreamModel?: string;
  /** A channel was skipped because it cannot serve the endpoint (for an accurate "no channel" error). */
  unservable?: boolean;
};

function storeUnavailable(err: unknown): RelayError {
  if (err instanceof RelayError) return err;
  return new RelayError({
    status: 503,
    message: 'the gateway cannot take requests right now; retry shortly',
    type: 'new_api_error',
    code: 'store_unavailable',
  });
}

function clientGone(): RelayError {
  return new RelayError({ status: 499, message: 'client closed the request', type: 'client_error' });
}

function withModel(
  body: Record<string, unknown> | FormData,
  model: string,
): Record<string, unknown> | FormData {
  if (body instanceof FormData) {
    const copy = new FormData();
    for (const [k, v] of body) copy.append(k, v);
    copy.set('model', model);
    return copy;
  }
  return { ...body, model };
}

/** Whether a call in `endpoint`'s format can reach this adaptor through a bridge (Claude/Gemini/Responses → chat, ...). */
function bridgeable(endpoint: Endpoint, adaptor: ProviderAdaptor): boolean {
  const bridge = BRIDGES[endpoint];
  return bridge !== undefined && adaptor.supports(bridge.target ?? 'chat');
}

/** An OpenAI embeddings answer with `usage` added from the (locally counted) usage billed, when it has none. */
function withEmbeddingUsage(text: string, u: Usage): string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return text;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json) || 'usage' in json) return text;
  return JSON.stringify({ ...json, usage: { prompt_tokens: u.promptTokens, total_tokens: u.promptTokens } });
}

/** Whether channels of this type take `endpoint`'s format as it is (per type where the adaptor says so). */
function servesNatively(adaptor: ProviderAdaptor, endpoint: Endpoint, channelType: number): boolean {
  return adaptor.supportsNative ? adaptor.supportsNative(endpoint, channelType) : adaptor.supports(endpoint);
}

/** How error messages name an endpoint: its OpenAI path for the client, or the native format it came in. */
function endpointName(endpoint: Endpoint): string {
  const native: Partial<Record<Endpoint, string>> = {
    messages: 'Claude /v1/messages',
    generate: 'Gemini generateContent',
    embed: 'Gemini embedContent',
  };
  return native[endpoint] ?? `/v1${ENDPOINT_PATHS[endpoint]}`;
}

/** The models-tab options (seed 000) as the adaptors' settings. */
export function providerSettings(options: OptionService): ProviderSettings {
  return {
    claude: {
      modelHeaders: options.get('claude.model_headers_settings') as Record<string, Record<string, string>>,
      defaultMaxTokens: options.get('claude.default_max_tokens'),
      thinkingAdapterEnabled: options.get('claude.thinking_adapter_enabled'),
      thinkingBudgetShare: options.get('claude.thinking_adapter_budget_tokens_percentage'),
    },
    gemini: {
      safetySettings: options.get('gemini.safety_settings'),
      versionSettings: options.get('gemini.version_settings'),
    },
  };
}

type Timer = ReturnType<typeof setTimeout>;

/** Node's timers can be re-armed in place and kept from holding the process open; Deno's are plain numbers. */
function refreshable(t: Timer): t is Timer & { refresh(): unknown; unref(): unknown } {
  return typeof (t as { refresh?: unknown }).refresh === 'function';
}

/**
 * A per-stream idle deadline. `arm()` starts the wait for one read, `disarm()` ends it and says whether the
 * deadline passed meanwhile; `onIdle` runs only when the deadline passes during a wait.
 */
function idleTimer(ms: number, onIdle: () => void) {
  let timer: Timer | undefined;
  let waiting = false;
  let fired = false;
  const fire = () => {
    if (!waiting) return;
    fired = true;
    onIdle();
  };
  return {
    arm(): void {
      waiting = true;
      fired = false;
      if (timer !== undefined && refreshable(timer)) timer.refresh();
      else {
        if (timer !== undefined) clearTimeout(timer);
        timer = setTimeout(fire, ms);
      }
    },
    disarm(): boolean {
      waiting = false;
      return fired;
    },
    stop(): void {
      waiting = false;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

/** The client's abort and the upstream deadline as one signal; `release()` drops the timer and the listener. */
function upstreamSignal(client: AbortSignal | undefined, ms: number) {
  const ac = new AbortController();
  let timedOut = false;
  const onClient = () => ac.abort(client?.reason);
  const timer: Timer = setTimeout(() => {
    timedOut = true;
    ac.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }, ms);
  // Like AbortSignal.timeout: the deadline alone does not keep the process alive.
  if (refreshable(timer)) timer.unref();
  if (client) {
    if (client.aborted) onClient();
    else client.addEventListener('abort', onClient, { once: true });
  }
  return {
    signal: ac.signal,
    timedOut: () => timedOut,
    /** A stream has started: from here the per-stream idle timer bounds the gaps, not a total deadline. */
    endDeadline: () => clearTimeout(timer),
    release: () => {
      clearTimeout(timer);
      client?.removeEventListener('abort', onClient);
    },
  };
}
