import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import {
  createChannelSchema,
  createChannels,
  listChannels,
  listQuerySchema,
  parseInput,
  updateChannel,
  updateChannelSchema,
} from '#app/domain/channels/channels.server.ts';
import { channelsApi, queryOf } from '#app/domain/channels/http.server.ts';
import { methodNotAllowed, ok, readBody } from '#app/utils/envelope.server.ts';

/**
 * GET /api/channel/?p&page_size&id_sort&tag_mode: data { items, page, total, page_size, id_sort, tag_mode };
 * items are `{kind: 'channel', channel}` or, in tag mode, `{kind: 'tag', tag, children}`. Keys are left out.
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return channelsApi(request, context, async (ctx) => {
    const q = parseInput(ctx, listQuerySchema, queryOf(request));
    return ok(
      await listChannels(ctx, { page: q.p, pageSize: q.page_size, idSort: q.id_sort, tagMode: q.tag_mode }),
    );
  });
}

/**
 * POST /api/channel/ (channel fields; mode=batch makes one channel per key line): data is the list of new ids.
 * PUT /api/channel/ {id, ...changed fields}: data is the channel (without its key).
 */
export function action({ request, context }: ActionFunctionArgs) {
  return channelsApi(request, context, async (ctx) => {
    if (request.method === 'POST') {
      const ids = await createChannels(ctx, parseInput(ctx, createChannelSchema, await readBody(request)));
      return ok(ids);
    }
    if (request.method === 'PUT')
      return ok(await updateChannel(ctx, parseInput(ctx, updateChannelSchema, await readBody(request))));
    return methodNotAllowed('GET, POST, PUT');
  });
}
