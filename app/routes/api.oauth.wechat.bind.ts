import type { LoaderFunctionArgs } from '@remix-run/node';
import { authenticateApi } from '#app/domain/auth/api-auth.server.ts';
import { oauthEnvelope } from '#app/domain/oauth/http.server.ts';
import { wechatBind } from '#app/domain/oauth/wechat.server.ts';
import { getServices } from '#app/services.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/oauth/wechat/bind?code (signed-in user, New-Api-User header): binds the WeChat openid. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return oauthEnvelope(request, async () => {
    const services = getServices(context);
    const principal = await authenticateApi(request, services);
    const code = new URL(request.url).searchParams.get('code');
    const { t } = await wechatBind(services, request, principal.user.id, code);
    return ok(null, t('success.bound'));
  });
}
