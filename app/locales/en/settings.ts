import type { SettingsResources } from '#app/locales/zh/settings.ts';

const settings: SettingsResources = {};

export default settings;
