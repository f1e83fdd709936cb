/**
 * The relay's client of the console's BillingService. Generated types stop here: the outbox works with
 * payload strings (UsageEvent JSON) and plain ack results.
 */
import { credentials, Metadata } from '@grpc/grpc-js';
import {
  BillingServiceClient,
  UsageAckStatus,
  UsageEvent,
} from '@switchyard/proto/switchyard/billing/v1/billing.ts';

export type AckResult = { requestId: string; status: 'accepted' | 'duplicate' | 'rejected'; message: string };

export type BillingReporter = {
  /** Reports events (UsageEvent JSON payloads); resolves with one ack per handled event. */
  report(payloads: readonly string[], timeoutMs: number): Promise<AckResult[]>;
  close(): void;
};

const statuses: Partial<Record<UsageAckStatus, AckResult['status']>> = {
  [UsageAckStatus.USAGE_ACK_STATUS_ACCEPTED]: 'accepted',
  [UsageAckStatus.USAGE_ACK_STATUS_DUPLICATE]: 'duplicate',
  [UsageAckStatus.USAGE_ACK_STATUS_REJECTED]: 'rejected',
};

export function createBillingReporter(address: string): BillingReporter {
  // grpc-js backs reconnects off up to 120 s; a restarted Billing (a deploy) should be seen within seconds, and
  // the outbox already paces its retries.
  const client = new BillingServiceClient(address, credentials.createInsecure(), {
    'grpc.initial_reconnect_backoff_ms': 250,
    'grpc.max_reconnect_backoff_ms': 2_000,
  });
  return {
    report(payloads, timeoutMs) {
      const events = payloads.map((p) => UsageEvent.fromJSON(JSON.parse(p)));
      return new Promise((resolve, reject) => {
        client.reportUsage({ events }, new Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
          if (err) return reject(err);
          resolve(
            res.acks.flatMap((a) => {
              const status = statuses[a.status];
              return status ? [{ requestId: a.requestId, status, message: a.message }] : [];
            }),
          );
        });
      });
    },
    close() {
      client.close();
    },
  };
}
