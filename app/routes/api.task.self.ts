import type { LoaderFunctionArgs } from '@remix-run/node';
import { domainApi } from '#app/domain/http.server.ts';
import { listSelfTasks, parseTaskQuery } from '#app/domain/tasks/tasks.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/**
 * GET /api/task/self?p&page_size&task_id&platform&action&status&start_timestamp&end_timestamp: the signed-in
 * user's tasks only (channel_id is ignored); data { items, total, page, page_size }.
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return domainApi(request, context, {}, async (ctx) =>
    ok(await listSelfTasks(ctx, parseTaskQuery(ctx, Object.fromEntries(new URL(request.url).searchParams)))),
  );
}
