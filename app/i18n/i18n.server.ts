import { RemixI18Next } from 'remix-i18next/server';
import { i18nConfig, type Language } from '#app/i18n/config.ts';
import { resources } from '#app/i18n/resources.ts';
import { lngCookie } from '#app/utils/preferences.server.ts';

/** Language detection: the `lng` cookie first, then Accept-Language, then the fallback (zh). */
export const i18next = new RemixI18Next({
  detection: {
    supportedLanguages: [...i18nConfig.supportedLngs],
    fallbackLanguage: i18nConfig.fallbackLng,
    cookie: lngCookie,
    order: ['cookie', 'header'],
  },
  i18next: { ...i18nConfig, resources },
});

export async function getLocale(request: Request): Promise<Language> {
  const lng = await i18next.getLocale(request);
  return lng === 'en' ? 'en' : 'zh';
}

/** A server-side `t` for messages produced in loaders and actions (toasts, validation). */
export function getFixedT(request: Request) {
  return i18next.getFixedT(request, 'common');
}
