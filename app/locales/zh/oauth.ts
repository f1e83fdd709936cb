/** Namespace 'oauth' in Chinese (default and fallback). en/oauth.ts must have exactly the same keys (its type). */
const oauth = {};

export type OauthResources = typeof oauth;
export default oauth;
