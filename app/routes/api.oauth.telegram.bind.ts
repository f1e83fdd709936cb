import type { LoaderFunctionArgs } from '@remix-run/node';
import { authenticateApi } from '#app/domain/auth/api-auth.server.ts';
import { requireUser } from '#app/domain/auth/session.server.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { oauthEnvelope, wantsHtml } from '#app/domain/oauth/http.server.ts';
import { oauthT } from '#app/domain/oauth/i18n.server.ts';
import { telegramBind } from '#app/domain/oauth/telegram.server.ts';
import { getServices } from '#app/services.server.ts';
import { ok } from '#app/utils/envelope.server.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

/**
 * GET /api/oauth/telegram/bind with the widget fields (signed-in user). A fetch authenticates like every /api
 * call (New-Api-User header); the widget's browser redirect uses the session and returns to /setting with a
 * flash toast.
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const services = getServices(context);
  if (!wantsHtml(request)) {
    return oauthEnvelope(request, async () => {
      const principal = await authenticateApi(request, services);
      const { t } = await telegramBind(services, request, principal.user.id);
      return ok(null, t('success.bound'));
    });
  }
  const user = await requireUser(request, services);
  const t = await oauthT(request);
  try {
    await telegramBind(services, request, user.id);
    return redirectWithToast('/setting', { type: 'success', message: t('success.bound') });
  } catch (error) {
    if (!isDomainError(error)) throw error;
    return redirectWithToast('/setting', { type: 'error', message: error.message });
  }
}
