/** Token management constants (seed 001 §9 "Token"), client-safe. */

/** Default remain_quota on create. */
export const DEFAULT_TOKEN_QUOTA = 500000;
/** Quick quota amounts of the editor (quota = dollars × 500000). */
export const QUICK_QUOTAS = [500000, 5000000, 25000000, 50000000, 250000000, 500000000] as const;
/** Batch-create presets. */
export const COUNT_PRESETS = [10, 20, 30, 100] as const;
/** Expiry presets in seconds from now (never = -1); 1 month = 30 days. */
export const EXPIRY_PRESETS = { never: -1, hour: 3600, day: 86400, month: 30 * 86400 } as const;
export type ExpiryPreset = keyof typeof EXPIRY_PRESETS;
/** new-api's key: 48 characters of [0-9a-zA-Z], shown as sk-<key>. */
export const KEY_LENGTH = 48;
export const KEY_PREFIX = 'sk-';
/** At most this many tokens per create call. */
export const MAX_BATCH = 100;
/** Longest token name (the batch suffix -xxxxxx is added on top). */
export const MAX_NAME = 50;
/** Longest model limit list (comma text), as new-api. */
export const MAX_MODEL_LIMITS = 1024;
/** Token statuses (seed 001 §4). */
export const TOKEN_STATUS = { enabled: 1, disabled: 2, expired: 3, exhausted: 4 } as const;
