export const supportedLngs = ['zh', 'en'] as const;
export type Language = (typeof supportedLngs)[number];

export const i18nConfig = {
  supportedLngs: [...supportedLngs],
  fallbackLng: 'zh' as Language,
  defaultNS: 'common',
  interpolation: { escapeValue: false },
} as const;

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (supportedLngs as readonly string[]).includes(value);
}
