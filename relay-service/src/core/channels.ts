/**
 * Channel operations the console asks for over gRPC (gateway-behaviour §2 "Channel tests", "Balance update"):
 * one synthetic request per test with the outcome applied (response time, auto-disable over the threshold or
 * on a disabling error, auto re-enable of auto-disabled channels), upstream model lists and balances.
 */
import type { OptionService } from '@switchyard/db/options/service.ts';
import { UsageEvent, UsageKind } from '@switchyard/proto/switchyard/billing/v1/billing.ts';
import type { Logger } from '../log.ts';
import { adaptorFor } from '../providers/registry.ts';
import {
  type ChannelConfig,
  type Endpoint,
  type ProviderAdaptor,
  type RelayInput,
  UpstreamFailure,
  type UpstreamRequest,
} from '../providers/types.ts';
import type { RelayStore } from '../store/types.ts';
import type { Catalog } from './catalog.ts';
import { buildUpstreamRequest, credentials } from './credentials.ts';
import { RelayError } from './errors.ts';
import { computeQuota, priceContent, priceDetails, priceTablesFrom, resolvePrice } from './pricing.ts';
import { channelConfig, newRequestId, type OutboxSink, type RelayCore } from './relay.ts';
import type { ChannelRecord, Repo } from './repo.ts';
import { countPromptTokens } from './tokenize.ts';
import { disableReason } from './upstream.ts';
import { fetchClient, type UpstreamClient, type UpstreamReply } from './upstream-client.ts';
import type { usage as makeUsage } from './usage.ts';
import { encodeUsagePayload } from './usage-payload.ts';

export type ChannelTestResult = {
  channelId: number;
  channelName: string;
  success: boolean;
  message: string;
  responseTimeMs: number;
  model: string;
  status: number;
};

export type ChannelBalanceResult = {
  channelId: number;
  success: boolean;
  message: string;
  balance: number;
  updatedAt: number;
};

export type ChannelOpsDeps = {
  repo: Repo;
  catalog: Catalog;
  options: OptionService;
  store: RelayStore;
  outbox: OutboxSink;
  core: RelayCore;
  log: Logger;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Pause between channels in "test all" (new-api's POLLING_INTERVAL). */
  pauseMs?: number;
  now?: () => number;
};

const ROOT_USER_ID = 1;
const UNTESTABLE_TYPES = new Set([2, 5, 36]); // Midjourney, Midjourney Plus, Suno
const EMBEDDING_HINT = /embed|bge-|m3e/i;

export function testModelFor(ch: ChannelRecord, requested: string): string {
  return requested || ch.testModel || ch.models[0] || 'gpt-4o-mini';
}

/** The synthetic request of a channel test: "hi" with a small token budget, or an embedding of "hello world". */
export function testInput(
  model: string,
  channelType: number,
): { endpoint: Endpoint; body: Record<string, unknown> } {
  if (EMBEDDING_HINT.test(model) || channelType === 44)
    return { endpoint: 'embeddings', body: { model, input: 'hello world' } };
  const body: Record<string, unknown> = { model, messages: [{ role: 'user', content: 'hi' }], stream: false };
  if (/^(o1|o3|o4)/.test(model)) body.max_completion_tokens = 10;
  else if (/gemini/i.test(model)) body.max_tokens = 300;
  else if (/thinking/i.test(model)) body.max_tokens = 50;
  else body.max_tokens = 10;
  return { endpoint: 'chat', body };
}

export class ChannelOps {
  readonly #d: ChannelOpsDeps;
  readonly #client: UpstreamClient;
  readonly #now: () => number;

  constructor(deps: ChannelOpsDeps) {
    this.#d = deps;
    // Through the relay's client shape, so WebSocket upstreams (Spark) are tested like HTTP ones.
    this.#client = fetchClient(deps.fetch ?? fetch);
    this.#now = deps.now ?? Date.now;
  }

  async #channel(id: number): Promise<ChannelRecord> {
    const ch = await this.#d.repo.channelById(id);
    if (!ch)
      throw new RelayError({ status: 404, message: `channel ${id} does not exist`, type: 'not_found' });
    return ch;
  }

  async test(channelId: number, requestedModel = ''): Promise<ChannelTestResult> {
    return this.#test(await this.#channel(channelId), requestedModel);
  }

  async #test(ch: ChannelRecord, requestedModel: string): Promise<ChannelTestResult> {
    const d = this.#d;
    const model = testModelFor(ch, requestedModel);
    const base = { channelId: ch.id, channelName: ch.name, model };
    const adaptor = adaptorFor(ch.type);
    if (UNTESTABLE_TYPES.has(ch.type) || !adaptor)
      return {
        ...base,
        success: false,
        message: 'this channel type cannot be tested',
        responseTimeMs: 0,
        status: ch.status,
      };
    const upstreamModel = ch.modelMapping[model] || model;
    const { endpoint, body } = testInput(upstreamModel, ch.type);
    const input: RelayInput = {
      endpoint,
      upstreamModel,
      stream: false,
      body,
      clientHeaders: new Headers(),
    };
    const started = this.#now();
    let success = false;
    let message = '';
    let disable: string | null = null;
    let usage = null;
    try {
      const cfg = await this.#withCredential(adaptor, channelConfig(ch));
      const req = await buildUpstreamRequest(adaptor, cfg, input);
      const res = await this.#send(req);
      const buf = await res.bytes();
      if (res.status === 200) {
        try {
          const parsed = adaptor.parseResponse(input, {
            status: res.status,
            headers: res.headers,
            body: buf,
          });
          usage = parsed.usage;
          success = usage !== null;
          if (!success) message = 'the upstream answered without usage';
        } catch (err) {
          if (!(err instanceof UpstreamFailure)) throw err;
          message = `status ${err.error.status}: ${err.error.message}`;
          disable = disableReason(err.error, ch.type, d.options.get('AutomaticDisableKeywords'));
        }
      } else {
        const err = adaptor.parseError({
          status: res.status,
          headers: res.headers,
          bodyText: new TextDecoder().decode(buf),
        });
        message = `status ${res.status}: ${err.message}`;
        disable = disableReason(err, ch.type, d.options.get('AutomaticDisableKeywords'));
      }
    } catch (err) {
      message =
        err instanceof RelayError
          ? err.message
          : `the upstream could not be reached: ${(err as Error).message}`;
    }
    const responseTimeMs = this.#now() - started;
    const nowS = Math.floor(this.#now() / 1000);
    await d.repo.recordChannelTest(ch.id, responseTimeMs, nowS);

    const thresholdMs = d.options.get('ChannelDisableThreshold') * 1000;
    if (success && thresholdMs > 0 && responseTimeMs > thresholdMs) {
      success = false;
      message = `response time ${(responseTimeMs / 1000).toFixed(2)} s is over the threshold of ${thresholdMs / 1000} s`;
      disable = message;
    }
    let status = ch.status;
    if (
      !success &&
      disable &&
      ch.status === 1 &&
      ch.autoBan &&
      d.options.get('AutomaticDisableChannelEnabled')
    ) {
      if (await d.core.disableChannel(ch, disable)) status = 3;
    } else if (
      success &&
      ch.status === 3 &&
      d.options.get('AutomaticEnableChannelEnabled') &&
      (await d.repo.setChannelStatus(ch.id, 1, { ...ch.otherInfo, status_reason: '', status_time: nowS }, 3))
    ) {
      d.catalog.markStatus(ch.id, 1);
      // As after an auto-disable: a load that read the table before the write must not undo it.
      void d.catalog.reload().catch((e) => d.log.warn(`routing reload failed: ${(e as Error).message}`));
      status = 1;
      d.log.info(`channel #${ch.id} ${ch.name} re-enabled after a passing test`);
    }
    // The upstream served it (usage reported), so it is logged even when too slow to pass.
    if (usage) await this.#logTest(ch, model, upstreamModel, endpoint, body, usage, responseTimeMs);
    return { ...base, success, message, responseTimeMs, status };
  }

  /** The "模型测试" consume log of a test (root user, computed quota, nothing deducted). */
  async #logTest(
    ch: ChannelRecord,
    model: string,
    upstreamModel: string,
    endpoint: Endpoint,
    body: Record<string, unknown>,
    u: NonNullable<ReturnType<typeof makeUsage>>,
    useTimeMs: number,
  ): Promise<void> {
    const d = this.#d;
    const tables = priceTablesFrom(d.options);
    // The test runs as root in root's group (gateway-behaviour §2 "Identity"), not in the channel's group.
    const root = await d.repo.userById(ROOT_USER_ID);
    const group = root?.group || 'default';
    const price =
      resolvePrice(tables, model, group in tables.groupRatio ? group : 'default') ??
      resolvePrice({ ...tables, selfUseMode: true }, model, 'default');
    if (!price) return;
    const quota = computeQuota(price, u, tables);
    const requestId = newRequestId();
    const now = this.#now();
    const event = UsageEvent.fromPartial({
      requestId,
      userId: ROOT_USER_ID,
      channelIds: [ch.id],
      modelName: model,
      upstreamModel,
      usage: {
        promptTokens: u.promptTokens || (await countPromptTokens(endpoint, body, model)),
        completionTokens: u.completionTokens,
      },
      quota,
      useTimeMs,
      group,
      otherJson: JSON.stringify(
        priceDetails(price, u, { frtMs: 0, channelIds: [ch.id], usageEstimated: false }),
      ),
      createdAtMs: now,
      tokenName: '模型测试',
      kind: UsageKind.USAGE_KIND_CHANNEL_TEST,
      content: priceContent(price),
    });
    const payload = encodeUsagePayload(event);
    try {
      const { entryId } = await d.store.settle({
        requestId,
        userId: ROOT_USER_ID,
        tokenId: null,
        amount: 0,
        success: true,
        payload,
        now,
      });
      d.outbox.enqueue({
        id: entryId,
        requestId,
        userId: ROOT_USER_ID,
        tokenId: null,
        amount: 0,
        payload,
        createdAt: now,
      });
    } catch (err) {
      d.log.warn(`channel test log of #${ch.id} not recorded: ${(err as Error).message}`);
    }
  }

  /** Tests channels one after another; `statuses` empty = enabled and auto-disabled ones. */
  async *testAll(
    statuses: readonly number[] = [],
  ): AsyncGenerator<ChannelTestResult & { index: number; total: number }> {
    const wanted = new Set(statuses.length ? statuses : [1, 3]);
    const channels = (await this.#d.repo.channels()).filter(
      (c) => wanted.has(c.status) && !UNTESTABLE_TYPES.has(c.type),
    );
    let index = 0;
    for (const ch of channels) {
      index++;
      const r = await this.#test(ch, '');
      yield { ...r, index, total: channels.length };
      if (this.#d.pauseMs && index < channels.length)
        await new Promise((res) => setTimeout(res, this.#d.pauseMs));
    }
  }

  async fetchModels(
    target:
      | { channelId: number }
      | { channel: Omit<ChannelConfig, 'id' | 'name' | 'setting' | 'paramOverride'> & { setting: string } },
  ): Promise<string[]> {
    let cfg: ChannelConfig;
    if ('channelId' in target) cfg = channelConfig(await this.#channel(target.channelId));
    else {
      let setting: Record<string, unknown> = {};
      try {
        setting = target.channel.setting ? JSON.parse(target.channel.setting) : {};
      } catch {
        setting = {};
      }
      cfg = {
        ...target.channel,
        id: 0,
        name: '',
        key: target.channel.key.split('\n')[0]?.trim() ?? '',
        baseUrl: target.channel.baseUrl.replace(/\/+$/, ''),
        setting,
        paramOverride: {},
      };
    }
    const adaptor = adaptorFor(cfg.type);
    if (!adaptor?.modelsRequest || !adaptor.parseModels)
      throw new RelayError({
        status: 400,
        message: 'this channel type has no model list',
        type: 'unsupported',
      });
    let res: UpstreamReply;
    let text: string;
    try {
      res = await this.#send(adaptor.modelsRequest(await this.#withCredential(adaptor, cfg)));
      text = await res.text();
    } catch (err) {
      // Unreachable upstream (wrong base URL, DNS, timeout): a refusal the admin can act on, not INTERNAL.
      throw new RelayError({
        status: 502,
        message: `the upstream could not be reached: ${(err as Error).message}`,
        type: 'upstream_error',
      });
    }
    if (res.status !== 200) {
      const err = adaptor.parseError({ status: res.status, headers: res.headers, bodyText: text });
      throw new RelayError({
        status: 502,
        message: `the upstream refused the model list: ${err.message}`,
        type: 'upstream_error',
      });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new RelayError({
        status: 502,
        message: 'the upstream model list is not JSON',
        type: 'upstream_error',
      });
    }
    return adaptor.parseModels(json);
  }

  async updateBalance(channelId: number): Promise<ChannelBalanceResult> {
    return this.#updateBalance(await this.#channel(channelId));
  }

  async #updateBalance(ch: ChannelRecord): Promise<ChannelBalanceResult> {
    const adaptor = adaptorFor(ch.type);
    const updatedAt = Math.floor(this.#now() / 1000);
    const fail = (message: string) => ({
      channelId: ch.id,
      success: false,
      message,
      balance: 0,
      updatedAt: 0,
    });
    // An adaptor answers an empty request list for the types of its family that have no balance API.
    if (!adaptor?.balanceRequests || !adaptor.parseBalance)
      return fail('balance is not supported for this channel type');
    let requests: UpstreamRequest[];
    try {
      requests = adaptor.balanceRequests(await this.#withCredential(adaptor, channelConfig(ch)));
    } catch (err) {
      return fail(`balance request failed: ${(err as Error).message}`);
    }
    if (requests.length === 0) return fail('balance is not supported for this channel type');
    try {
      const bodies: unknown[] = [];
      for (const req of requests) {
        const res = await this.#send(req);
        const text = await res.text();
        if (res.status !== 200) return fail(`the upstream answered ${res.status}`);
        bodies.push(JSON.parse(text));
      }
      const balance = adaptor.parseBalance(bodies);
      await this.#d.repo.recordChannelBalance(ch.id, balance, updatedAt);
      return { channelId: ch.id, success: true, message: '', balance, updatedAt };
    } catch (err) {
      return fail(`balance request failed: ${(err as Error).message}`);
    }
  }

  async *updateAllBalances(): AsyncGenerator<ChannelBalanceResult> {
    for (const ch of (await this.#d.repo.channels()).filter((c) => c.status === 1))
      yield this.#updateBalance(ch);
  }

  #send(req: UpstreamRequest): Promise<UpstreamReply> {
    return this.#client.send(req, AbortSignal.timeout(this.#d.timeoutMs ?? 30_000));
  }

  #withCredential(adaptor: ProviderAdaptor, cfg: ChannelConfig): Promise<ChannelConfig> {
    return credentials.resolve(adaptor, cfg, this.#client, AbortSignal.timeout(this.#d.timeoutMs ?? 30_000));
  }
}
