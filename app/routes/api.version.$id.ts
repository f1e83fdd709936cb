import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import { versionsApi } from '#app/domain/versions/http.server.ts';
import { deleteVersion, getVersion } from '#app/domain/versions/versions.server.ts';
import { fail, ok } from '#app/utils/envelope.server.ts';

function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}

/** GET /api/version/{id} (admin): one row in the list's format. */
export function loader({ request, context, params }: LoaderFunctionArgs) {
  return versionsApi(request, context, async (ctx) => ok(await getVersion(ctx, parseId(params.id))));
}

/** DELETE /api/version/{id} (admin). */
export function action({ request, context, params }: ActionFunctionArgs) {
  return versionsApi(request, context, async (ctx) => {
    if (request.method !== 'DELETE')
      return fail('method not allowed', 405, { headers: { Allow: 'GET, DELETE' } });
    await deleteVersion(ctx, parseId(params.id));
    return ok(null);
  });
}
