import { safeTimeZone } from '#app/domain/dashboard/time.ts';

/**
 * The user's IANA time zone as the browser reported it in a cookie (`sy_tz`, or `tz`), checked against the
 * zones this runtime knows; 'UTC' until it is known.
 */
export const TIME_ZONE_COOKIES = ['sy_tz', 'tz'] as const;

export function requestTimeZone(request: Request): string {
  const header = request.headers.get('Cookie') ?? '';
  for (const name of TIME_ZONE_COOKIES) {
    const match = new RegExp(`(?:^|;\\s*)${name}=([^;]*)`).exec(header);
    if (!match?.[1]) continue;
    let value: string;
    try {
      value = decodeURIComponent(match[1]);
    } catch {
      continue;
    }
    const tz = safeTimeZone(value);
    if (tz !== 'UTC' || value === 'UTC') return tz;
  }
  return 'UTC';
}
