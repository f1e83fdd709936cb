import type { LoaderFunctionArgs } from '@remix-run/node';
import { oauthEnvelope } from '#app/domain/oauth/http.server.ts';
import { wechatLogin } from '#app/domain/oauth/wechat.server.ts';
import { getServices } from '#app/services.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/oauth/wechat?code: log in (or sign up) with the WeChat code; data is the user. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return oauthEnvelope(request, async () => {
    const code = new URL(request.url).searchParams.get('code');
    const outcome = await wechatLogin(getServices(context), request, code);
    return ok(outcome.user, '', { headers: { 'Set-Cookie': outcome.setCookie } });
  });
}
