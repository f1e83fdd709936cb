import type { LoaderFunctionArgs } from '@remix-run/node';
import { getAffCode } from '#app/domain/account/account.server.ts';
import { accountApi } from '#app/domain/account/http.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/user/aff: the caller's invite code (created when missing). */
export function loader({ request, context }: LoaderFunctionArgs) {
  return accountApi(request, context, async (ctx) => ok(await getAffCode(ctx)));
}
