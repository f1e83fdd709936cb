/**
 * How the relay judges an upstream failure (gateway-behaviour §2): status-code mapping first, then whether to
 * try another channel and whether the failure proves the channel unusable (auto-disable).
 */
import type { UpstreamError } from '../providers/types.ts';

/** Gemini channels answer 403 for a bad key; elsewhere 403 can be a per-request refusal. */
const GEMINI_TYPES = new Set([24, 11]);
const DISABLE_CODES = new Set(['invalid_api_key', 'account_deactivated', 'billing_not_active']);
const DISABLE_TYPES = new Set([
  'insufficient_quota',
  'insufficient_user_quota',
  'authentication_error',
  'permission_error',
  'forbidden',
]);

/** Applies a channel's `{"429":"500"}` mapping; a 200 is never remapped. */
export function mapStatus(status: number, mapping: Record<string, string>): number {
  if (status >= 200 && status < 300) return status;
  const to = mapping[String(status)];
  const n = to === undefined ? Number.NaN : Number(to);
  return Number.isInteger(n) && n >= 100 && n <= 599 ? n : status;
}

/**
 * Retry on another channel? 0 = network failure or timeout before a reply. Timeouts that the upstream itself
 * reports (504, 524) are not retried (the work may still be running there); 400 and 408 are the caller's.
 */
export function isRetryable(status: number): boolean {
  if (status === 0) return true;
  if (status >= 200 && status < 300) return false;
  if (status === 504 || status === 524 || status === 400 || status === 408) return false;
  return true;
}

/** Why this error should auto-disable the channel, or null. Keywords: one per line, case-insensitive. */
export function disableReason(err: UpstreamError, channelType: number, keywords: string): string | null {
  if (err.status === 401) return `status code 401: ${err.message}`;
  if (err.status === 403 && GEMINI_TYPES.has(channelType)) return `status code 403: ${err.message}`;
  if (err.code && DISABLE_CODES.has(err.code)) return `error code ${err.code}: ${err.message}`;
  if (DISABLE_TYPES.has(err.type)) return `error type ${err.type}: ${err.message}`;
  const text = err.message.toLowerCase();
  for (const line of keywords.split('\n')) {
    const k = line.trim().toLowerCase();
    if (k && text.includes(k)) return `keyword "${line.trim()}": ${err.message}`;
  }
  return null;
}

/**
 * What the client sees of an upstream failure. Credential errors are replaced: an upstream's "Incorrect API key
 * provided: sk-ab***cd" would leak part of the channel key.
 */
export function clientMessage(err: UpstreamError): string {
  if (err.status === 401 || err.code === 'invalid_api_key' || err.type === 'authentication_error')
    return 'the upstream channel rejected its credentials; the administrator has been told';
  if (err.status === 429 && err.type !== 'insufficient_quota') return 'upstream load saturated, retry later';
  return err.message;
}
