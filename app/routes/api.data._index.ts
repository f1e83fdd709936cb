import type { LoaderFunctionArgs } from '@remix-run/node';
import { Role } from '@switchyard/db/entities/user.ts';
import { allQuerySchema, listAllQuotaData, parseQuery } from '#app/domain/dashboard/dashboard.server.ts';
import { domainApi } from '#app/domain/http.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/**
 * GET /api/data/?username&start_timestamp&end_timestamp&default_time (admin): new-api's GetAllQuotaDates, the
 * dashboard's quota_data rows (every user summed per model and hour, or one username's rows).
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return domainApi(request, context, { minRole: Role.Admin }, async (ctx) => {
    const q = parseQuery(ctx, allQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    return ok(await listAllQuotaData(ctx, q));
  });
}
