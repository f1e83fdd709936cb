/**
 * Typed client of the relay's gRPC API for the console. Every call has a deadline; results are the console's
 * own types and failures are RelayError, so generated protobuf and grpc-js types stop in this folder.
 */
import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import {
  type ChannelBalance,
  type ChannelTestResult,
  type GetRuntimeInfoResponse,
  RelayServiceClient,
  Runtime,
  StoreMode,
} from '@switchyard/proto/switchyard/relay/v1/relay.ts';
import { clientSecurity, type GrpcSecurity } from '@switchyard/relay/grpc/security.ts';
import { type CheckedStatus, createHealthChecker } from './health.server.ts';

export const RELAY_SERVICE_NAME = 'switchyard.relay.v1.RelayService';

export type RelayRuntimeInfo = {
  version: string;
  /** Unix seconds. */
  startedAt: number;
  runtime: 'node' | 'deno' | 'unknown';
  runtimeVersion: string;
  storeMode: 'redis' | 'memory' | 'unknown';
  instanceId: string;
};

export type RelayHealth = CheckedStatus;

/** A channel type the relay serves, and what serves it (adaptor id, or "midjourney" / "suno"). */
export type ServedChannelType = { type: number; servedBy: string };

export type CallOptions = { timeoutMs?: number; signal?: AbortSignal };

export type RelayErrorCode =
  | 'unavailable'
  | 'deadline_exceeded'
  | 'cancelled'
  | 'unimplemented'
  | 'invalid_argument'
  | 'unauthenticated'
  | 'permission_denied'
  | 'not_found'
  | 'resource_exhausted'
  /** The relay answered, but the upstream (model provider) failed; the message says why. */
  | 'upstream_failed'
  | 'failed';

export class RelayError extends Error {
  override name = 'RelayError';
  readonly code: RelayErrorCode;

  constructor(code: RelayErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export type ChannelTest = {
  channelId: number;
  channelName: string;
  success: boolean;
  message: string;
  responseTimeMs: number;
  model: string;
  status: number;
};

export type ChannelTestProgress = ChannelTest & { index: number; total: number };

export type ChannelBalanceUpdate = {
  channelId: number;
  success: boolean;
  message: string;
  /** USD */
  balance: number;
  /** unix seconds */
  updatedAt: number;
};

/** Channel form values for fetching models before the channel is saved. */
export type UnsavedChannel = {
  type: number;
  key: string;
  baseUrl: string;
  other: string;
  setting: string;
  openaiOrganization: string;
};

/** Who a chat call is for: a user's `sk-` token, or the console acting for a user (playground). */
export type ChatCaller = { tokenKey: string } | { userId: number; group: string };

export type RelayClient = {
  readonly address: string;
  getRuntimeInfo(opts?: CallOptions): Promise<RelayRuntimeInfo>;
  /** The channel types the relay serves (its adaptors and task services), ascending by type id. */
  listChannelTypes(opts?: CallOptions): Promise<ServedChannelType[]>;
  testChannel(channelId: number, model: string, opts?: CallOptions): Promise<ChannelTest>;
  testAllChannels(statuses: number[], opts?: CallOptions): AsyncIterable<ChannelTestProgress>;
  fetchUpstreamModels(target: { channelId: number } | UnsavedChannel, opts?: CallOptions): Promise<string[]>;
  updateChannelBalance(channelId: number, opts?: CallOptions): Promise<ChannelBalanceUpdate>;
  updateAllChannelBalances(opts?: CallOptions): AsyncIterable<ChannelBalanceUpdate>;
  /** Non-stream chat completion; resolves with the OpenAI response JSON text. */
  chatCompletion(caller: ChatCaller, bodyJson: string, clientIp: string, opts?: CallOptions): Promise<string>;
  /** Streamed chat completion: one OpenAI chunk JSON text per item. */
  streamChatCompletion(
    caller: ChatCaller,
    bodyJson: string,
    clientIp: string,
    opts?: CallOptions,
  ): AsyncIterable<string>;
  /** Best effort: the relay drops cached balances/tokens so a console change applies at once. */
  invalidateAccounts(
    change: { userIds?: number[]; tokenIds?: number[]; channels?: boolean },
    opts?: CallOptions,
  ): Promise<void>;
  /** The relay's gRPC health for the whole server. */
  health(opts?: CallOptions): Promise<RelayHealth>;
  close(): void;
};

const runtimes: Partial<Record<Runtime, RelayRuntimeInfo['runtime']>> = {
  [Runtime.RUNTIME_NODE]: 'node',
  [Runtime.RUNTIME_DENO]: 'deno',
};
const storeModes: Partial<Record<StoreMode, RelayRuntimeInfo['storeMode']>> = {
  [StoreMode.STORE_MODE_REDIS]: 'redis',
  [StoreMode.STORE_MODE_MEMORY]: 'memory',
};

function toRuntimeInfo(res: GetRuntimeInfoResponse): RelayRuntimeInfo {
  return {
    version: res.version,
    startedAt: res.startedAt,
    runtime: runtimes[res.runtime] ?? 'unknown',
    runtimeVersion: res.runtimeVersion,
    storeMode: storeModes[res.storeMode] ?? 'unknown',
    instanceId: res.instanceId,
  };
}

function toRelayError(err: ServiceError, address: string): RelayError {
  const detail = err.details || err.message;
  switch (err.code) {
    case status.UNAVAILABLE:
      return new RelayError('unavailable', `relay at ${address} is unavailable: ${detail}`);
    case status.DEADLINE_EXCEEDED:
      return new RelayError('deadline_exceeded', `relay at ${address} did not answer in time`);
    case status.CANCELLED:
      return new RelayError('cancelled', 'relay call cancelled');
    case status.UNIMPLEMENTED:
      return new RelayError('unimplemented', `relay at ${address} does not implement this call: ${detail}`);
    // The relay's own refusals carry a message meant for the user.
    case status.INVALID_ARGUMENT:
      return new RelayError('invalid_argument', detail);
    case status.UNAUTHENTICATED:
      return new RelayError('unauthenticated', detail);
    case status.PERMISSION_DENIED:
      return new RelayError('permission_denied', detail);
    case status.NOT_FOUND:
      return new RelayError('not_found', detail);
    case status.RESOURCE_EXHAUSTED:
      return new RelayError('resource_exhausted', detail);
    case status.UNKNOWN:
      return new RelayError('upstream_failed', detail);
    default:
      return new RelayError('failed', `relay call failed (${status[err.code] ?? err.code}): ${detail}`);
  }
}

const toTest = (r: ChannelTestResult | undefined): ChannelTest => ({
  channelId: r?.channelId ?? 0,
  channelName: r?.channelName ?? '',
  success: r?.success ?? false,
  message: r?.message ?? '',
  responseTimeMs: r?.responseTimeMs ?? 0,
  model: r?.model ?? '',
  status: r?.status ?? 0,
});

const toBalance = (b: ChannelBalance | undefined): ChannelBalanceUpdate => ({
  channelId: b?.channelId ?? 0,
  success: b?.success ?? false,
  message: b?.message ?? '',
  balance: b?.balance ?? 0,
  updatedAt: b?.updatedAt ?? 0,
});

const toChatCall = (caller: ChatCaller, bodyJson: string, clientIp: string) => ({
  caller:
    'tokenKey' in caller
      ? { $case: 'tokenKey' as const, tokenKey: caller.tokenKey }
      : { $case: 'service' as const, service: { userId: caller.userId, group: caller.group } },
  bodyJson,
  clientIp,
});

/** Reads a server stream as an async iterable, mapping gRPC failures to RelayError. */
async function* iterate<T, R>(
  stream: import('@grpc/grpc-js').ClientReadableStream<T>,
  map: (item: T) => R,
  address: string,
  signal?: AbortSignal,
): AsyncGenerator<R> {
  const onAbort = () => stream.cancel();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const item of stream as AsyncIterable<T>) yield map(item);
  } catch (err) {
    throw toRelayError(err as ServiceError, address);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    stream.cancel();
  }
}

export type RelayClientOptions = {
  timeoutMs?: number;
  /** The console's service secret (INTERNAL_API_SECRET), added to every call by the client's interceptor. */
  internalSecret: string;
  /** Mutual TLS (GRPC_TLS_CA/CERT/KEY), when the deployment uses it (ADR 034). */
  tls?: GrpcSecurity['tls'];
};

/** `address` is `host:port` (RELAY_GRPC_URL). The connection is made lazily, so the relay may start later. */
export function createRelayClient(address: string, defaults: RelayClientOptions): RelayClient {
  const { credentials, options } = clientSecurity({
    secret: defaults.internalSecret,
    tls: defaults.tls ?? null,
  });
  const client = new RelayServiceClient(address, credentials, options);
  const healthChecker = createHealthChecker(address, credentials);
  const deadline = (opts?: CallOptions, fallbackMs = defaults.timeoutMs ?? 3_000) =>
    Date.now() + (opts?.timeoutMs ?? fallbackMs);
  const metadata = () => new Metadata();
  /** One promisified unary call with deadline, cancellation and error mapping. */
  function call<Req, Res>(
    method: (
      req: Req,
      md: Metadata,
      o: { deadline: number },
      cb: (err: ServiceError | null, res: Res) => void,
    ) => { cancel(): void },
    req: Req,
    opts: CallOptions | undefined,
    fallbackMs: number,
  ): Promise<Res> {
    return new Promise((resolve, reject) => {
      if (opts?.signal?.aborted) return reject(new RelayError('cancelled', 'relay call cancelled'));
      const c = method.call(client, req, metadata(), { deadline: deadline(opts, fallbackMs) }, (err, res) =>
        err ? reject(toRelayError(err, address)) : resolve(res),
      );
      opts?.signal?.addEventListener('abort', () => c.cancel(), { once: true });
    });
  }

  return {
    address,
    getRuntimeInfo(opts) {
      return new Promise((resolve, reject) => {
        if (opts?.signal?.aborted) return reject(new RelayError('cancelled', 'relay call cancelled'));
        const call = client.getRuntimeInfo({}, new Metadata(), { deadline: deadline(opts) }, (err, res) =>
          err ? reject(toRelayError(err, address)) : resolve(toRuntimeInfo(res)),
        );
        opts?.signal?.addEventListener('abort', () => call.cancel(), { once: true });
      });
    },
    async listChannelTypes(opts) {
      const res = await call(client.listChannelTypes, {}, opts, defaults.timeoutMs ?? 3_000);
      return res.types.map((t) => ({ type: t.type, servedBy: t.servedBy }));
    },
    async testChannel(channelId, model, opts) {
      const res = await call(client.testChannel, { channelId, model }, opts, 120_000);
      return toTest(res.result);
    },
    testAllChannels(statuses, opts) {
      const stream = client.testAllChannels({ statuses }, metadata(), {
        deadline: deadline(opts, 3_600_000),
      });
      return iterate(
        stream,
        (r) => ({ ...toTest(r.result), index: r.index, total: r.total }),
        address,
        opts?.signal,
      );
    },
    async fetchUpstreamModels(target, opts) {
      const req =
        'channelId' in target
          ? { target: { $case: 'channelId' as const, channelId: target.channelId } }
          : { target: { $case: 'channel' as const, channel: target } };
      const res = await call(client.fetchUpstreamModels, req, opts, 60_000);
      return res.models;
    },
    async updateChannelBalance(channelId, opts) {
      const res = await call(client.updateChannelBalance, { channelId }, opts, 60_000);
      return toBalance(res.balance);
    },
    updateAllChannelBalances(opts) {
      const stream = client.updateAllChannelBalances({}, metadata(), { deadline: deadline(opts, 3_600_000) });
      return iterate(stream, (r) => toBalance(r.balance), address, opts?.signal);
    },
    async chatCompletion(caller, bodyJson, clientIp, opts) {
      const res = await call(
        client.chatCompletion,
        { call: toChatCall(caller, bodyJson, clientIp) },
        opts,
        600_000,
      );
      return res.bodyJson;
    },
    streamChatCompletion(caller, bodyJson, clientIp, opts) {
      const stream = client.streamChatCompletion(
        { call: toChatCall(caller, bodyJson, clientIp) },
        metadata(),
        { deadline: deadline(opts, 600_000) },
      );
      return iterate(stream, (r) => r.chunkJson, address, opts?.signal);
    },
    async invalidateAccounts(change, opts) {
      await call(
        client.invalidateAccounts,
        {
          userIds: change.userIds ?? [],
          tokenIds: change.tokenIds ?? [],
          channels: change.channels ?? false,
        },
        opts,
        3_000,
      );
    },
    async health(opts) {
      try {
        return await healthChecker.check({ timeoutMs: opts?.timeoutMs ?? defaults.timeoutMs ?? 3_000 });
      } catch (err) {
        throw toRelayError(err as ServiceError, address);
      }
    },
    close() {
      client.close();
      healthChecker.close();
    },
  };
}
