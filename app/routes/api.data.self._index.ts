import type { LoaderFunctionArgs } from '@remix-run/node';
import { listSelfQuotaData, parseQuery, selfQuerySchema } from '#app/domain/dashboard/dashboard.server.ts';
import { domainApi } from '#app/domain/http.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/**
 * GET /api/data/self/?start_timestamp&end_timestamp: new-api's GetUserQuotaDates, the caller's own quota_data rows
 * (a span over one month is refused).
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return domainApi(request, context, {}, async (ctx) => {
    const q = parseQuery(ctx, selfQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    return ok(await listSelfQuotaData(ctx, q));
  });
}
