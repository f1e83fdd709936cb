import enCommon from '#app/locales/en/common.ts';
import zhCommon from '#app/locales/zh/common.ts';

/** Translations are bundled (no network backend): both the server and the browser import them. */
export const resources = {
  zh: { common: zhCommon },
  en: { common: enCommon },
} as const;
