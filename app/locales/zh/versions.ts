/** Namespace 'versions' in Chinese (default and fallback). en/versions.ts must have exactly the same keys (its type). */
const versions = {};

export type VersionsResources = typeof versions;
export default versions;
