import type { TFunction } from 'i18next';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import { getSessionUser } from '#app/domain/auth/session.server.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

/**
 * The per-request context every domain function receives (STYLE "Conventions we follow" 3):
 * a forked EntityManager (never the global `orm.em`), the acting user, the relay client and a server-side `t`.
 */
export type RequestCtx = {
  em: ReturnType<ConsoleServices['orm']['em']['fork']>;
  actor: SessionUser | null;
  relay: ConsoleServices['relay'];
  options: ConsoleServices['options'];
  /** Seals and opens channel keys (SECRETS_KEY; plaintext without it). */
  secrets: ConsoleServices['secrets'];
  t: TFunction;
};

export async function createRequestCtx(request: Request, services: ConsoleServices): Promise<RequestCtx> {
  const [actor, t] = await Promise.all([getSessionUser(request, services), getFixedT(request)]);
  return {
    em: services.orm.em.fork(),
    actor,
    relay: services.relay,
    options: services.options,
    secrets: services.secrets,
    t,
  };
}
