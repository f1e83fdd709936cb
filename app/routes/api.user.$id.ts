import type { LoaderFunctionArgs } from '@remix-run/node';
import { usersApi } from '#app/domain/users/http.server.ts';
import { getUser } from '#app/domain/users/users.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/user/{id} (admin): one user in the wire format (the log page's user-info dialog uses it). */
export function loader({ request, context, params }: LoaderFunctionArgs) {
  return usersApi(request, context, async (ctx) => {
    const id = /^\d{1,9}$/.test(params.id ?? '') ? Number(params.id) : 0;
    return ok(await getUser(ctx, id));
  });
}
