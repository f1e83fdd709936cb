import type { ActionFunctionArgs } from '@remix-run/node';
import { fixAbilities } from '#app/domain/channels/channels.server.ts';
import { channelsApi } from '#app/domain/channels/http.server.ts';
import { methodNotAllowed, ok } from '#app/utils/envelope.server.ts';

export function loader() {
  return methodNotAllowed('POST');
}

/**
 * POST /api/channel/fix: rebuilds every channel's abilities; `data` is the count of channels fixed (seed 001 §7,
 * new-api), the message says how many failed.
 */
export function action({ request, context }: ActionFunctionArgs) {
  return channelsApi(request, context, async (ctx) => {
    if (request.method !== 'POST') return methodNotAllowed('POST');
    const result = await fixAbilities(ctx);
    return ok(result.success, ctx.t('channels:toast.fixed', result));
  });
}
