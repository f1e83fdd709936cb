import { type ActionFunctionArgs, data, redirect } from '@remix-run/node';
import { isLanguage } from '#app/i18n/config.ts';
import {
  lngCookie,
  serializePageSize,
  serializeSidebar,
  serializeTheme,
} from '#app/utils/preferences.server.ts';
import { isTheme, parsePageSize } from '#app/utils/preferences.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { isTimeZone, timeZoneCookie } from '#app/utils/time.ts';

/**
 * POST /preferences: intent = theme | language | sidebar | pageSize | timeZone. Without JavaScript the form carries
 * redirectTo and the answer is a redirect back (PRG); a fetcher sends no redirectTo and gets data.
 */
export async function action({ request }: ActionFunctionArgs) {
  const form = await request.formData();
  const intent = form.get('intent');
  let cookie: string | null = null;
  switch (intent) {
    case 'theme': {
      const theme = form.get('theme');
      if (isTheme(theme)) cookie = await serializeTheme(theme);
      break;
    }
    case 'language': {
      const lng = form.get('lng');
      if (isLanguage(lng)) cookie = await lngCookie.serialize(lng);
      break;
    }
    case 'sidebar': {
      const collapsed = form.get('collapsed');
      if (collapsed === 'true' || collapsed === 'false')
        cookie = await serializeSidebar(collapsed === 'true');
      break;
    }
    case 'pageSize': {
      const size = parsePageSize(form.get('pageSize'));
      if (size) cookie = await serializePageSize(size);
      break;
    }
    case 'timeZone': {
      const tz = form.get('tz');
      if (isTimeZone(tz)) cookie = timeZoneCookie(tz);
      break;
    }
  }
  if (!cookie) return data({ ok: false as const }, { status: 400 });
  const headers = { 'Set-Cookie': cookie };
  const redirectTo = form.get('redirectTo');
  if (redirectTo !== null) return redirect(safeRedirect(redirectTo, '/', { base: request }), { headers });
  return data({ ok: true as const }, { headers });
}

export function loader() {
  return redirect('/');
}
