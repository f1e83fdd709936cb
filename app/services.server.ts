import type { MikroORM } from '@mikro-orm/postgresql';
import type { AppLoadContext } from '@remix-run/server-runtime';
import type { OptionService } from '@switchyard/db/options/service.ts';
import type { RelayClient } from '#app/grpc/relay-client.server.ts';

/**
 * What the console server (server/console.ts) hands to every loader and action as `context.services`.
 * Built once per process; request code forks the EntityManager (`orm.em.fork()`), never uses `orm.em`.
 */
export type ConsoleServices = {
  orm: MikroORM;
  options: OptionService;
  relay: RelayClient | null;
  version: string;
  /** unix seconds */
  startedAt: number;
};

declare module '@remix-run/server-runtime' {
  interface AppLoadContext {
    services: ConsoleServices;
  }
}

export function getServices(context: AppLoadContext): ConsoleServices {
  const services = context?.services;
  if (!services) {
    throw new Error('AppLoadContext.services is missing: the console must be served by server/console.ts');
  }
  return services;
}
