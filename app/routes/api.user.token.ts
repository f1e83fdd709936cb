import type { LoaderFunctionArgs } from '@remix-run/node';
import { issueAccessToken } from '#app/domain/account/account.server.ts';
import { accountApi } from '#app/domain/account/http.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/user/token: a new system access token (data is the token); the previous one stops working. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return accountApi(request, context, async (ctx) => ok(await issueAccessToken(ctx)));
}
