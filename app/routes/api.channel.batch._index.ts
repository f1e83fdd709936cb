import type { ActionFunctionArgs } from '@remix-run/node';
import { deleteChannels, idsSchema, parseInput } from '#app/domain/channels/channels.server.ts';
import { channelsApi } from '#app/domain/channels/http.server.ts';
import { methodNotAllowed, ok, readBody } from '#app/utils/envelope.server.ts';

export function loader() {
  return methodNotAllowed('POST');
}

/** POST /api/channel/batch {ids}: deletes those channels; data is the count. */
export function action({ request, context }: ActionFunctionArgs) {
  return channelsApi(request, context, async (ctx) => {
    if (request.method !== 'POST') return methodNotAllowed('POST');
    const { ids } = parseInput(ctx, idsSchema, await readBody(request));
    return ok(await deleteChannels(ctx, ids));
  });
}
