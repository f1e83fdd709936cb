/**
 * The outbox payload of a usage event: its protobuf encoding in base64, so that a settle encodes the event once
 * and a report to Billing only splices the stored bytes into the request (no JSON round trip per event on
 * either side). Payloads written as UsageEvent JSON (relays before this format) are still read.
 */
import { Buffer } from 'node:buffer';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { UsageEvent } from '@switchyard/proto/switchyard/billing/v1/billing.ts';

const PREFIX = 'pb:';

export function encodeUsagePayload(event: UsageEvent): string {
  return PREFIX + Buffer.from(UsageEvent.encode(event).finish()).toString('base64');
}

/** The event's protobuf bytes, from either payload format. */
export function usagePayloadBytes(payload: string): Uint8Array {
  if (payload.startsWith(PREFIX)) return Buffer.from(payload.slice(PREFIX.length), 'base64');
  return UsageEvent.encode(UsageEvent.fromJSON(JSON.parse(payload))).finish();
}

/**
 * A switchyard.billing.v1.ReportUsageRequest carrying these payloads' events (`repeated UsageEvent events = 1`):
 * each event is field 1, length-delimited, exactly as ReportUsageRequest.encode writes it.
 */
export function reportUsageRequestBytes(payloads: readonly string[]): Uint8Array {
  const w = new BinaryWriter();
  for (const p of payloads) w.uint32((1 << 3) | 2).bytes(usagePayloadBytes(p));
  return w.finish();
}
