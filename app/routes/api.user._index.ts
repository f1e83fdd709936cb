import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import { usersApi } from '#app/domain/users/http.server.ts';
import {
  createUser,
  createUserSchema,
  listUsers,
  pageQuerySchema,
  parseInput,
  updateUser,
  updateUserSchema,
} from '#app/domain/users/users.server.ts';
import { fail, ok, readBody } from '#app/utils/envelope.server.ts';

/** GET /api/user/?p={1-based, 0 = 1}&page_size={1..100}: data { items, page, total, page_size }. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return usersApi(request, context, async (ctx) => {
    const q = parseInput(ctx, pageQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    return ok(await listUsers(ctx, { page: q.p, pageSize: q.page_size }));
  });
}

/** POST /api/user/ {username, display_name, password}; PUT /api/user/ {id, username, display_name, password, group, quota}. */
export function action({ request, context }: ActionFunctionArgs) {
  return usersApi(request, context, async (ctx) => {
    if (request.method === 'POST') {
      const input = parseInput(ctx, createUserSchema, await readBody(request));
      return ok(await createUser(ctx, input));
    }
    if (request.method === 'PUT') {
      const input = parseInput(ctx, updateUserSchema, await readBody(request));
      return ok(await updateUser(ctx, input));
    }
    return fail('method not allowed', 405, { headers: { Allow: 'GET, POST, PUT' } });
  });
}
