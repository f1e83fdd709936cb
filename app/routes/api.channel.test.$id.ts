import type { LoaderFunctionArgs } from '@remix-run/node';
import { channelOpsApi, testChannel } from '#app/domain/channels/relay-ops.server.ts';
import { fail, ok } from '#app/utils/envelope.server.ts';

function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}

/** GET /api/channel/test/{id}?model=: data is the response time in seconds (also on failure, with the message). */
export function loader({ request, context, params }: LoaderFunctionArgs) {
  return channelOpsApi(request, context, async (ctx) => {
    const model = new URL(request.url).searchParams.get('model')?.trim() ?? '';
    const result = await testChannel(ctx, parseId(params.id), model);
    return result.success ? ok(result.time) : fail(result.message, 200, { data: result.time });
  });
}
