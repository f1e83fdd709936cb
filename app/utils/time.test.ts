import { describe, expect, it } from 'vitest';
import {
  formatDateTime,
  formatTimestamp,
  isTimeZone,
  normalizeTimeZone,
  parseDateTimeLocal,
  requestTimeZone,
  supportedTimeZones,
  timeZoneCookie,
  timeZoneFromCookie,
  toDateTimeLocal,
  zoneOffsetMs,
} from './time.ts';

// 2026-11-25 12:34:56 UTC
const T = Date.UTC(2026, 10, 25, 12, 34, 56) / 1000;

describe('formatTimestamp', () => {
  it('formats unix seconds as YYYY-MM-DD HH:mm:ss in the zone', () => {
    expect(formatTimestamp(T, 'UTC')).toBe('2026-11-25 12:34:56');
    expect(formatTimestamp(T, 'Asia/Shanghai')).toBe('2026-11-25 20:34:56');
    expect(formatTimestamp(T, 'America/Los_Angeles')).toBe('2026-11-25 04:34:56');
    expect(formatTimestamp(T, 'Asia/Kolkata')).toBe('2026-11-25 18:04:56');
  });

  it('crosses the date line and midnight with 00, never 24', () => {
    const midnightShanghai = Date.UTC(2026, 10, 25, 16, 0, 0) / 1000;
    expect(formatTimestamp(midnightShanghai, 'Asia/Shanghai')).toBe('2026-11-26 00:00:00');
    expect(formatTimestamp(0, 'UTC')).toBe('1970-01-01 00:00:00');
  });

  it('falls back to UTC for an unknown zone and gives "" for missing times', () => {
    expect(formatTimestamp(T, 'Mars/Olympus')).toBe('2026-11-25 12:34:56');
    expect(formatTimestamp(null, 'UTC')).toBe('');
    expect(formatTimestamp(undefined, 'UTC')).toBe('');
    expect(formatTimestamp(Number.NaN, 'UTC')).toBe('');
  });

  it('follows daylight saving time', () => {
    // New York: EST (-5) in January, EDT (-4) in July
    expect(formatTimestamp(Date.UTC(2026, 0, 15, 12) / 1000, 'America/New_York')).toBe('2026-01-15 07:00:00');
    expect(formatTimestamp(Date.UTC(2026, 6, 15, 12) / 1000, 'America/New_York')).toBe('2026-07-15 08:00:00');
    expect(zoneOffsetMs(Date.UTC(2026, 6, 15), 'Europe/Berlin')).toBe(2 * 3600_000);
    expect(zoneOffsetMs(Date.UTC(2026, 0, 15), 'Europe/Berlin')).toBe(3600_000);
  });
});

describe('formatDateTime', () => {
  it('formats ISO text, milliseconds and dates', () => {
    expect(formatDateTime('2026-11-25T12:34:56.789Z', 'Asia/Shanghai')).toBe('2026-11-25 20:34:56');
    expect(formatDateTime(T * 1000, 'UTC')).toBe('2026-11-25 12:34:56');
    expect(formatDateTime(new Date(T * 1000), 'Europe/London')).toBe('2026-11-25 12:34:56');
    expect(formatDateTime('not a date', 'UTC')).toBe('');
  });
});

describe('datetime-local values', () => {
  it('round-trips a wall time in the zone', () => {
    expect(toDateTimeLocal(T, 'Asia/Shanghai')).toBe('2026-11-25T20:34');
    expect(parseDateTimeLocal('2026-11-25T20:34', 'Asia/Shanghai')).toBe(T - 56);
    expect(parseDateTimeLocal('2026-11-25T12:34:56', 'UTC')).toBe(T);
    expect(parseDateTimeLocal('2026-11-25 20:34:56', 'Asia/Shanghai')).toBe(T);
    expect(toDateTimeLocal(0, 'UTC')).toBe('');
  });

  it('rejects text that is not a wall time', () => {
    for (const bad of ['', 'yesterday', '2026-13-01T00:00', '2026-02-30T10:00', '2026-01-01T24:00', 5]) {
      expect(parseDateTimeLocal(bad, 'UTC')).toBeNull();
    }
  });

  it('moves a time skipped by spring-forward ahead by the gap, and takes the earlier of a repeated time', () => {
    // 2026-03-08 02:30 does not exist in New York (02:00 EST -> 03:00 EDT): 03:30 EDT = 07:30 UTC
    expect(parseDateTimeLocal('2026-03-08T02:30', 'America/New_York')).toBe(
      Date.UTC(2026, 2, 8, 7, 30) / 1000,
    );
    // 2026-11-01 01:30 happens twice (EDT then EST): the EDT one, 05:30 UTC
    expect(parseDateTimeLocal('2026-11-01T01:30', 'America/New_York')).toBe(
      Date.UTC(2026, 10, 1, 5, 30) / 1000,
    );
    // ordinary times either side of the change
    expect(parseDateTimeLocal('2026-03-08T12:00', 'America/New_York')).toBe(Date.UTC(2026, 2, 8, 16) / 1000);
    expect(parseDateTimeLocal('2026-03-07T12:00', 'America/New_York')).toBe(Date.UTC(2026, 2, 7, 17) / 1000);
  });
});

describe('the tz cookie', () => {
  it('accepts known zones only', () => {
    expect(isTimeZone('Asia/Shanghai')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Asia/Nowhere')).toBe(false);
    expect(isTimeZone('')).toBe(false);
    expect(isTimeZone(3)).toBe(false);
    expect(normalizeTimeZone('nope')).toBe('UTC');
  });

  it('reads the zone from the Cookie header, UTC until known', () => {
    expect(timeZoneFromCookie('theme=x; tz=Asia%2FShanghai; lng=zh')).toBe('Asia/Shanghai');
    expect(timeZoneFromCookie('tz=Asia/Tokyo')).toBe('Asia/Tokyo');
    expect(timeZoneFromCookie('tz=Bogus%2FZone')).toBeNull();
    expect(timeZoneFromCookie('xtz=Asia/Tokyo')).toBeNull();
    expect(timeZoneFromCookie(null)).toBeNull();
    const req = (cookie?: string) => new Request('http://x/', { headers: cookie ? { Cookie: cookie } : {} });
    expect(requestTimeZone(req())).toBe('UTC');
    expect(requestTimeZone(req('tz=Europe%2FBerlin'))).toBe('Europe/Berlin');
  });

  it('writes a cookie the reader understands', () => {
    const c = timeZoneCookie('America/New_York');
    expect(c).toMatch(/^tz=America%2FNew_York; Path=\/; Max-Age=\d+; SameSite=Lax$/);
    expect(timeZoneFromCookie(c.split(';')[0])).toBe('America/New_York');
  });

  it('offers UTC first, then the runtime zones', () => {
    const zones = supportedTimeZones();
    expect(zones[0]).toBe('UTC');
    expect(zones).toContain('Asia/Shanghai');
    expect(zones.filter((z) => z === 'UTC')).toHaveLength(1);
  });
});
