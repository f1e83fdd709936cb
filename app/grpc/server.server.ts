/**
 * The console's gRPC server (ARCHITECTURE.md §5): the standard health service and
 * switchyard.billing.v1.BillingService, whose ReportUsage bills the relay's settled usage
 * (app/domain/billing/billing.server.ts). Only the relay may call it: the shared service secret on every call,
 * checked by the server's interceptor before any handler (ADR 034).
 */
import { status } from '@grpc/grpc-js';
import {
  type BillingServiceServer,
  BillingServiceService,
  type ReportUsageRequest,
  type ReportUsageResponse,
  type UsageAck,
  UsageAckStatus,
} from '@switchyard/proto/switchyard/billing/v1/billing.ts';
import { type RunningGrpcServer, startGrpcServer } from '@switchyard/relay/grpc/lifecycle.ts';
import type { GrpcSecurity } from '@switchyard/relay/grpc/security.ts';
import { RpcError, unary } from '@switchyard/relay/grpc/unary.ts';
import { createLogger, type Logger } from '@switchyard/relay/log.ts';
import {
  type BillingDeps,
  type UsageAckStatus as DomainAckStatus,
  MAX_USAGE_BATCH,
  reportUsage,
} from '#app/domain/billing/billing.server.ts';

export const BILLING_SERVICE_NAME = 'switchyard.billing.v1.BillingService';

export type RunningConsoleGrpc = RunningGrpcServer;

const ACK_STATUS: Record<DomainAckStatus, UsageAckStatus> = {
  accepted: UsageAckStatus.USAGE_ACK_STATUS_ACCEPTED,
  duplicate: UsageAckStatus.USAGE_ACK_STATUS_DUPLICATE,
  rejected: UsageAckStatus.USAGE_ACK_STATUS_REJECTED,
};

function createBillingService(log: Logger, billing: BillingDeps): BillingServiceServer {
  return {
    reportUsage: unary<ReportUsageRequest, ReportUsageResponse>(
      { log, method: 'ReportUsage' },
      async (request) => {
        const events = request.events ?? [];
        if (events.length > MAX_USAGE_BATCH) {
          throw new RpcError(
            status.INVALID_ARGUMENT,
            `a batch carries at most ${MAX_USAGE_BATCH} events (got ${events.length}); split it`,
          );
        }
        const acks = await reportUsage(billing, events);
        return {
          acks: acks.map(
            (a): UsageAck => ({ requestId: a.requestId, status: ACK_STATUS[a.status], message: a.message }),
          ),
        };
      },
    ),
  };
}

export function startConsoleGrpc(opts: {
  port: number;
  host: string;
  /** The relay's service secret (and mutual-TLS files): every Billing call must carry it (ADR 034). */
  security: GrpcSecurity;
  /** What ReportUsage bills with: an EntityManager factory and the option reader (LogConsumeEnabled, ...). */
  billing: BillingDeps;
  log?: Logger;
}): Promise<RunningConsoleGrpc> {
  const log = opts.log ?? createLogger('info', '[console]');
  return startGrpcServer({
    host: opts.host,
    port: opts.port,
    security: opts.security,
    services: [
      {
        name: BILLING_SERVICE_NAME,
        definition: BillingServiceService,
        implementation: createBillingService(log, opts.billing),
      },
    ],
  });
}
