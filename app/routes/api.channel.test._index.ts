import type { LoaderFunctionArgs } from '@remix-run/node';
import { channelOpsApi, startTestAllChannels } from '#app/domain/channels/relay-ops.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/channel/test: starts testing all channels in the background; the message says so. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return channelOpsApi(request, context, async (ctx) => ok(null, await startTestAllChannels(ctx)));
}
