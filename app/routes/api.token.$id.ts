import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import { parseId, tokensApi } from '#app/domain/tokens/http.server.ts';
import { deleteToken, getToken } from '#app/domain/tokens/tokens.server.ts';
import { methodNotAllowed, ok } from '#app/utils/envelope.server.ts';

/** GET /api/token/{id}: one of the caller's tokens (someone else's id answers "not found"). */
export function loader({ request, context, params }: LoaderFunctionArgs) {
  return tokensApi(request, context, async (ctx) => ok(await getToken(ctx, parseId(params.id))));
}

/** DELETE /api/token/{id}/: deletes one of the caller's tokens. */
export function action({ request, context, params }: ActionFunctionArgs) {
  return tokensApi(request, context, async (ctx) => {
    if (request.method !== 'DELETE') return methodNotAllowed('GET, DELETE');
    await deleteToken(ctx, parseId(params.id));
    return ok(null);
  });
}
