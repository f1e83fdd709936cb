/**
 * The console's gRPC server (ARCHITECTURE.md §5): the standard health service and
 * switchyard.billing.v1.BillingService. Billing itself lands with the relay pipeline; until then ReportUsage
 * answers UNIMPLEMENTED explicitly, so a relay that reports early keeps its events in the outbox and retries.
 */
import { status } from '@grpc/grpc-js';
import {
  type BillingServiceServer,
  BillingServiceService,
  type ReportUsageRequest,
  type ReportUsageResponse,
} from '@switchyard/proto/switchyard/billing/v1/billing.ts';
import { type RunningGrpcServer, startGrpcServer } from '@switchyard/relay/grpc/lifecycle.ts';
import { RpcError, unary } from '@switchyard/relay/grpc/unary.ts';
import { createLogger, type Logger } from '@switchyard/relay/log.ts';

export const BILLING_SERVICE_NAME = 'switchyard.billing.v1.BillingService';

export type RunningConsoleGrpc = RunningGrpcServer;

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

export function startConsoleGrpc(opts: {
  port: number;
  host: string;
  log?: Logger;
}): Promise<RunningConsoleGrpc> {
  const log = opts.log ?? createLogger('info', '[console]');
  return startGrpcServer({
    host: opts.host,
    port: opts.port,
    services: [
      {
        name: BILLING_SERVICE_NAME,
        definition: BillingServiceService,
        implementation: createBillingService(log),
      },
    ],
  });
}
