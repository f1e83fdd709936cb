import type { LoaderFunctionArgs } from '@remix-run/node';
import { publicPricingApi } from '#app/domain/pricing/http.server.ts';
import { pricing } from '#app/domain/pricing/pricing.server.ts';

/**
 * GET /api/pricing (public, seed 001 §7): {success, message, data: PricingEntry[], group_ratio, usable_group}
 * for the caller's usable groups (a visitor's: UserUsableGroups). The two maps sit beside the envelope.
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return publicPricingApi(request, context, async (ctx) => {
    const { data, group_ratio, usable_group } = await pricing(ctx);
    return Response.json(
      { success: true, message: '', data, group_ratio, usable_group },
      { headers: { 'Cache-Control': 'no-store' } },
    );
  });
}
