/**
 * GET /api/oauth/email/bind?email&code: the signed-in user binds an e-mail address proven by a 'bind' code
 * (issued by GET /api/verification, consumed here). Seed 000 §5: 'please enter email',
 * 'please enter email verification code'; an address another user has is refused.
 */
import { z } from 'zod';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { InputError } from '#app/domain/errors.ts';
import { consumeEmailCode } from '#app/domain/mail/verification.server.ts';
import { bindEmailAddress } from '#app/domain/oauth/accounts.server.ts';
import { oauthT } from '#app/domain/oauth/i18n.server.ts';
import { enforceCriticalLimit } from '#app/domain/security/rate-limit.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

export const emailBindSchema = z.object({
  email: z.string().trim().default(''),
  code: z.string().trim().default(''),
});

export async function bindEmail(
  services: ConsoleServices,
  request: Request,
  actorId: number,
  input: z.input<typeof emailBindSchema>,
): Promise<void> {
  const t = await oauthT(request);
  await enforceCriticalLimit(request, services, 'oauth');
  const { email, code } = emailBindSchema.parse(input);
  if (!email) throw new InputError(t('errors.emailRequired'), { email: [t('errors.emailRequired')] });
  if (!code) throw new InputError(t('errors.emailCodeRequired'), { code: [t('errors.emailCodeRequired')] });
  if (email.length > 255 || !z.email().safeParse(email).success) {
    throw new InputError(t('errors.emailInvalid'), { email: [t('errors.emailInvalid')] });
  }
  await bindEmailAddress(services, request, t, actorId, email, async (em) => {
    await consumeEmailCode(em, email, 'bind', code, await authT(request));
  });
}
