import type { LoaderFunctionArgs } from '@remix-run/node';
import { channelOpsApi, testChannel } from '#app/domain/channels/relay-ops.server.ts';
import { fail, ok } from '#app/utils/envelope.server.ts';

function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}

/**
 * GET /api/channel/test/{id}?model=: the response time in seconds in `time`, where new-api's client reads it, and
 * in `data`; also on failure, with the message.
 */
export function loader({ request, context, params }: LoaderFunctionArgs) {
  return channelOpsApi(request, context, async (ctx) => {
    const model = new URL(request.url).searchParams.get('model')?.trim() ?? '';
    const result = await testChannel(ctx, parseId(params.id), model);
    const fields = { time: result.time };
    return result.success
      ? ok(result.time, '', { fields })
      : fail(result.message, 200, { data: result.time, fields });
  });
}
