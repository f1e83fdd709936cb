import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import { redemptionsApi } from '#app/domain/redemptions/http.server.ts';
import { deleteRedemption, getRedemption } from '#app/domain/redemptions/redemptions.server.ts';
import { fail, ok } from '#app/utils/envelope.server.ts';

function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}

/** GET /api/redemption/{id}: one code in the wire format. */
export function loader({ request, context, params }: LoaderFunctionArgs) {
  return redemptionsApi(request, context, async (ctx) => ok(await getRedemption(ctx, parseId(params.id))));
}

/** DELETE /api/redemption/{id}/ */
export function action({ request, context, params }: ActionFunctionArgs) {
  return redemptionsApi(request, context, async (ctx) => {
    if (request.method !== 'DELETE')
      return fail('method not allowed', 405, { headers: { Allow: 'GET, DELETE' } });
    await deleteRedemption(ctx, parseId(params.id));
    return ok(null);
  });
}
