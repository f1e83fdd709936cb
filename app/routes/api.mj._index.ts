import type { LoaderFunctionArgs } from '@remix-run/node';
import { Role } from '@switchyard/db/entities/user.ts';
import { domainApi } from '#app/domain/http.server.ts';
import { listAllMidjourney, parseMidjourneyQuery } from '#app/domain/midjourney/midjourney.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/**
 * GET /api/mj/?p&page_size&channel_id&mj_id&start_timestamp&end_timestamp (admin; times in unix ms):
 * data { items, page, page_size, total } of new-api's Midjourney rows.
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return domainApi(request, context, { minRole: Role.Admin }, async (ctx) =>
    ok(
      await listAllMidjourney(
        ctx,
        parseMidjourneyQuery(ctx, Object.fromEntries(new URL(request.url).searchParams)),
      ),
    ),
  );
}
