import type { LoaderFunctionArgs } from '@remix-run/node';
import { listChannels, parseInput, searchQuerySchema } from '#app/domain/channels/channels.server.ts';
import { channelsApi, queryOf } from '#app/domain/channels/http.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/channel/search?keyword&group&model&id_sort&tag_mode&p&page_size: the same shape as the list. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return channelsApi(request, context, async (ctx) => {
    const q = parseInput(ctx, searchQuerySchema, queryOf(request));
    return ok(
      await listChannels(ctx, {
        keyword: q.keyword,
        group: q.group,
        model: q.model,
        page: q.p,
        pageSize: q.page_size,
        idSort: q.id_sort,
        tagMode: q.tag_mode,
      }),
    );
  });
}
