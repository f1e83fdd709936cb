/** Namespace 'auth' in Chinese (default and fallback). en/auth.ts must have exactly the same keys (its type). */
const auth = {};

export type AuthResources = typeof auth;
export default auth;
