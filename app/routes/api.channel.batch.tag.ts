import type { ActionFunctionArgs } from '@remix-run/node';
import { batchTagSchema, parseInput, setChannelsTag } from '#app/domain/channels/channels.server.ts';
import { channelsApi } from '#app/domain/channels/http.server.ts';
import { methodNotAllowed, ok, readBody } from '#app/utils/envelope.server.ts';

export function loader() {
  return methodNotAllowed('POST');
}

/** POST /api/channel/batch/tag {ids, tag}: data is the count tagged. */
export function action({ request, context }: ActionFunctionArgs) {
  return channelsApi(request, context, async (ctx) => {
    if (request.method !== 'POST') return methodNotAllowed('POST');
    const { ids, tag } = parseInput(ctx, batchTagSchema, await readBody(request));
    return ok(await setChannelsTag(ctx, ids, tag));
  });
}
