import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import { deleteChannel, getChannel } from '#app/domain/channels/channels.server.ts';
import { channelsApi, parseId } from '#app/domain/channels/http.server.ts';
import { methodNotAllowed, ok } from '#app/utils/envelope.server.ts';

/** GET /api/channel/{id}: one channel with its key (admins only). */
export function loader({ request, context, params }: LoaderFunctionArgs) {
  return channelsApi(request, context, async (ctx) => ok(await getChannel(ctx, parseId(params.id))));
}

/** DELETE /api/channel/{id}/: the channel and its abilities. */
export function action({ request, context, params }: ActionFunctionArgs) {
  return channelsApi(request, context, async (ctx) => {
    if (request.method !== 'DELETE') return methodNotAllowed('GET, DELETE');
    await deleteChannel(ctx, parseId(params.id));
    return ok(null);
  });
}
