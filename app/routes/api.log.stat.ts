import type { LoaderFunctionArgs } from '@remix-run/node';
import { logsApi } from '#app/domain/logs/http.server.ts';
import { logQuerySchema, parseInput, statAllLogs } from '#app/domain/logs/logs.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/log/stat (admin) with the list filters: data { quota, rpm, tpm }. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return logsApi(request, context, { admin: true }, async (ctx) => {
    const q = parseInput(ctx, logQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    return ok(await statAllLogs(ctx, q));
  });
}
