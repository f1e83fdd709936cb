import type { LoaderFunctionArgs } from '@remix-run/node';
import { Role } from '@switchyard/db/entities/user.ts';
import { domainApi } from '#app/domain/http.server.ts';
import { listAllTasks, parseTaskQuery } from '#app/domain/tasks/tasks.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/**
 * GET /api/task/?p&page_size&channel_id&task_id&platform&action&status&start_timestamp&end_timestamp (admin):
 * data { items, total, page, page_size }, every user's tasks.
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return domainApi(request, context, { minRole: Role.Admin }, async (ctx) =>
    ok(await listAllTasks(ctx, parseTaskQuery(ctx, Object.fromEntries(new URL(request.url).searchParams)))),
  );
}
