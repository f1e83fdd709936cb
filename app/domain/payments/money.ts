/**
 * Integer money (ADR 027): amounts travel as cents; the gateways' decimal strings are parsed and printed
 * exactly, never through floating point sums.
 */

/** '73', '73.5', '73.00' -> 7300; anything else (negative, 3 decimals, exponent) -> null. */
export function parseCents(text: string): number | null {
  const m = /^(\d{1,12})(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** 7300 -> '73.00' */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(cents));
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** A USD amount with at most two decimals (already validated) in cents. */
export function amountToCents(amount: number): number {
  return Math.round(amount * 100);
}

/**
 * Charged money in cents: product cents x Price, rounded half up to the cent (the same figure the page shows,
 * amount.ts payableAmount). Price is an option with up to a few decimals: it is scaled to an integer first.
 */
export function moneyCents(productCents: number, price: number): number {
  const priceMicros = Math.round(price * 1_000_000);
  // product cents x price micros / 1e6 = money cents; BigInt keeps it exact for any realistic amount
  const scaled = BigInt(productCents) * BigInt(priceMicros);
  return Number((scaled + 500_000n) / 1_000_000n);
}

/** Quota for a USD amount in cents: cents x QuotaPerUnit / 100, rounded down to a whole unit of quota. */
export function quotaForCents(productCents: number, quotaPerUnit: number): number {
  return Math.floor((productCents * quotaPerUnit) / 100);
}
