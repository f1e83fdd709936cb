import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import { deleteSelf, getSelf, updateSelf } from '#app/domain/account/account.server.ts';
import { accountApi, keptSessionId } from '#app/domain/account/http.server.ts';
import { clearSessionCookie } from '#app/domain/auth/session.server.ts';
import { methodNotAllowed, ok, readBody } from '#app/utils/envelope.server.ts';

/** GET /api/user/self: the signed-in user's wire fields (never the password hash or access token). */
export function loader({ request, context }: LoaderFunctionArgs) {
  return accountApi(request, context, async (ctx) => ok(await getSelf(ctx)));
}

/**
 * PUT /api/user/self {username, display_name, password, password2?, original_password}: edits the caller only;
 * a new password needs the current one (`original_password`, new-api's name) when the account has one.
 * DELETE /api/user/self {confirm (or ?confirm=), password}: deregisters the caller, revokes every session, clears
 * the cookie; `password` (or `original_password`) is the current password, required when the account has one.
 */
export function action({ request, context }: ActionFunctionArgs) {
  return accountApi(request, context, async (ctx, principal) => {
    if (request.method === 'PUT') {
      const user = await updateSelf(ctx, await readBody(request), {
        currentSessionId: await keptSessionId(request, principal),
      });
      return ok(user, ctx.t('settings:toast.updated'));
    }
    if (request.method === 'DELETE') {
      const body = await readBody(request);
      const confirm = body.confirm ?? new URL(request.url).searchParams.get('confirm') ?? '';
      await deleteSelf(ctx, { confirm, password: body.password, original_password: body.original_password });
      return ok(null, ctx.t('settings:toast.deleted'), {
        headers: { 'Set-Cookie': clearSessionCookie(request) },
      });
    }
    return methodNotAllowed('GET, PUT, DELETE');
  });
}
