import type { TFunction } from 'i18next';
import i18nextCore from 'i18next';
import { i18nConfig, type Language } from '#app/i18n/config.ts';
import { getLocale, i18next } from '#app/i18n/i18n.server.ts';
import { resources } from '#app/i18n/resources.ts';

/** A server-side `t` of the `auth` namespace in the request's language (lng cookie, Accept-Language, zh). */
export async function authT(request: Request): Promise<TFunction> {
  return (await i18next.getFixedT(request, 'auth')) as unknown as TFunction;
}

const instances = new Map<Language, TFunction>();

/** The `auth` namespace in a fixed language, without a request (defaults to the fallback, zh). */
export function authTFor(lng: Language = i18nConfig.fallbackLng): TFunction {
  let t = instances.get(lng);
  if (!t) {
    const instance = i18nextCore.createInstance();
    void instance.init({ ...i18nConfig, resources, lng, initImmediate: false });
    t = instance.getFixedT(lng, 'auth');
    instances.set(lng, t);
  }
  return t;
}

export async function requestLanguage(request: Request): Promise<Language> {
  return getLocale(request);
}

/**
 * The `auth` namespace in the language of any server `t` (RequestCtx carries the `common` one): i18next's
 * fixed `t` knows its language.
 */
export function asAuthT(t: TFunction | undefined): TFunction {
  if (!t) return authTFor();
  const meta = t as unknown as { lng?: string; ns?: string | string[] };
  if (meta.ns === 'auth' || (Array.isArray(meta.ns) && meta.ns[0] === 'auth')) return t;
  return authTFor(meta.lng === 'en' ? 'en' : 'zh');
}
