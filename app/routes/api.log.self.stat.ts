import type { LoaderFunctionArgs } from '@remix-run/node';
import { logsApi } from '#app/domain/logs/http.server.ts';
import { logQuerySchema, parseInput, statSelfLogs } from '#app/domain/logs/logs.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/log/self/stat with the self filters: data { quota, rpm, tpm } over the user's own rows. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return logsApi(request, context, { admin: false }, async (ctx) => {
    const q = parseInput(ctx, logQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    return ok(await statSelfLogs(ctx, q));
  });
}
