import type { ActionFunctionArgs } from '@remix-run/node';
import { authApi, parseAuthInput } from '#app/domain/auth/http.server.ts';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { ResetConfirmSchema, resetPassword } from '#app/domain/auth/password-reset.server.ts';
import { clientIp, enforceCriticalLimit } from '#app/domain/security/rate-limit.server.ts';
import { ok, readBody } from '#app/utils/envelope.server.ts';

/** POST /api/user/reset {email, token} -> data is the new password; every session of the user ends. */
export function action({ request, context }: ActionFunctionArgs) {
  return authApi(context, async (services) => {
    const t = await authT(request);
    await enforceCriticalLimit(request, services, 'reset');
    const input = parseAuthInput(t, ResetConfirmSchema, await readBody(request));
    const password = await resetPassword(
      { em: services.orm.em.fork(), options: services.options, t, ip: clientIp(request, services) },
      input,
    );
    return ok(password, t('reset.success'));
  });
}
