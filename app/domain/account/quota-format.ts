/**
 * Quota display (seed 000 §9): with currency display on, dollars = quota / QuotaPerUnit; otherwise large
 * numbers are abbreviated (k from 10 thousand, M, B). Shared by the server (messages) and the page.
 */
export type QuotaDisplay = { displayInCurrency: boolean; quotaPerUnit: number };

function trim(n: number, digits: number): string {
  return n.toFixed(digits).replace(/\.?0+$/, '');
}

export function formatQuota(quota: number, display: QuotaDisplay): string {
  if (display.displayInCurrency) {
    const perUnit = display.quotaPerUnit > 0 ? display.quotaPerUnit : 500000;
    const dollars = quota / perUnit;
    return `$${dollars.toFixed(dollars !== 0 && Math.abs(dollars) < 0.01 ? 6 : 2)}`;
  }
  const abs = Math.abs(quota);
  if (abs >= 1e9) return `${trim(quota / 1e9, 2)}B`;
  if (abs >= 1e6) return `${trim(quota / 1e6, 2)}M`;
  if (abs >= 1e4) return `${trim(quota / 1e3, 2)}k`;
  return String(quota);
}
