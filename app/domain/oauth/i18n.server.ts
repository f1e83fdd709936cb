import type { TFunction } from 'i18next';
import { i18next } from '#app/i18n/i18n.server.ts';

/** A server-side `t` of the `oauth` namespace in the request's language (lng cookie, Accept-Language, zh). */
export async function oauthT(request: Request): Promise<TFunction> {
  return (await i18next.getFixedT(request, 'oauth')) as unknown as TFunction;
}
