import { Form, useFetcher, useLocation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { DropdownMenu } from '#app/components/ui/menu.tsx';
import { type Language, supportedLngs } from '#app/i18n/config.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import type { Theme } from '#app/utils/preferences.ts';
import { supportedTimeZones } from '#app/utils/time.ts';

export const PREFERENCES_ACTION = '/preferences';
export const THEME_FETCHER = 'pref-theme';
export const SIDEBAR_FETCHER = 'pref-sidebar';
export const LANGUAGE_FETCHER = 'pref-language';

function useRedirectTo() {
  const location = useLocation();
  return location.pathname + location.search;
}

/**
 * Without JavaScript the form posts natively and the hidden redirectTo sends the browser back (PRG).
 * Once hydrated the fetcher posts without redirectTo, so the action answers with data and Remix revalidates.
 */
function RedirectBack() {
  const hydrated = useHydrated();
  const redirectTo = useRedirectTo();
  return hydrated ? null : <input type="hidden" name="redirectTo" value={redirectTo} />;
}

/** The theme in effect, including an in-flight switch (optimistic UI). */
export function useOptimisticTheme(serverTheme: Theme): Theme {
  const fetcher = useFetcher({ key: THEME_FETCHER });
  const pending = fetcher.formData?.get('theme');
  return pending === 'dark' || pending === 'light' ? pending : serverTheme;
}

export function ThemeSwitch({ theme }: { theme: Theme }) {
  const { t } = useTranslation();
  const fetcher = useFetcher({ key: THEME_FETCHER });
  const next: Theme = theme === 'dark' ? 'light' : 'dark';
  const label = next === 'dark' ? t('theme.toDark') : t('theme.toLight');
  return (
    <fetcher.Form method="post" action={PREFERENCES_ACTION} className="inline-form">
      <input type="hidden" name="intent" value="theme" />
      <input type="hidden" name="theme" value={next} />
      <RedirectBack />
      <Button
        type="submit"
        variant="ghost"
        aria-label={label}
        data-testid="theme-switch"
        className="icon-btn"
      >
        <span aria-hidden="true">{theme === 'dark' ? '☀' : '☾'}</span>
      </Button>
    </fetcher.Form>
  );
}

export function SidebarToggle({ collapsed }: { collapsed: boolean }) {
  const { t } = useTranslation();
  const fetcher = useFetcher({ key: SIDEBAR_FETCHER });
  return (
    <fetcher.Form method="post" action={PREFERENCES_ACTION} className="inline-form sidebar-toggle">
      <input type="hidden" name="intent" value="sidebar" />
      <input type="hidden" name="collapsed" value={collapsed ? 'false' : 'true'} />
      <RedirectBack />
      <Button
        type="submit"
        variant="ghost"
        className="icon-btn"
        aria-label={collapsed ? t('sidebar.expand') : t('sidebar.collapse')}
        aria-expanded={!collapsed}
        aria-controls="side-menu"
      >
        <span aria-hidden="true">{collapsed ? '»' : '«'}</span>
      </Button>
    </fetcher.Form>
  );
}

/** The collapsed state in effect, including an in-flight toggle. */
export function useOptimisticSidebar(serverCollapsed: boolean): boolean {
  const fetcher = useFetcher({ key: SIDEBAR_FETCHER });
  const pending = fetcher.formData?.get('collapsed');
  return pending === 'true' ? true : pending === 'false' ? false : serverCollapsed;
}

export function LanguageMenu({ locale }: { locale: Language }) {
  const { t } = useTranslation();
  const fetcher = useFetcher({ key: LANGUAGE_FETCHER });
  const redirectTo = useRedirectTo();
  return (
    <DropdownMenu
      label={t('language.label')}
      trigger={
        <>
          <span aria-hidden="true">文A</span> <span className="lang-current">{t(`language.${locale}`)}</span>
        </>
      }
      items={supportedLngs.map((lng) => ({
        id: lng,
        label: t(`language.${lng}`),
        selected: lng === locale,
        lang: lng,
      }))}
      onAction={(lng) =>
        fetcher.submit({ intent: 'language', lng }, { method: 'post', action: PREFERENCES_ACTION })
      }
      fallback={
        <Form method="post" action={PREFERENCES_ACTION} className="menu">
          <input type="hidden" name="intent" value="language" />
          <input type="hidden" name="redirectTo" value={redirectTo} />
          {supportedLngs.map((lng) => (
            <button
              key={lng}
              type="submit"
              name="lng"
              value={lng}
              lang={lng}
              className="menu-item"
              aria-current={lng === locale ? 'true' : undefined}
            >
              <span aria-hidden="true" className="menu-check">
                {lng === locale ? '✓' : ''}
              </span>
              {t(`language.${lng}`)}
            </button>
          ))}
        </Form>
      }
    />
  );
}

/**
 * The time zone used for times and date filters. Set automatically from the browser with JavaScript; this form
 * (a plain POST, PRG) lets anyone choose it, with or without JavaScript.
 */
export function TimeZoneForm({ timeZone }: { timeZone: string }) {
  const { t } = useTranslation();
  const redirectTo = useRedirectTo();
  const zones = supportedTimeZones();
  if (!zones.includes(timeZone)) zones.unshift(timeZone);
  return (
    <Form method="post" action={PREFERENCES_ACTION} className="timezone-form" data-testid="timezone-form">
      <input type="hidden" name="intent" value="timeZone" />
      <input type="hidden" name="redirectTo" value={redirectTo} />
      <label>
        {t('preferences.timeZone')}{' '}
        <select name="tz" defaultValue={timeZone} aria-describedby="timezone-hint">
          {zones.map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
      </label>{' '}
      <Button type="submit" variant="secondary">
        {t('preferences.timeZoneSave')}
      </Button>
      <p id="timezone-hint" className="field-hint">
        {t('preferences.timeZoneHint')}
      </p>
    </Form>
  );
}
