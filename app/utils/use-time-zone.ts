import { useRevalidator, useRouteLoaderData } from '@remix-run/react';
import { useCallback, useEffect } from 'react';
import type { RootLoaderData } from '#app/root.tsx';
import {
  DEFAULT_TIME_ZONE,
  formatDateTime,
  formatTimestamp,
  isTimeZone,
  timeZoneCookie,
  timeZoneFromCookie,
} from '#app/utils/time.ts';

/** The user's time zone as the server rendered it (the `tz` cookie; UTC until known). */
export function useTimeZone(): string {
  const data = useRouteLoaderData('root') as RootLoaderData | undefined;
  return data?.timeZone ?? DEFAULT_TIME_ZONE;
}

/** Formatters bound to the user's zone: unix seconds and ISO texts as 'YYYY-MM-DD HH:mm:ss'. */
export function useTimeFormat() {
  const timeZone = useTimeZone();
  const seconds = useCallback((s: number | null | undefined) => formatTimestamp(s, timeZone), [timeZone]);
  const iso = useCallback((v: string | number | Date) => formatDateTime(v, timeZone), [timeZone]);
  return { timeZone, formatTimestamp: seconds, formatDateTime: iso };
}

/**
 * First visit with JavaScript: keep the browser's zone in the `tz` cookie and reload the data so the page shows
 * local times. A zone already in the cookie (the browser's or one chosen in the settings form) is left alone.
 */
export function useDetectTimeZone(serverZone: string) {
  const revalidator = useRevalidator();
  useEffect(() => {
    if (timeZoneFromCookie(document.cookie)) return;
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!isTimeZone(zone)) return;
    // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing in Firefox and older Safari
    document.cookie = timeZoneCookie(zone);
    if (zone !== serverZone) revalidator.revalidate();
  }, []);
}
