import type { LoaderFunctionArgs } from '@remix-run/node';
import { redemptionsApi } from '#app/domain/redemptions/http.server.ts';
import {
  parseInput,
  searchQuerySchema,
  searchRedemptions,
} from '#app/domain/redemptions/redemptions.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/redemption/search?keyword&p&page_size: data { items, page, total, page_size }. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return redemptionsApi(request, context, async (ctx) => {
    const q = parseInput(ctx, searchQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    return ok(await searchRedemptions(ctx, { keyword: q.keyword, page: q.p, pageSize: q.page_size }));
  });
}
