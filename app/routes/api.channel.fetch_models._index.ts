import type { ActionFunctionArgs } from '@remix-run/node';
import { channelOpsApi, fetchModelsForForm } from '#app/domain/channels/relay-ops.server.ts';
import { methodNotAllowed, ok, readBody } from '#app/utils/envelope.server.ts';

/** GET is not part of the contract: answer 405 in the envelope rather than Remix's HTML error. */
export function loader() {
  return methodNotAllowed('POST');
}

/** POST /api/channel/fetch_models {base_url, type, key, other?, setting?}: data is the upstream's model ids. */
export function action({ request, context }: ActionFunctionArgs) {
  return channelOpsApi(request, context, async (ctx) => {
    if (request.method !== 'POST') return methodNotAllowed('POST');
    return ok(await fetchModelsForForm(ctx, await readBody(request)));
  });
}
