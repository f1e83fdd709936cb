import { Hono } from 'hono';
import type { Logger } from '../log.ts';
import type { RelayStore } from '../store/types.ts';
import { DEFAULT_MAX_BODY_BYTES, limitBodies } from './body.ts';
import { modelApiCors } from './cors.ts';
import { type ApiFront, defaultFronts, frontFor } from './fronts.ts';

export type HttpAppDeps = {
  store: RelayStore;
  log: Logger;
  fronts?: readonly ApiFront[];
  /** True once the relay is stopping: readiness fails so load balancers move traffic away. */
  isDraining?: () => boolean;
  /** How long /readyz waits for the store. */
  readyTimeoutMs?: number;
  /** RELAY_MAX_BODY_BYTES (default 32 MiB). */
  maxBodyBytes?: number;
};

/**
 * The relay's HTTP surface: health routes plus the model API fronts. Liveness (/healthz) says only that the
 * process serves HTTP; readiness (/readyz) also needs the store and fails while draining.
 */
export function createHttpApp(deps: HttpAppDeps): Hono {
  const fronts = deps.fronts ?? defaultFronts;
  const app = new Hono();

  // Browser clients on any origin (ADR 015), then the body bound; both answer before the routes (a preflight
  // never reaches them, a refused body is never read).
  app.use('*', modelApiCors());
  app.use(
    '*',
    limitBodies(deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, (pathname) => frontFor(fronts, pathname).error),
  );

  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  app.get('/readyz', async (c) => {
    if (deps.isDraining?.()) return c.json({ status: 'draining', store: deps.store.mode }, 503);
    try {
      await withTimeout(deps.store.ping(), deps.readyTimeoutMs ?? 1_000, 'store ping timed out');
      return c.json({ status: 'ok', store: deps.store.mode });
    } catch (err) {
      return c.json({ status: 'unavailable', store: deps.store.mode, error: (err as Error).message }, 503);
    }
  });

  for (const front of fronts) front.mount?.(app);

  app.notFound((c) => {
    const { pathname } = new URL(c.req.url);
    return frontFor(fronts, pathname).error({
      status: 404,
      message: `Invalid URL (${c.req.method} ${pathname})`,
      type: 'invalid_request_error',
    });
  });

  app.onError((err, c) => {
    deps.log.error(`unhandled error on ${c.req.method} ${c.req.path}`, err);
    return frontFor(fronts, new URL(c.req.url).pathname).error({
      status: 500,
      message: 'internal error',
      type: 'server_error',
    });
  });

  return app;
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
