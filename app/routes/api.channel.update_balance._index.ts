import type { LoaderFunctionArgs } from '@remix-run/node';
import { channelOpsApi, updateAllChannelBalances } from '#app/domain/channels/relay-ops.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/channel/update_balance: refreshes every enabled channel; data { total, succeeded, failed[] }. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return channelOpsApi(request, context, async (ctx) => ok(await updateAllChannelBalances(ctx)));
}
