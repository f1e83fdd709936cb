/**
 * The relay's client of the console's BillingService. Generated types stop here: the outbox works with
 * payload strings (core/usage-payload.ts) and plain ack results.
 */
import { Buffer } from 'node:buffer';
import { Metadata } from '@grpc/grpc-js';
import {
  BillingServiceClient,
  BillingServiceService,
  type ReportUsageResponse,
  UsageAckStatus,
} from '@switchyard/proto/switchyard/billing/v1/billing.ts';
import { reportUsageRequestBytes } from '../core/usage-payload.ts';
import { clientSecurity, type GrpcSecurity } from './security.ts';

export type AckResult = { requestId: string; status: 'accepted' | 'duplicate' | 'rejected'; message: string };

export type BillingReporter = {
  /** Reports events (outbox payloads); resolves with one ack per handled event. */
  report(payloads: readonly string[], timeoutMs: number): Promise<AckResult[]>;
  close(): void;
};

const statuses: Partial<Record<UsageAckStatus, AckResult['status']>> = {
  [UsageAckStatus.USAGE_ACK_STATUS_ACCEPTED]: 'accepted',
  [UsageAckStatus.USAGE_ACK_STATUS_DUPLICATE]: 'duplicate',
  [UsageAckStatus.USAGE_ACK_STATUS_REJECTED]: 'rejected',
};

/** `security`: the service secret every call carries (client interceptor) and the mutual-TLS files, if any. */
export function createBillingReporter(address: string, security: GrpcSecurity): BillingReporter {
  // grpc-js backs reconnects off up to 120 s; a restarted Billing (a deploy) should be seen within seconds, and
  // the outbox already paces its retries.
  const { credentials, options } = clientSecurity(security);
  const client = new BillingServiceClient(address, credentials, {
    ...options,
    'grpc.initial_reconnect_backoff_ms': 250,
    'grpc.max_reconnect_backoff_ms': 2_000,
  });
  return {
    report(payloads, timeoutMs) {
      // The request is spliced from the payloads' stored bytes; the generated method would decode and
      // re-encode every event.
      const { path, responseDeserialize } = BillingServiceService.reportUsage;
      const request = Buffer.from(reportUsageRequestBytes(payloads));
      return new Promise((resolve, reject) => {
        client.makeUnaryRequest<Buffer, ReportUsageResponse>(
          path,
          (bytes) => bytes,
          responseDeserialize,
          request,
          new Metadata(),
          { deadline: Date.now() + timeoutMs },
          (err, res) => {
            if (err || !res) return reject(err ?? new Error('ReportUsage answered nothing'));
            resolve(
              res.acks.flatMap((a) => {
                const status = statuses[a.status];
                return status ? [{ requestId: a.requestId, status, message: a.message }] : [];
              }),
            );
          },
        );
      });
    },
    close() {
      client.close();
    },
  };
}
