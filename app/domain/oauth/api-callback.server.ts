import { oauthEnvelope } from '#app/domain/oauth/http.server.ts';
import { handleOAuth2Callback, type OAuth2Provider } from '#app/domain/oauth/oauth2.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/**
 * GET /api/oauth/{github,linuxdo}?code&state (seed 001 §7): data is the user. Message 'bind' when the id was
 * bound to the signed-in user; otherwise the user is logged in (session cookie set) and the message is empty.
 */
export function oauth2ApiCallback(services: ConsoleServices, request: Request, provider: OAuth2Provider) {
  return oauthEnvelope(
    request,
    async () => {
      const outcome = await handleOAuth2Callback(services, request, provider);
      if (outcome.kind === 'bind') return ok(null, 'bind');
      return ok(outcome.user, '', { headers: { 'Set-Cookie': outcome.setCookie } });
    },
    { clearState: true },
  );
}
