import type { LoaderFunctionArgs } from '@remix-run/node';
import { userPricingApi } from '#app/domain/pricing/http.server.ts';
import { selfGroups } from '#app/domain/pricing/pricing.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/user/self/groups (seed 001 §7): the caller's usable groups, group -> {desc, ratio}. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return userPricingApi(request, context, async (ctx) => ok(selfGroups(ctx)));
}
