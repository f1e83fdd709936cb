import type { LoaderFunctionArgs } from '@remix-run/node';
import { authenticateApi } from '#app/domain/auth/api-auth.server.ts';
import { bindEmail } from '#app/domain/oauth/email-bind.server.ts';
import { oauthEnvelope } from '#app/domain/oauth/http.server.ts';
import { oauthT } from '#app/domain/oauth/i18n.server.ts';
import { getServices } from '#app/services.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/oauth/email/bind?email&code (signed-in user): binds the e-mail proven by a 'bind' code. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return oauthEnvelope(request, async () => {
    const services = getServices(context);
    const principal = await authenticateApi(request, services);
    const q = new URL(request.url).searchParams;
    await bindEmail(services, request, principal.user.id, {
      email: q.get('email') ?? '',
      code: q.get('code') ?? '',
    });
    return ok(null, (await oauthT(request))('success.bound'));
  });
}
