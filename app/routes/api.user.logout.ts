import type { LoaderFunctionArgs } from '@remix-run/node';
import { authApi } from '#app/domain/auth/http.server.ts';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { logout } from '#app/domain/auth/session.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/user/logout: revokes this session (the row is deleted) and clears the cookie. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return authApi(context, async (services) => {
    const clear = await logout(request, services);
    return ok(null, (await authT(request))('logout.success'), { headers: { 'Set-Cookie': clear } });
  });
}
