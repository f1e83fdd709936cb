import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import { logsApi } from '#app/domain/logs/http.server.ts';
import {
  clearLogsBefore,
  clearLogsSchema,
  listAllLogs,
  logQuerySchema,
  parseInput,
} from '#app/domain/logs/logs.server.ts';
import { methodNotAllowed, ok } from '#app/utils/envelope.server.ts';

const query = (request: Request) => Object.fromEntries(new URL(request.url).searchParams);

/**
 * GET /api/log/?p&page_size&type&username&token_name&model_name&start_timestamp&end_timestamp&channel&group
 * (admin): data { items, page, page_size, total, total_capped, has_more }.
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return logsApi(request, context, { admin: true }, async (ctx) =>
    ok(await listAllLogs(ctx, parseInput(ctx, logQuerySchema, query(request)))),
  );
}

/** DELETE /api/log/?target_timestamp={unix seconds} (admin): deletes older rows; data is the count deleted. */
export function action({ request, context }: ActionFunctionArgs) {
  return logsApi(request, context, { admin: true }, async (ctx) => {
    if (request.method !== 'DELETE') return methodNotAllowed('GET, DELETE');
    const { target_timestamp } = parseInput(ctx, clearLogsSchema, query(request));
    return ok(await clearLogsBefore(ctx, target_timestamp));
  });
}
