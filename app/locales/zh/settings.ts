/** Namespace 'settings' in Chinese (default and fallback). en/settings.ts must have exactly the same keys (its type). */
const settings = {};

export type SettingsResources = typeof settings;
export default settings;
