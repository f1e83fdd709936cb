/** Namespace 'account' in Chinese (default and fallback). en/account.ts must have exactly the same keys (its type). */
const account = {};

export type AccountResources = typeof account;
export default account;
