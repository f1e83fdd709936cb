import type { ActionFunctionArgs } from '@remix-run/node';
import { authApi, parseAuthInput } from '#app/domain/auth/http.server.ts';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { RegisterSchema, registerUser } from '#app/domain/auth/register.server.ts';
import { clientIp, enforceCriticalLimit } from '#app/domain/security/rate-limit.server.ts';
import { turnstileToken, verifyTurnstile } from '#app/domain/security/turnstile.server.ts';
import { ok, readBody } from '#app/utils/envelope.server.ts';

/** POST /api/user/register?turnstile= {username, password, password2, email, verification_code, aff_code}. */
export function action({ request, context }: ActionFunctionArgs) {
  return authApi(context, async (services) => {
    const t = await authT(request);
    const ip = clientIp(request, services);
    await enforceCriticalLimit(request, services, 'register');
    await verifyTurnstile(services, turnstileToken(request), ip, t);
    const input = parseAuthInput(t, RegisterSchema, await readBody(request));
    await registerUser({ em: services.orm.em.fork(), options: services.options, t, ip }, input);
    return ok(null, t('register.success'));
  });
}
