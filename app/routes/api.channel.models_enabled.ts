import type { LoaderFunctionArgs } from '@remix-run/node';
import { adminPricingApi } from '#app/domain/pricing/http.server.ts';
import { enabledModels } from '#app/domain/pricing/pricing.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/channel/models_enabled (admin): names of the models an enabled channel serves (enabled abilities). */
export function loader({ request, context }: LoaderFunctionArgs) {
  return adminPricingApi(request, context, async (ctx) => ok(await enabledModels(ctx.em)));
}
