import { describe, expect, it } from 'vitest';
import { checkTopUpAmount, payableAmount } from './amount.ts';

describe('online top-up amount', () => {
  it('accepts positive amounts with at most two decimals, from the minimum up', () => {
    expect(checkTopUpAmount('10', 1, 7.3)).toEqual({ ok: true, amount: 10, payable: '73.00' });
    expect(checkTopUpAmount(' 0.1 ', 0.1, 7.3)).toEqual({ ok: true, amount: 0.1, payable: '0.73' });
    expect(checkTopUpAmount('1.5', 1, 1)).toEqual({ ok: true, amount: 1.5, payable: '1.50' });
  });

  it("refuses anything else ('amount incorrect') and amounts under the minimum", () => {
    for (const raw of ['', '0', '0.00', '-1', '1.234', 'abc', '1e3', '10.', '.5'])
      expect(checkTopUpAmount(raw, 1, 7.3), raw).toEqual({ ok: false, reason: 'invalid' });
    expect(checkTopUpAmount('4.99', 5, 7.3)).toEqual({ ok: false, reason: 'belowMin' });
  });

  it('rounds the payable amount to cents', () => {
    expect(payableAmount(0.1, 7.3)).toBe('0.73');
    expect(payableAmount(3.33, 7.3)).toBe('24.31');
    expect(payableAmount(20, 0)).toBe('0.00');
  });
});
