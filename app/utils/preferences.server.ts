import { createCookie } from '@remix-run/node';
import {
  defaultPageSize,
  isTheme,
  type PageSize,
  type Preferences,
  parsePageSize,
  type Theme,
} from '#app/utils/preferences.ts';

const ONE_YEAR = 60 * 60 * 24 * 365;
const base = { path: '/', sameSite: 'lax' as const, maxAge: ONE_YEAR, httpOnly: false };

/** Also read by remix-i18next for language detection. */
export const lngCookie = createCookie('lng', base);
export const themeCookie = createCookie('theme', base);
export const sidebarCookie = createCookie('sidebar_collapsed', base);
export const pageSizeCookie = createCookie('page_size', base);

export async function getPreferences(request: Request): Promise<Preferences> {
  const header = request.headers.get('Cookie');
  const [theme, sidebar, pageSize] = await Promise.all([
    themeCookie.parse(header),
    sidebarCookie.parse(header),
    pageSizeCookie.parse(header),
  ]);
  return {
    theme: isTheme(theme) ? theme : 'light',
    sidebarCollapsed: sidebar === true || sidebar === false ? sidebar : null,
    pageSize: parsePageSize(pageSize) ?? defaultPageSize,
  };
}

export function serializeTheme(theme: Theme) {
  return themeCookie.serialize(theme);
}
export function serializeSidebar(collapsed: boolean) {
  return sidebarCookie.serialize(collapsed);
}
export function serializePageSize(size: PageSize) {
  return pageSizeCookie.serialize(size);
}
