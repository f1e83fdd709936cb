import { describe, expect, it } from 'vitest';
import { expiryText, formatTime, formToTokenInput } from './page.server.ts';

describe('token form times in the user zone', () => {
  it('reads a datetime-local expiry in the zone of the tz cookie', () => {
    const input = formToTokenInput({ name: 'a', expired_time: '2099-01-02T03:04' }, 'Asia/Shanghai');
    expect(input.expired_time).toBe(Date.UTC(2099, 0, 1, 19, 4) / 1000);
    expect(formToTokenInput({ name: 'a', expired_time: '' }, 'Asia/Shanghai').expired_time).toBe(-1);
    // a browser offset, when posted (the JSON-era form), still wins
    const zoned = formToTokenInput({ name: 'a', expired_time: '2099-01-02T03:04', tz_offset: '-480' }, 'UTC');
    expect(zoned.expired_time).toBe(Date.UTC(2099, 0, 1, 19, 4) / 1000);
  });

  it('shows created and expiry times in the zone', () => {
    const t = Date.UTC(2099, 0, 1, 19, 4) / 1000;
    expect(formatTime(t, 'Asia/Shanghai')).toBe('2099-01-02 03:04:00');
    expect(expiryText(t, 'Asia/Shanghai')).toBe('2099-01-02T03:04');
    expect(expiryText(-1, 'Asia/Shanghai')).toBe('');
  });
});
