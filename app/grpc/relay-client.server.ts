/**
 * Typed client of the relay's gRPC API for the console. Every call has a deadline; results are the console's
 * own types and failures are RelayError, so generated protobuf and grpc-js types stop in this folder.
 */
import { credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import {
  type GetRuntimeInfoResponse,
  RelayServiceClient,
  Runtime,
  StoreMode,
} from '@switchyard/proto/switchyard/relay/v1/relay.ts';
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

export type CallOptions = { timeoutMs?: number; signal?: AbortSignal };

export type RelayErrorCode = 'unavailable' | 'deadline_exceeded' | 'cancelled' | 'unimplemented' | 'failed';

export class RelayError extends Error {
  override name = 'RelayError';
  readonly code: RelayErrorCode;

  constructor(code: RelayErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export type RelayClient = {
  readonly address: string;
  getRuntimeInfo(opts?: CallOptions): Promise<RelayRuntimeInfo>;
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
    default:
      return new RelayError('failed', `relay call failed (${status[err.code] ?? err.code}): ${detail}`);
  }
}

/** `address` is `host:port` (RELAY_GRPC_URL). The connection is made lazily, so the relay may start later. */
export function createRelayClient(address: string, defaults: { timeoutMs?: number } = {}): RelayClient {
  const client = new RelayServiceClient(address, credentials.createInsecure());
  const healthChecker = createHealthChecker(address);
  const deadline = (opts?: CallOptions) => Date.now() + (opts?.timeoutMs ?? defaults.timeoutMs ?? 3_000);

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
