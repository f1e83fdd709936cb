import { redirect } from '@remix-run/node';
import { isOAuth2Provider, providerEndpoints } from '#app/domain/oauth/oauth2.server.ts';
import { issueOAuthState } from '#app/domain/oauth/state.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

/**
 * The GitHub / LinuxDO buttons (with or without JavaScript): the login form posts intent=oauth, and the
 * answer binds a fresh state to this browser (engineer B's issueOAuthState, the one GET /api/oauth/state
 * uses) and redirects to the provider's authorize page (B's providerEndpoints, so OAUTH_*_AUTHORIZE_URL
 * overrides apply). Unknown or disabled providers go back to /login.
 */
const SETTINGS = {
  github: { enabled: 'GitHubOAuthEnabled', clientId: 'GitHubClientId', scope: 'user:email' },
  linuxdo: { enabled: 'LinuxDOOAuthEnabled', clientId: 'LinuxDOClientId', scope: '' },
} as const;

export function oauthStartRedirect(
  request: Request,
  services: ConsoleServices,
  provider: string,
  aff: string | null,
): Response {
  if (!isOAuth2Provider(provider)) return redirect('/login');
  const settings = SETTINGS[provider];
  if (services.options.get(settings.enabled) !== true) return redirect('/login');
  const { state, setCookie } = issueOAuthState(request, aff);
  const url = new URL(providerEndpoints(provider).authorize);
  url.searchParams.set('client_id', services.options.get(settings.clientId));
  url.searchParams.set('state', state);
  url.searchParams.set('response_type', 'code');
  if (settings.scope) url.searchParams.set('scope', settings.scope);
  return redirect(url.toString(), { headers: { 'Set-Cookie': setCookie } });
}
