import type { ActionFunctionArgs } from '@remix-run/node';
import { transferAffQuota } from '#app/domain/account/account.server.ts';
import { accountApi } from '#app/domain/account/http.server.ts';
import { methodNotAllowed, ok, readBody } from '#app/utils/envelope.server.ts';

/** POST /api/user/aff_transfer {quota}: moves pending invitation earnings into the balance. */
export function action({ request, context }: ActionFunctionArgs) {
  return accountApi(request, context, async (ctx) => {
    if (request.method !== 'POST') return methodNotAllowed('POST');
    return ok(await transferAffQuota(ctx, await readBody(request)), ctx.t('settings:toast.transferred'));
  });
}
