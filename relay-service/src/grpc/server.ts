/**
 * The relay's gRPC server (ARCHITECTURE.md §5): the standard health service and switchyard.relay.v1.RelayService.
 * Handlers are thin: convert the request, call core/, convert the result. Generated types stay in this folder.
 */
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
import { type RunningGrpcServer, startGrpcServer } from './lifecycle.ts';
import { unary } from './unary.ts';

export const RELAY_SERVICE_NAME = 'switchyard.relay.v1.RelayService';

export type RelayGrpcDeps = {
  log: Logger;
  runtimeInfo: () => RuntimeInfo;
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

export function createRelayService(deps: RelayGrpcDeps): RelayServiceServer {
  return {
    getRuntimeInfo: unary<GetRuntimeInfoRequest, GetRuntimeInfoResponse>(
      { log: deps.log, method: 'GetRuntimeInfo' },
      async () => toRuntimeInfoResponse(deps.runtimeInfo()),
    ),
  };
}

export function startRelayGrpc(opts: {
  host: string;
  port: number;
  deps: RelayGrpcDeps;
}): Promise<RunningRelayGrpc> {
  return startGrpcServer({
    host: opts.host,
    port: opts.port,
    services: [
      {
        name: RELAY_SERVICE_NAME,
        definition: RelayServiceService,
        implementation: createRelayService(opts.deps),
      },
    ],
  });
}
