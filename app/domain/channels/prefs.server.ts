import { createCookie } from '@remix-run/node';

/** The channel list's id-sort and tag-mode toggles (seed §2.4/§9 "remembered locally"), kept like page_size. */
const prefsCookie = createCookie('channel_prefs', {
  path: '/',
  sameSite: 'lax',
  maxAge: 60 * 60 * 24 * 365,
  httpOnly: false,
});

export type ChannelPrefs = { idSort: boolean; tagMode: boolean };

export async function readChannelPrefs(request: Request): Promise<ChannelPrefs> {
  const v = (await prefsCookie.parse(request.headers.get('Cookie'))) as Partial<ChannelPrefs> | null;
  return { idSort: v?.idSort === true, tagMode: v?.tagMode === true };
}

export function serializeChannelPrefs(prefs: ChannelPrefs): Promise<string> {
  return prefsCookie.serialize({ idSort: prefs.idSort, tagMode: prefs.tagMode });
}
