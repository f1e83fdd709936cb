/**
 * The relay's gRPC server (ARCHITECTURE.md §5): the standard health service and switchyard.relay.v1.RelayService.
 * Handlers are thin: convert the request, call core/, convert the result. Generated types stay in this folder.
 */
import { status } from '@grpc/grpc-js';
import {
  type ChannelBalance,
  type ChannelTestResult as ChannelTestResultMessage,
  type ChatCall,
  type ChatCompletionRequest,
  type ChatCompletionResponse,
  type FetchUpstreamModelsRequest,
  type FetchUpstreamModelsResponse,
  type GetRuntimeInfoRequest,
  type GetRuntimeInfoResponse,
  type InvalidateAccountsRequest,
  type InvalidateAccountsResponse,
  type ListChannelTypesRequest,
  type ListChannelTypesResponse,
  type RelayServiceServer,
  RelayServiceService,
  Runtime,
  StoreMode,
  type StreamChatCompletionRequest,
  type StreamChatCompletionResponse,
  type TestAllChannelsRequest,
  type TestAllChannelsResponse,
  type TestChannelRequest,
  type TestChannelResponse,
  type UpdateAllChannelBalancesRequest,
  type UpdateAllChannelBalancesResponse,
  type UpdateChannelBalanceRequest,
  type UpdateChannelBalanceResponse,
} from '@switchyard/proto/switchyard/relay/v1/relay.ts';
import { type Caller, checkToken, parseKey } from '../core/auth.ts';
import type { ChannelBalanceResult, ChannelTestResult } from '../core/channels.ts';
import type { RelayPipeline } from '../core/pipeline.ts';
import type { RelayCall } from '../core/relay.ts';
import type { RuntimeInfo } from '../core/runtime-info.ts';
import type { Logger } from '../log.ts';
import { ADAPTORS } from '../providers/registry.ts';
import { MIDJOURNEY_CHANNEL_TYPES } from '../tasks/midjourney/service.ts';
import { SUNO_CHANNEL_TYPE } from '../tasks/suno/service.ts';
import { type RunningGrpcServer, startGrpcServer } from './lifecycle.ts';
import type { GrpcSecurity } from './security.ts';
import { serverStream } from './stream.ts';
import { RpcError, unary } from './unary.ts';

export const RELAY_SERVICE_NAME = 'switchyard.relay.v1.RelayService';

export type RelayGrpcDeps = {
  log: Logger;
  runtimeInfo: () => RuntimeInfo;
  /** null when the relay runs without a database: every call but GetRuntimeInfo is FAILED_PRECONDITION. */
  pipeline: RelayPipeline | null;
};

export type RunningRelayGrpc = RunningGrpcServer;

export function toRuntimeInfoResponse(info: RuntimeInfo): GetRuntimeInfoResponse {
  return {
    version: info.version,
    startedAt: info.startedAt,
    runtime: info.runtime === 'deno' ? Runtime.RUNTIME_DENO : Runtime.RUNTIME_NODE,
    runtimeVersion: info.runtimeVersion,
    storeMode: info.storeMode === 'redis' ? StoreMode.STORE_MODE_REDIS : StoreMode.STORE_MODE_MEMORY,
    instanceId: info.instanceId,
  };
}

/**
 * The channel types this relay serves: every provider adaptor's types (providers/registry.ts) and the task
 * services' (Midjourney 2 and 5, Suno 36), ascending. A new adaptor in the registry appears here, and so in the
 * console's channel form, with nothing else to change.
 */
export function servedChannelTypes(): ListChannelTypesResponse['types'] {
  const served = new Map<number, string>();
  for (const adaptor of ADAPTORS) for (const type of adaptor.channelTypes) served.set(type, adaptor.id);
  for (const type of MIDJOURNEY_CHANNEL_TYPES) served.set(type, 'midjourney');
  served.set(SUNO_CHANNEL_TYPE, 'suno');
  return [...served].sort((a, b) => a[0] - b[0]).map(([type, servedBy]) => ({ type, servedBy }));
}

const toTestResult = (r: ChannelTestResult): ChannelTestResultMessage => ({
  channelId: r.channelId,
  channelName: r.channelName,
  success: r.success,
  message: r.message,
  responseTimeMs: r.responseTimeMs,
  model: r.model,
  status: r.status,
});

const toBalance = (r: ChannelBalanceResult): ChannelBalance => ({ ...r });

export function createRelayService(deps: RelayGrpcDeps): RelayServiceServer {
  const { log } = deps;
  const need = (): RelayPipeline => {
    if (!deps.pipeline) throw new RpcError(status.FAILED_PRECONDITION, 'the relay runs without a database');
    return deps.pipeline;
  };
  // Every call reaching a handler was made by the console: the server's interceptor (security.ts) refused any
  // other caller before. A chat call then names whom it is for: a user's own sk- key, or a user id (playground).
  async function callerOf(p: RelayPipeline, call: ChatCall | undefined): Promise<Caller> {
    const c = call?.caller;
    if (!c) throw new RpcError(status.INVALID_ARGUMENT, 'a token_key or service caller is required');
    if (c.$case === 'tokenKey') {
      const { key, channelId } = parseKey(c.tokenKey);
      const entry = await p.accounts.lookup(key);
      if (!entry) throw new RpcError(status.UNAUTHENTICATED, 'invalid API key');
      return checkToken(
        entry,
        { ip: call?.clientIp ?? '', now: Date.now(), pinnedChannelId: channelId, model: null },
        { usableGroups: p.options.get('UserUsableGroups'), groupRatio: p.options.get('GroupRatio') },
      );
    }
    const user = await p.repo.userById(c.service.userId);
    if (!user || user.status !== 1)
      throw new RpcError(status.PERMISSION_DENIED, 'the user does not exist or is banned');
    const group = c.service.group || user.group;
    const usable = p.options.get('UserUsableGroups');
    if (group !== user.group && !(group in usable))
      throw new RpcError(status.PERMISSION_DENIED, `group ${group} is not usable by this user`);
    // As checkToken does for keys: pricing an unrated group would fail later as an internal error.
    if (!(group in p.options.get('GroupRatio')))
      throw new RpcError(status.PERMISSION_DENIED, `group ${group} has no ratio set`);
    return { token: null, user, group, pinnedChannelId: null, tokenName: `playground-${group}` };
  }

  async function chatCall(
    p: RelayPipeline,
    call: ChatCall | undefined,
    stream: boolean,
    signal: AbortSignal,
  ): Promise<RelayCall> {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(call?.bodyJson ?? '');
    } catch {
      throw new RpcError(status.INVALID_ARGUMENT, 'body_json is not valid JSON');
    }
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new RpcError(status.INVALID_ARGUMENT, 'body_json must be a JSON object');
    const model = typeof body.model === 'string' ? body.model : '';
    if (!model) throw new RpcError(status.INVALID_ARGUMENT, 'model is required');
    const caller = await callerOf(p, call);
    if (caller.token?.modelLimitsEnabled && !caller.token.modelLimits.includes(model))
      throw new RpcError(status.PERMISSION_DENIED, `this token may not use model ${model}`);
    return {
      endpoint: 'chat',
      model,
      stream,
      body: { ...body, stream },
      caller,
      clientHeaders: new Headers(),
      clientIp: call?.clientIp ?? '',
      signal,
    };
  }

  return {
    getRuntimeInfo: unary<GetRuntimeInfoRequest, GetRuntimeInfoResponse>(
      { log, method: 'GetRuntimeInfo' },
      async () => toRuntimeInfoResponse(deps.runtimeInfo()),
    ),
    listChannelTypes: unary<ListChannelTypesRequest, ListChannelTypesResponse>(
      { log, method: 'ListChannelTypes' },
      async () => ({ types: servedChannelTypes() }),
    ),
    testChannel: unary<TestChannelRequest, TestChannelResponse>(
      { log, method: 'TestChannel', defaultTimeoutMs: 120_000 },
      async (req) => {
        return { result: toTestResult(await need().channels.test(req.channelId, req.model)) };
      },
    ),
    testAllChannels: serverStream<TestAllChannelsRequest, TestAllChannelsResponse>(
      { log, method: 'TestAllChannels' },
      async function* (req) {
        for await (const r of need().channels.testAll(req.statuses)) {
          yield { result: toTestResult(r), index: r.index, total: r.total };
        }
      },
    ),
    fetchUpstreamModels: unary<FetchUpstreamModelsRequest, FetchUpstreamModelsResponse>(
      { log, method: 'FetchUpstreamModels', defaultTimeoutMs: 60_000 },
      async (req) => {
        const t = req.target;
        if (!t) throw new RpcError(status.INVALID_ARGUMENT, 'a channel_id or channel is required');
        const models =
          t.$case === 'channelId'
            ? await need().channels.fetchModels({ channelId: t.channelId })
            : await need().channels.fetchModels({
                channel: {
                  type: t.channel.type,
                  key: t.channel.key,
                  baseUrl: t.channel.baseUrl,
                  other: t.channel.other,
                  openaiOrganization: t.channel.openaiOrganization || null,
                  setting: t.channel.setting,
                },
              });
        return { models };
      },
    ),
    updateChannelBalance: unary<UpdateChannelBalanceRequest, UpdateChannelBalanceResponse>(
      { log, method: 'UpdateChannelBalance', defaultTimeoutMs: 60_000 },
      async (req) => {
        return { balance: toBalance(await need().channels.updateBalance(req.channelId)) };
      },
    ),
    updateAllChannelBalances: serverStream<UpdateAllChannelBalancesRequest, UpdateAllChannelBalancesResponse>(
      { log, method: 'UpdateAllChannelBalances' },
      async function* (_req) {
        for await (const r of need().channels.updateAllBalances()) yield { balance: toBalance(r) };
      },
    ),
    chatCompletion: unary<ChatCompletionRequest, ChatCompletionResponse>(
      { log, method: 'ChatCompletion', defaultTimeoutMs: 600_000 },
      async (req, ctx) => {
        const p = need();
        const result = await p.core.relay(await chatCall(p, req.call, false, ctx.signal));
        const text = await new Response(result.body).text();
        return { bodyJson: text, requestId: result.requestId };
      },
    ),
    streamChatCompletion: serverStream<StreamChatCompletionRequest, StreamChatCompletionResponse>(
      { log, method: 'StreamChatCompletion' },
      async function* (req, ctx) {
        const p = need();
        const result = await p.core.relay(await chatCall(p, req.call, true, ctx.signal));
        const body = result.body instanceof ReadableStream ? result.body : new Response(result.body).body;
        if (!body) return;
        const reader = body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            buffer += value;
            let nl = buffer.indexOf('\n');
            while (nl >= 0) {
              const line = buffer.slice(0, nl).trim();
              buffer = buffer.slice(nl + 1);
              if (line.startsWith('data:')) {
                const data = line.slice(5).trim();
                if (data && data !== '[DONE]') yield { chunkJson: data, requestId: result.requestId };
              }
              nl = buffer.indexOf('\n');
            }
          }
        } finally {
          // Cancelling bills what was produced (core settles on cancel).
          await reader.cancel().catch(() => {});
        }
      },
    ),
    invalidateAccounts: unary<InvalidateAccountsRequest, InvalidateAccountsResponse>(
      { log, method: 'InvalidateAccounts' },
      async (req) => {
        await need().invalidate(req.userIds, req.tokenIds, req.channels);
        return {};
      },
    ),
  };
}

export function startRelayGrpc(opts: {
  host: string;
  port: number;
  deps: RelayGrpcDeps;
  /** The console's service secret (and mutual-TLS files): every RelayService call must carry it. */
  security: GrpcSecurity;
}): Promise<RunningRelayGrpc> {
  return startGrpcServer({
    host: opts.host,
    port: opts.port,
    security: opts.security,
    services: [
      {
        name: RELAY_SERVICE_NAME,
        definition: RelayServiceService,
        implementation: createRelayService(opts.deps),
      },
    ],
  });
}
