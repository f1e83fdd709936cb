/**
 * Online top-up amounts (seed 001 §2.9, §5 Top-up), client-safe so the page computes the payable amount live
 * with JavaScript and the server computes the same thing for the GET form without it.
 */

export type AmountCheck =
  | { ok: true; amount: number; payable: string }
  | { ok: false; reason: 'invalid' | 'belowMin' };

/** At most two decimals, greater than 0 (seed: 'amount incorrect'); at least the configured minimum. */
export function checkTopUpAmount(raw: string, minTopUp: number, price: number): AmountCheck {
  const text = raw.trim();
  if (!/^\d{1,9}(\.\d{1,2})?$/.test(text)) return { ok: false, reason: 'invalid' };
  const amount = Number(text);
  if (!(amount > 0)) return { ok: false, reason: 'invalid' };
  if (amount < minTopUp) return { ok: false, reason: 'belowMin' };
  return { ok: true, amount, payable: payableAmount(amount, price) };
}

/** Amount times the price rate, 2 decimals (computed in cents so 0.1 x 7.3 does not print 0.72999...). */
export function payableAmount(amount: number, price: number): string {
  return (Math.round(amount * price * 100) / 100).toFixed(2);
}
