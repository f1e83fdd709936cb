import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import { redemptionsApi } from '#app/domain/redemptions/http.server.ts';
import {
  createRedemptionSchema,
  createRedemptions,
  listRedemptions,
  pageQuerySchema,
  parseInput,
  updateRedemption,
  updateRedemptionSchema,
} from '#app/domain/redemptions/redemptions.server.ts';
import { fail, ok, readBody } from '#app/utils/envelope.server.ts';

/** GET /api/redemption/?p={1-based, 0 = 1}&page_size={1..100}: data { items, page, total, page_size }. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return redemptionsApi(request, context, async (ctx) => {
    const q = parseInput(ctx, pageQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    return ok(await listRedemptions(ctx, { page: q.p, pageSize: q.page_size }));
  });
}

/**
 * POST /api/redemption/ {name, quota, count}: data is the list of generated codes.
 * PUT /api/redemption/ {id, name, quota}; PUT /api/redemption/?status_only=true {id, status} (the flag may also
 * come in the body).
 */
export function action({ request, context }: ActionFunctionArgs) {
  return redemptionsApi(request, context, async (ctx) => {
    if (request.method === 'POST') {
      const input = parseInput(ctx, createRedemptionSchema, await readBody(request));
      return ok(await createRedemptions(ctx, input));
    }
    if (request.method === 'PUT') {
      const body = await readBody(request);
      const statusOnly = new URL(request.url).searchParams.get('status_only');
      const input = parseInput(ctx, updateRedemptionSchema, {
        ...body,
        ...(statusOnly !== null ? { status_only: statusOnly } : {}),
      });
      return ok(await updateRedemption(ctx, input));
    }
    return fail('method not allowed', 405, { headers: { Allow: 'GET, POST, PUT' } });
  });
}
