import type { ActionFunctionArgs } from '@remix-run/node';
import { fixAbilities } from '#app/domain/channels/channels.server.ts';
import { channelsApi } from '#app/domain/channels/http.server.ts';
import { methodNotAllowed, ok } from '#app/utils/envelope.server.ts';

export function loader() {
  return methodNotAllowed('POST');
}

/** POST /api/channel/fix: rebuilds every channel's abilities; data { success, fails } (channel counts). */
export function action({ request, context }: ActionFunctionArgs) {
  return channelsApi(request, context, async (ctx) => {
    if (request.method !== 'POST') return methodNotAllowed('POST');
    return ok(await fixAbilities(ctx));
  });
}
