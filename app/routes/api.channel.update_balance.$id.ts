import type { LoaderFunctionArgs } from '@remix-run/node';
import { channelOpsApi, updateChannelBalance } from '#app/domain/channels/relay-ops.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}

/**
 * GET /api/channel/update_balance/{id}/: the upstream balance in USD in `balance`, where new-api's client reads
 * it, and in `data`.
 */
export function loader({ request, context, params }: LoaderFunctionArgs) {
  return channelOpsApi(request, context, async (ctx) => {
    const balance = await updateChannelBalance(ctx, parseId(params.id));
    return ok(balance, '', { fields: { balance } });
  });
}
