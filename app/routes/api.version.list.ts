import type { LoaderFunctionArgs } from '@remix-run/node';
import { versionsApi } from '#app/domain/versions/http.server.ts';
import { listQuerySchema, listVersions, parseInput } from '#app/domain/versions/versions.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/**
 * GET /api/version/list[?p&page_size] (admin): data { list, page, total, page_size }, newest first. Without p and
 * page_size, list holds every version.
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return versionsApi(request, context, async (ctx) => {
    const q = parseInput(ctx, listQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    return ok(await listVersions(ctx, { page: q.p, pageSize: q.page_size }));
  });
}
