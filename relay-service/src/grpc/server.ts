/**
 * The relay's gRPC server (ARCHITECTURE.md §5): the standard health service and switchyard.relay.v1.RelayService.
 * Handlers are thin: convert the request, call core/, convert the result. Generated types stay in this folder.
 */
import { Server } from '@grpc/grpc-js';
import {
  type GetRuntimeInfoRequest,
  type GetRuntimeInfoResponse,
  type RelayServiceServer,
  RelayServiceService,
  Runtime,
  StoreMode,
} from '@switchyard/proto/switchyard/relay/v1/relay.ts';
import type { RuntimeInfo } from '../core/runtime-info.ts';
import type { Logger } from '../log.ts';
import { Health } from './health.ts';
import { bindInsecure, grpcAddress, shutdownGracefully } from './lifecycle.ts';
import { unary } from './unary.ts';

export const RELAY_SERVICE_NAME = 'switchyard.relay.v1.RelayService';

export type RelayGrpcDeps = {
  log: Logger;
  runtimeInfo: () => RuntimeInfo;
};

export type RunningRelayGrpc = {
  /** `host:port` to dial. */
  address: string;
  port: number;
  health: Health;
  /** Health NOT_SERVING, stop accepting, drain in-flight calls up to `drainMs`, then cancel the rest. */
  stop(drainMs?: number): Promise<void>;
};

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

export function createRelayService(deps: RelayGrpcDeps): RelayServiceServer {
  return {
    getRuntimeInfo: unary<GetRuntimeInfoRequest, GetRuntimeInfoResponse>(
      { log: deps.log, method: 'GetRuntimeInfo' },
      async () => toRuntimeInfoResponse(deps.runtimeInfo()),
    ),
  };
}

export async function startRelayGrpc(opts: {
  host: string;
  port: number;
  deps: RelayGrpcDeps;
}): Promise<RunningRelayGrpc> {
  const server = new Server();
  const health = new Health({ '': 'SERVING', [RELAY_SERVICE_NAME]: 'SERVING' });
  health.addTo(server);
  server.addService(RelayServiceService, createRelayService(opts.deps));
  const port = await bindInsecure(server, opts.host, opts.port);
  let stopping: Promise<void> | undefined;
  return {
    address: grpcAddress(opts.host, port),
    port,
    health,
    stop(drainMs = 10_000) {
      stopping ??= (async () => {
        health.setAllNotServing();
        health.endWatches();
        await shutdownGracefully(server, drainMs);
      })();
      return stopping;
    },
  };
}
