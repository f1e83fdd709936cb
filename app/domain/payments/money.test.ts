import { describe, expect, it } from 'vitest';
import { formatCents, moneyCents, parseCents, quotaForCents } from './money.ts';

describe('integer money', () => {
  it('parses and prints gateway amounts exactly', () => {
    expect(parseCents('73')).toBe(7300);
    expect(parseCents('73.5')).toBe(7350);
    expect(parseCents('0.01')).toBe(1);
    for (const bad of ['', '-1', '1.234', '1e3', 'abc', '.5', ' 1 2'])
      expect(parseCents(bad), bad).toBeNull();
    expect(formatCents(7300)).toBe('73.00');
    expect(formatCents(5)).toBe('0.05');
  });

  it('charges amount x Price rounded to the cent, as the page shows it', () => {
    expect(moneyCents(1000, 7.3)).toBe(7300);
    expect(moneyCents(10, 7.3)).toBe(73);
    expect(moneyCents(333, 7.3)).toBe(2431);
    expect(moneyCents(1, 7.25)).toBe(7); // 7.25 fen rounds down
    expect(moneyCents(2, 7.25)).toBe(15); // 14.5 fen rounds half up
  });

  it('credits cents x QuotaPerUnit / 100 quota', () => {
    expect(quotaForCents(1000, 500000)).toBe(5_000_000);
    expect(quotaForCents(333, 500000)).toBe(1_665_000);
  });
});
