import type { TFunction } from 'i18next';
import { i18next } from '#app/i18n/i18n.server.ts';

/** A server-side `t` bound to the `account` namespace (login, register and reset pages). */
export function accountT(request: Request): Promise<TFunction> {
  return i18next.getFixedT(request, 'account') as Promise<TFunction>;
}
