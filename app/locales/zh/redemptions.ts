/** Namespace 'redemptions' in Chinese (default and fallback). en/redemptions.ts must have exactly the same keys (its type). */
const redemptions = {};

export type RedemptionsResources = typeof redemptions;
export default redemptions;
