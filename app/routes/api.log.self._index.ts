import type { LoaderFunctionArgs } from '@remix-run/node';
import { logsApi } from '#app/domain/logs/http.server.ts';
import { listSelfLogs, logQuerySchema, parseInput } from '#app/domain/logs/logs.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/**
 * GET /api/log/self/?p&page_size&type&token_name&model_name&start_timestamp&end_timestamp&group: the signed-in
 * user's rows only (username / channel are ignored; channel and the retry path are not shown).
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return logsApi(request, context, { admin: false }, async (ctx) => {
    const q = parseInput(ctx, logQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    return ok(await listSelfLogs(ctx, q));
  });
}
