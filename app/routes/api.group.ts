import type { LoaderFunctionArgs } from '@remix-run/node';
import { usersApi } from '#app/domain/users/http.server.ts';
import { listGroups } from '#app/domain/users/users.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/group/ (admin): the group names, i.e. the keys of the GroupRatio option. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return usersApi(request, context, async (ctx) => ok(listGroups(ctx)));
}
