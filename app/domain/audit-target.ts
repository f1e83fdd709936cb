/**
 * `audit_entries.target_id` is varchar(191) (new-api's string-id width). An action on many rows at once
 * (redemption codes generated together, channels tagged together) names them all when they fit, and otherwise
 * `first..last (n ids)`; the entry's `after` JSON keeps the complete list, so nothing is lost.
 */
export const AUDIT_TARGET_MAX = 191;

export function auditTargetIds(ids: readonly (number | string)[]): string {
  const all = ids.join(',');
  if (all.length <= AUDIT_TARGET_MAX) return all;
  return `${ids[0]}..${ids[ids.length - 1]} (${ids.length} ids)`.slice(0, AUDIT_TARGET_MAX);
}
