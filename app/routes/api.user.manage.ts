import type { ActionFunctionArgs } from '@remix-run/node';
import { usersApi } from '#app/domain/users/http.server.ts';
import { manageUser, manageUserSchema, parseInput } from '#app/domain/users/users.server.ts';
import { fail, ok, readBody } from '#app/utils/envelope.server.ts';

/** POST /api/user/manage {id, action: promote|demote|disable|enable|delete} -> data { status, role }. */
export function action({ request, context }: ActionFunctionArgs) {
  return usersApi(request, context, async (ctx) => {
    if (request.method !== 'POST') return fail('method not allowed', 405, { headers: { Allow: 'POST' } });
    const input = parseInput(ctx, manageUserSchema, await readBody(request));
    return ok(await manageUser(ctx, input));
  });
}
