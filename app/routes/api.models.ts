import type { LoaderFunctionArgs } from '@remix-run/node';
import { adminPricingApi } from '#app/domain/pricing/http.server.ts';
import { channelModelsByType } from '#app/domain/pricing/pricing.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/models (admin, seed 000 §7): channel type -> the models configured on channels of that type. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return adminPricingApi(request, context, async (ctx) => ok(await channelModelsByType(ctx.em)));
}
