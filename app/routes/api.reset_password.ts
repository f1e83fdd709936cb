import type { LoaderFunctionArgs } from '@remix-run/node';
import { authApi } from '#app/domain/auth/http.server.ts';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { ResetRequestSchema, requestPasswordReset } from '#app/domain/auth/password-reset.server.ts';
import { clientIp, enforceCriticalLimit } from '#app/domain/security/rate-limit.server.ts';
import { turnstileToken, verifyTurnstile } from '#app/domain/security/turnstile.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/**
 * GET /api/reset_password?email&turnstile: mails `${ServerAddress}/user/reset?email=..&token=..` (15 minutes,
 * single use). The answer is the same whether or not the address belongs to an account.
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return authApi(context, async (services) => {
    const t = await authT(request);
    const ip = clientIp(request, services);
    await enforceCriticalLimit(request, services, 'reset');
    await verifyTurnstile(services, turnstileToken(request), ip, t);
    const { email } = ResetRequestSchema.parse({
      email: new URL(request.url).searchParams.get('email') ?? '',
    });
    await requestPasswordReset(
      {
        em: services.orm.em.fork(),
        options: services.options,
        t,
        ip,
        ...(services.mailTransport ? { mailTransport: services.mailTransport } : {}),
      },
      email,
    );
    return ok(null, t('reset.sent'));
  });
}
