import type { LoaderFunctionArgs } from '@remix-run/node';
import { z } from 'zod';
import { authApi } from '#app/domain/auth/http.server.ts';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { issueEmailCode } from '#app/domain/mail/verification.server.ts';
import { clientIp, enforceCriticalLimit } from '#app/domain/security/rate-limit.server.ts';
import { turnstileToken, verifyTurnstile } from '#app/domain/security/turnstile.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

export const VerificationQuery = z.object({
  email: z.string().trim().default(''),
  purpose: z.enum(['register', 'bind']).catch('register'),
});

/** GET /api/verification?email&turnstile[&purpose=register|bind]: mails a 6-digit code (10 minutes, single use). */
export function loader({ request, context }: LoaderFunctionArgs) {
  return authApi(context, async (services) => {
    const t = await authT(request);
    const ip = clientIp(request, services);
    await enforceCriticalLimit(request, services, 'verification');
    await verifyTurnstile(services, turnstileToken(request), ip, t);
    const url = new URL(request.url);
    const query = VerificationQuery.parse({
      email: url.searchParams.get('email') ?? '',
      purpose: url.searchParams.get('purpose') ?? 'register',
    });
    await issueEmailCode(
      {
        em: services.orm.em.fork(),
        options: services.options,
        t,
        ip,
        ...(services.mailTransport ? { mailTransport: services.mailTransport } : {}),
      },
      query.email,
      query.purpose,
    );
    return ok(null, t('email.codeSent'));
  });
}
