import type { LoaderFunctionArgs } from '@remix-run/node';
import { channelOpsApi, fetchChannelModels } from '#app/domain/channels/relay-ops.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}

/** GET /api/channel/fetch_models/{id}: data is the model ids the saved channel's upstream lists. */
export function loader({ request, context, params }: LoaderFunctionArgs) {
  return channelOpsApi(request, context, async (ctx) =>
    ok(await fetchChannelModels(ctx, parseId(params.id))),
  );
}
