import type { ActionFunctionArgs } from '@remix-run/node';
import { authApi, parseAuthInput } from '#app/domain/auth/http.server.ts';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { loginWithPassword, PasswordLoginSchema } from '#app/domain/auth/login.server.ts';
import { clientIp, enforceCriticalLimit } from '#app/domain/security/rate-limit.server.ts';
import { turnstileToken, verifyTurnstile } from '#app/domain/security/turnstile.server.ts';
import { ok, readBody } from '#app/utils/envelope.server.ts';

/** POST /api/user/login?turnstile= {username (or e-mail), password} -> data is the user; sets the session cookie. */
export function action({ request, context }: ActionFunctionArgs) {
  return authApi(context, async (services) => {
    const t = await authT(request);
    await enforceCriticalLimit(request, services, 'login');
    await verifyTurnstile(services, turnstileToken(request), clientIp(request, services), t);
    const credentials = parseAuthInput(t, PasswordLoginSchema, await readBody(request));
    const { user, cookies } = await loginWithPassword(services, credentials, request);
    return ok(user, '', { headers: cookies.map((cookie): [string, string] => ['Set-Cookie', cookie]) });
  });
}
