/** Namespace 'tokens' in Chinese (default and fallback). en/tokens.ts must have exactly the same keys (its type). */
const tokens = {};

export type TokensResources = typeof tokens;
export default tokens;
