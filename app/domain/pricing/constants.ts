/** Shared by the server and the /pricing page (no server-only imports here). */
export const PRICING_SORTS = ['default', 'name', 'input', 'ratio'] as const;
export type PricingSort = (typeof PRICING_SORTS)[number];
