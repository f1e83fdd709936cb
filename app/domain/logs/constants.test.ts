import { describe, expect, it } from 'vitest';
import { formatLogTime, fromDateTimeLocal, startOfDay, toDateTimeLocal } from './constants.ts';

describe('log times in the user zone', () => {
  const t = Date.UTC(2026, 10, 25, 20, 30) / 1000; // 2026-11-26 04:30 in Shanghai

  it('shows rows and filters in the zone', () => {
    expect(formatLogTime(t, 'Asia/Shanghai')).toBe('2026-11-26 04:30:00');
    expect(formatLogTime(0, 'Asia/Shanghai')).toBe('-');
    expect(toDateTimeLocal(t, 'Asia/Shanghai')).toBe('2026-11-26T04:30');
    expect(fromDateTimeLocal('2026-11-26T04:30', 'Asia/Shanghai')).toBe(t);
    expect(fromDateTimeLocal('garbage', 'Asia/Shanghai')).toBe(0);
  });

  it('starts the default window at local midnight', () => {
    expect(startOfDay(t, 'Asia/Shanghai')).toBe(Date.UTC(2026, 10, 25, 16) / 1000);
    expect(startOfDay(t, 'UTC')).toBe(Date.UTC(2026, 10, 25) / 1000);
    expect(startOfDay(t, 'America/Los_Angeles')).toBe(Date.UTC(2026, 10, 25, 8) / 1000);
  });
});
