import type { ActionFunctionArgs } from '@remix-run/node';
import { editTag, parseInput, tagEditSchema } from '#app/domain/channels/channels.server.ts';
import { channelsApi } from '#app/domain/channels/http.server.ts';
import { methodNotAllowed, ok, readBody } from '#app/utils/envelope.server.ts';

export function loader() {
  return methodNotAllowed('PUT');
}

/** PUT /api/channel/tag {tag, new_tag, model_mapping, groups, models, priority, weight}: data is the count. */
export function action({ request, context }: ActionFunctionArgs) {
  return channelsApi(request, context, async (ctx) => {
    if (request.method !== 'PUT') return methodNotAllowed('PUT');
    return ok(await editTag(ctx, parseInput(ctx, tagEditSchema, await readBody(request))));
  });
}
