import type { ActionFunctionArgs } from '@remix-run/node';
import { parseInput, setTagStatus, tagOnlySchema } from '#app/domain/channels/channels.server.ts';
import { channelsApi } from '#app/domain/channels/http.server.ts';
import { methodNotAllowed, ok, readBody } from '#app/utils/envelope.server.ts';

export function loader() {
  return methodNotAllowed('POST');
}

/** POST /api/channel/tag/enabled {tag}: every channel with the tag gets status 1; data is the count. */
export function action({ request, context }: ActionFunctionArgs) {
  return channelsApi(request, context, async (ctx) => {
    if (request.method !== 'POST') return methodNotAllowed('POST');
    const { tag } = parseInput(ctx, tagOnlySchema, await readBody(request));
    return ok(await setTagStatus(ctx, tag, 1));
  });
}
