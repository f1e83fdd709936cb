import type { LoaderFunctionArgs } from '@remix-run/node';
import { isDomainError } from '#app/domain/errors.ts';
import { oauthEnvelope, wantsHtml } from '#app/domain/oauth/http.server.ts';
import { oauthT } from '#app/domain/oauth/i18n.server.ts';
import { telegramLogin } from '#app/domain/oauth/telegram.server.ts';
import { getServices } from '#app/services.server.ts';
import { ok } from '#app/utils/envelope.server.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

/**
 * GET /api/oauth/telegram/login with the widget fields. A fetch gets the envelope (data: the user); the
 * widget's browser redirect lands on /token (or back on /login with the refusal) with a flash toast.
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const services = getServices(context);
  if (!wantsHtml(request)) {
    return oauthEnvelope(request, async () => {
      const outcome = await telegramLogin(services, request);
      return ok(outcome.user, '', { headers: { 'Set-Cookie': outcome.setCookie } });
    });
  }
  const t = await oauthT(request);
  try {
    const outcome = await telegramLogin(services, request);
    return redirectWithToast(
      '/token',
      { type: 'success', message: t('success.loggedIn') },
      { headers: { 'Set-Cookie': outcome.setCookie } },
    );
  } catch (error) {
    if (!isDomainError(error)) throw error;
    return redirectWithToast('/login', { type: 'error', message: error.message });
  }
}
