/** Redemption constants shared by the server and the page (client-safe: no server imports). */

/** Seed 001 §9: redemption defaults. */
export const DEFAULT_REDEMPTION_QUOTA = 100000;
export const DEFAULT_REDEMPTION_COUNT = 1;
/** new-api: at most 100 codes per batch; names 1..20 characters. */
export const MAX_REDEMPTION_COUNT = 100;
export const MAX_REDEMPTION_NAME = 20;

/** The token editor's quick amounts (seed 001 §9), reused by the redemption form. */
export const QUICK_QUOTA_AMOUNTS = [
  { quota: 500000, label: '1$' },
  { quota: 5000000, label: '10$' },
  { quota: 25000000, label: '50$' },
  { quota: 50000000, label: '100$' },
  { quota: 250000000, label: '500$' },
  { quota: 500000000, label: '1000$' },
] as const;

/** Seed 001 §4: 1 unused, 2 disabled, 3 used. */
export function redemptionStatusKey(status: number): 'unused' | 'disabled' | 'used' | 'unknown' {
  if (status === 1) return 'unused';
  if (status === 2) return 'disabled';
  if (status === 3) return 'used';
  return 'unknown';
}

/** The part of a key that may be shown in audit entries, logs and the masked table cell. */
export function keyPrefix(key: string): string {
  return key.slice(0, 6);
}

export function maskKey(key: string): string {
  return key.length <= 10 ? '********' : `${key.slice(0, 6)}…${key.slice(-4)}`;
}

/** The text file of freshly generated codes: one code per line. */
export function codesFileText(keys: readonly string[]): string {
  return `${keys.join('\n')}\n`;
}

export const CODES_FILE_NAME = 'redemption-codes.txt';
