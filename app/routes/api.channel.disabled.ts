import type { ActionFunctionArgs } from '@remix-run/node';
import { deleteDisabledChannels } from '#app/domain/channels/channels.server.ts';
import { channelsApi } from '#app/domain/channels/http.server.ts';
import { methodNotAllowed, ok } from '#app/utils/envelope.server.ts';

export function loader() {
  return methodNotAllowed('DELETE');
}

/** DELETE /api/channel/disabled: every disabled channel (status 2 and 3); data is the count. */
export function action({ request, context }: ActionFunctionArgs) {
  return channelsApi(request, context, async (ctx) => {
    if (request.method !== 'DELETE') return methodNotAllowed('DELETE');
    return ok(await deleteDisabledChannels(ctx));
  });
}
