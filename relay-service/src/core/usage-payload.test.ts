import {
  ReportUsageRequest,
  UsageEvent,
  UsageKind,
} from '@switchyard/proto/switchyard/billing/v1/billing.ts';
import { describe, expect, it } from 'vitest';
import { encodeUsagePayload, reportUsageRequestBytes, usagePayloadBytes } from './usage-payload.ts';

const decode = (payload: string) => UsageEvent.decode(usagePayloadBytes(payload));

const event = (requestId: string) =>
  UsageEvent.fromPartial({
    requestId,
    userId: 7,
    tokenId: 9,
    channelIds: [3, 4],
    modelName: 'gpt-4o-mini',
    upstreamModel: 'gpt-4o-mini-2024-07-18',
    usage: { promptTokens: 12, completionTokens: 9, cachedTokens: 2, reasoningTokens: 1 },
    quota: 1234567890123,
    isStream: true,
    useTimeMs: 41,
    frtMs: 12,
    group: 'vip',
    otherJson: '{"model_ratio":0.075,"note":"引号 \\" and ?"}',
    createdAtMs: 1_764_000_000_123,
    ip: '203.0.113.9',
    tokenName: '',
    kind: UsageKind.USAGE_KIND_CONSUME,
    content: 'model ratio 0.075, completion ratio 4, group ratio 1',
  });

describe('usage payloads', () => {
  it('round-trips an event through its outbox payload', () => {
    const e = event('r1');
    const payload = encodeUsagePayload(e);
    expect(payload.startsWith('pb:')).toBe(true);
    expect(decode(payload)).toEqual(e);
  });

  it('still reads UsageEvent JSON payloads written by earlier relays', () => {
    const e = event('r-json');
    const legacy = JSON.stringify(UsageEvent.toJSON(e));
    expect(decode(legacy)).toEqual(e);
    expect(usagePayloadBytes(legacy)).toEqual(UsageEvent.encode(e).finish());
  });

  it('builds the ReportUsageRequest that the generated encoder would, from payloads of both formats', () => {
    const events = [event('a'), event('b'), event('c')];
    const payloads = [
      encodeUsagePayload(events[0]!),
      JSON.stringify(UsageEvent.toJSON(events[1]!)),
      encodeUsagePayload(events[2]!),
    ];
    const bytes = reportUsageRequestBytes(payloads);
    expect(bytes).toEqual(ReportUsageRequest.encode({ events }).finish());
    expect(ReportUsageRequest.decode(bytes).events).toEqual(events);
    expect(reportUsageRequestBytes([])).toEqual(ReportUsageRequest.encode({ events: [] }).finish());
  });
});
