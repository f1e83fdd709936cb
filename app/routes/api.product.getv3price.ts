import type { LoaderFunctionArgs } from '@remix-run/node';
import { adminPricingApi } from '#app/domain/pricing/http.server.ts';
import { v3Price } from '#app/domain/pricing/model-tab.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/product/getv3price (admin, seed 000 §7): data {ModelPrice, ModelRatio, CompletionRatio}. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return adminPricingApi(request, context, async (ctx) => ok(v3Price(ctx.options)));
}
