import type { LoaderFunctionArgs } from '@remix-run/node';
import { listChannelModels } from '#app/domain/channels/channels.server.ts';
import { channelsApi } from '#app/domain/channels/http.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/channel/models: data is the list of model ids (channels' models and priced models), sorted. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return channelsApi(request, context, async (ctx) => ok(await listChannelModels(ctx)));
}
