import type { LoaderFunctionArgs } from '@remix-run/node';
import { usersApi } from '#app/domain/users/http.server.ts';
import { parseInput, searchQuerySchema, searchUsers } from '#app/domain/users/users.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/user/search?keyword&group&p&page_size: data { items, page, total, page_size }. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return usersApi(request, context, async (ctx) => {
    const q = parseInput(ctx, searchQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    return ok(
      await searchUsers(ctx, { keyword: q.keyword, group: q.group, page: q.p, pageSize: q.page_size }),
    );
  });
}
