import type { LoaderFunctionArgs } from '@remix-run/node';
import { domainApi } from '#app/domain/http.server.ts';
import { listSelfMidjourney, parseMidjourneyQuery } from '#app/domain/midjourney/midjourney.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/mj/self/?p&page_size&mj_id&start_timestamp&end_timestamp: the signed-in user's tasks only. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return domainApi(request, context, {}, async (ctx) =>
    ok(
      await listSelfMidjourney(
        ctx,
        parseMidjourneyQuery(ctx, Object.fromEntries(new URL(request.url).searchParams)),
      ),
    ),
  );
}
