import { RemixBrowser } from '@remix-run/react';
import i18next from 'i18next';
import { StrictMode, startTransition } from 'react';
import { hydrateRoot } from 'react-dom/client';
import { I18nextProvider, initReactI18next } from 'react-i18next';
import { getInitialNamespaces } from 'remix-i18next/client';
import { i18nConfig, isLanguage } from '#app/i18n/config.ts';
import { resources } from '#app/i18n/resources.ts';

async function hydrate() {
  // The server detected the language (cookie, then Accept-Language) and wrote it to <html lang>.
  const htmlLang = document.documentElement.lang;
  await i18next.use(initReactI18next).init({
    ...i18nConfig,
    lng: isLanguage(htmlLang) ? htmlLang : i18nConfig.fallbackLng,
    ns: getInitialNamespaces(),
    resources,
  });

  startTransition(() => {
    hydrateRoot(
      document,
      <I18nextProvider i18n={i18next}>
        <StrictMode>
          <RemixBrowser />
        </StrictMode>
      </I18nextProvider>,
    );
  });
}

if (window.requestIdleCallback) {
  window.requestIdleCallback(() => void hydrate());
} else {
  window.setTimeout(() => void hydrate(), 1);
}
