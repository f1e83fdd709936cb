import type { ActionFunctionArgs } from '@remix-run/node';
import { redeemApi } from '#app/domain/redemptions/http.server.ts';
import { redeemCode } from '#app/domain/redemptions/redemptions.server.ts';
import { fail, ok, readBody } from '#app/utils/envelope.server.ts';

/** POST /api/user/topup {key}: redeems a code for the signed-in user; data is the quota added. */
export function action({ request, context }: ActionFunctionArgs) {
  return redeemApi(request, context, async (ctx) => {
    if (request.method !== 'POST') return fail('method not allowed', 405, { headers: { Allow: 'POST' } });
    return ok(await redeemCode(ctx, await readBody(request)), ctx.t('redemptions:toast.redeemed'));
  });
}
