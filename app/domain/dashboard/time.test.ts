import { describe, expect, it } from 'vitest';
import { requestTimeZone } from '#app/utils/time.ts';
import {
  bucketLabel,
  bucketStart,
  bucketStarts,
  parseLocalInput,
  safeTimeZone,
  toLocalInput,
} from './time.ts';

const utc = (s: string) => Date.parse(`${s}Z`) / 1000;

describe('dashboard calendar in a time zone', () => {
  it('hours, days and ISO weeks start at the zone local boundaries', () => {
    const t = utc('2025-11-19T17:30:00'); // Thursday 01:30 on the 20th in Shanghai
    expect(bucketStart(t, 'hour', 'Asia/Shanghai')).toBe(utc('2025-11-19T17:00:00'));
    expect(bucketStart(t, 'day', 'Asia/Shanghai')).toBe(utc('2025-11-19T16:00:00'));
    expect(bucketStart(t, 'day', 'UTC')).toBe(utc('2025-11-19T00:00:00'));
    expect(bucketStart(t, 'week', 'Asia/Shanghai')).toBe(utc('2025-11-16T16:00:00')); // Monday the 17th
    expect(bucketStart(t, 'week', 'UTC')).toBe(utc('2025-11-17T00:00:00'));
    expect(bucketStart(t, 'hour', 'Asia/Kolkata')).toBe(utc('2025-11-19T17:30:00'));
  });

  it('days across a DST change are 23 or 25 hours; the series has no gap or repeat', () => {
    const tz = 'America/New_York';
    const days = bucketStarts(utc('2025-03-08T12:00:00'), utc('2025-03-10T12:00:00'), 'day', tz, 10)!;
    expect(days.map((d) => toLocalInput(d, tz))).toEqual([
      '2025-03-08T00:00',
      '2025-03-09T00:00',
      '2025-03-10T00:00',
    ]);
    expect((days[2]! - days[1]!) / 3600).toBe(23);
    const hours = bucketStarts(utc('2025-11-02T04:00:00'), utc('2025-11-02T07:59:00'), 'hour', tz, 10)!;
    expect(hours).toHaveLength(4);
    expect(new Set(hours).size).toBe(4);
    expect(bucketStarts(0, 86_400 * 40, 'hour', 'UTC', 800)).toBeNull();
  });

  it('datetime-local values round-trip in the zone; malformed ones are null', () => {
    expect(parseLocalInput('2025-11-20T08:00', 'Asia/Shanghai')).toBe(utc('2025-11-20T00:00:00'));
    expect(toLocalInput(utc('2025-11-20T00:00:00'), 'Asia/Shanghai')).toBe('2025-11-20T08:00');
    expect(parseLocalInput('2025-11-20', 'UTC')).toBe(utc('2025-11-20T00:00:00'));
    for (const bad of ['', 'yesterday', '2025-02-30T00:00', '2025-11-20T24:00', '2025-11-20T08:60']) {
      expect(parseLocalInput(bad, 'UTC'), bad).toBeNull();
    }
    expect(bucketLabel(utc('2025-11-20T00:00:00'), 'hour', 'Asia/Shanghai')).toBe('11-20 08:00');
    expect(bucketLabel(utc('2025-11-20T00:00:00'), 'week', 'UTC')).toBe('2025-11-20');
  });

  it('the time-zone cookie: a known IANA zone, else UTC', () => {
    const req = (cookie: string) => new Request('http://x/', { headers: { Cookie: cookie } });
    expect(requestTimeZone(req('tz=Asia%2FShanghai'))).toBe('Asia/Shanghai');
    expect(requestTimeZone(req('a=b; tz=Europe/Berlin'))).toBe('Europe/Berlin');
    expect(requestTimeZone(req('tz=Mars%2FOlympus'))).toBe('UTC');
    expect(requestTimeZone(req('tz=%E0%A4%A'))).toBe('UTC');
    expect(requestTimeZone(new Request('http://x/'))).toBe('UTC');
    expect(safeTimeZone('x'.repeat(100))).toBe('UTC');
  });
});
