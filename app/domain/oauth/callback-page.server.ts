import { data } from '@remix-run/node';
import { isDomainError } from '#app/domain/errors.ts';
import { oauthT } from '#app/domain/oauth/i18n.server.ts';
import { handleOAuth2Callback, type OAuth2Provider } from '#app/domain/oauth/oauth2.server.ts';
import { clearStateCookies } from '#app/domain/oauth/state.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

/**
 * Loader of the /oauth/github and /oauth/linuxdo pages (seed 001 §2.16, §4): the same domain function as the
 * JSON route, server-side, so it works without JavaScript. Bind -> /setting 'bound successfully'; login ->
 * session cookie + /token 'logged in successfully'; a refusal renders the message and a way to /setting.
 */
export async function oauthCallbackLoader(
  services: ConsoleServices,
  request: Request,
  provider: OAuth2Provider,
) {
  const headers = new Headers();
  for (const c of clearStateCookies(request)) headers.append('Set-Cookie', c);
  try {
    const outcome = await handleOAuth2Callback(services, request, provider);
    const { t } = outcome;
    if (outcome.kind === 'bind') {
      return redirectWithToast('/setting', { type: 'success', message: t('success.bound') }, { headers });
    }
    headers.append('Set-Cookie', outcome.setCookie);
    return redirectWithToast('/token', { type: 'success', message: t('success.loggedIn') }, { headers });
  } catch (error) {
    if (error instanceof Response) throw error;
    let message: string;
    let status = 200;
    if (isDomainError(error)) {
      message = error.message;
      if (error.status === 429) status = 429;
    } else {
      console.error(error);
      message = (await oauthT(request))('callback.failed');
    }
    return data({ provider, message }, { status, headers });
  }
}
