/**
 * The console's gRPC server (ARCHITECTURE.md §5): the standard health service and
 * switchyard.billing.v1.BillingService. Billing itself lands with the relay pipeline; until then ReportUsage
 * answers UNIMPLEMENTED explicitly, so a relay that reports early keeps its events in the outbox and retries.
 */
import { Server, status } from '@grpc/grpc-js';
import {
  type BillingServiceServer,
  BillingServiceService,
  type ReportUsageRequest,
  type ReportUsageResponse,
} from '@switchyard/proto/switchyard/billing/v1/billing.ts';
import { bindInsecure, grpcAddress, shutdownGracefully } from '@switchyard/relay/grpc/lifecycle.ts';
import { RpcError, unary } from '@switchyard/relay/grpc/unary.ts';
import { createLogger, type Logger } from '@switchyard/relay/log.ts';
import { addHealthService } from './health.server.ts';

export const BILLING_SERVICE_NAME = 'switchyard.billing.v1.BillingService';

export type RunningConsoleGrpc = {
  /** `host:port` to dial. */
  address: string;
  port: number;
  /** Health NOT_SERVING, stop accepting, drain in-flight calls up to `drainMs`. Idempotent. */
  stop(drainMs?: number): Promise<void>;
};

function createBillingService(log: Logger): BillingServiceServer {
  return {
    reportUsage: unary<ReportUsageRequest, ReportUsageResponse>({ log, method: 'ReportUsage' }, async () => {
      throw new RpcError(
        status.UNIMPLEMENTED,
        'billing is not enabled yet: ReportUsage lands with the relay pipeline; keep the events and retry later',
      );
    }),
  };
}

export async function startConsoleGrpc(opts: {
  port: number;
  host: string;
  log?: Logger;
}): Promise<RunningConsoleGrpc> {
  const log = opts.log ?? createLogger('info', '[console]');
  const server = new Server();
  const health = addHealthService(server, [BILLING_SERVICE_NAME]);
  server.addService(BillingServiceService, createBillingService(log));
  const port = await bindInsecure(server, opts.host, opts.port);
  let stopping: Promise<void> | undefined;
  return {
    address: grpcAddress(opts.host, port),
    port,
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
