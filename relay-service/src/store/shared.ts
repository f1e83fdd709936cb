/**
 * Input rules and defaults both store implementations apply, so that a bad argument fails the same way in
 * development (memory) and production (Redis) instead of being coerced by Lua's number parsing.
 */
import type { AccountRef, RateLimit } from './types.ts';

/**
 * How long a settled request id is remembered for settle idempotency. A second settle of one request can only
 * come from the relay serving it, right after the first (a retried script call; core settles each call once),
 * so an hour is ample. It was 24 h: one key per call for a day is ~150 million keys at 1,800 calls/s (bench,
 * issue 7); an hour keeps the markers' Redis memory to an hour of traffic.
 */
export const DEFAULT_SETTLED_TTL_MS = 60 * 60 * 1000;

/** Holds released per sweep step: keeps each Redis script short. */
export const SWEEP_BATCH = 500;

export function assertQuota(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  }
}

/** A flexible hold's floor: absent, or an integer from 0 to the amount. */
export function assertMinAmount(minAmount: number | undefined, amount: number): void {
  if (minAmount === undefined) return;
  assertQuota('minAmount', minAmount);
  if (minAmount > amount) throw new RangeError(`minAmount ${minAmount} is above amount ${amount}`);
}

export function assertTime(name: string, value: number): void {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${name} must be an integer (ms), got ${value}`);
}

export function assertPositiveMs(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive integer (ms), got ${value}`);
  }
}

export function assertId(name: string, value: number | null): void {
  if (value !== null && !Number.isSafeInteger(value))
    throw new RangeError(`${name} must be an integer, got ${value}`);
}

/** Outbox ids are stream ids `<ms>-<seq>`; anything else would make XDEL abort an ack batch half-way. */
export function assertEntryId(id: string): void {
  if (!/^\d+-\d+$/.test(id)) throw new RangeError(`not an outbox entry id: ${id}`);
}

export function assertAccount(account: AccountRef): void {
  if (!Number.isSafeInteger(account.id))
    throw new RangeError(`account id must be an integer, got ${account.id}`);
}

export function assertLimit(limit: RateLimit | undefined): void {
  if (!limit) return;
  if (!limit.key) throw new RangeError('rate limit key must not be empty');
  assertPositiveMs('limit.windowMs', limit.windowMs);
  assertQuota('limit.maxTotal', limit.maxTotal);
  assertQuota('limit.maxSuccess', limit.maxSuccess);
}

/** Short account kind used in keys. */
export function kindCode(account: AccountRef): 'u' | 't' {
  return account.kind === 'user' ? 'u' : 't';
}

export class StoreClosedError extends Error {
  constructor() {
    super('store is closed');
    this.name = 'StoreClosedError';
  }
}
