import { createCookie } from '@remix-run/node';

/**
 * Seed 000 §2 layout rules: the `aff` query parameter on /login or /register is kept as the referral code and
 * sent with the registration. Kept in a cookie (readable by the server, so it works without JavaScript).
 */
const affCookie = createCookie('sy_aff', {
  path: '/',
  sameSite: 'lax',
  httpOnly: true,
  maxAge: 30 * 24 * 3600,
});

const AFF_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

export function normaliseAff(value: unknown): string | null {
  return typeof value === 'string' && AFF_PATTERN.test(value) ? value : null;
}

/** The referral code of this request: `?aff=` wins over the stored cookie. */
export async function readAff(request: Request): Promise<{ aff: string | null; setCookie: string | null }> {
  const fromQuery = normaliseAff(new URL(request.url).searchParams.get('aff'));
  if (fromQuery) return { aff: fromQuery, setCookie: await affCookie.serialize(fromQuery) };
  return { aff: normaliseAff(await affCookie.parse(request.headers.get('Cookie'))), setCookie: null };
}
