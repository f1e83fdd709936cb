import type { LoaderFunctionArgs } from '@remix-run/node';
import { listUserModels } from '#app/domain/account/account.server.ts';
import { accountApi } from '#app/domain/account/http.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/user/models: model names available to the caller's group ([] when none). */
export function loader({ request, context }: LoaderFunctionArgs) {
  return accountApi(request, context, async (ctx) => ok(await listUserModels(ctx)));
}
