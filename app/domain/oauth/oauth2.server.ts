/**
 * GitHub and LinuxDO OAuth2 callbacks (GET /api/oauth/{github,linuxdo}?code&state and the /oauth/* pages).
 * The flow: the browser got a state from GET /api/oauth/state (cookie-bound, see state.server.ts), went to the
 * provider's authorize page and came back with code + state. Here: critical rate limit, provider enabled,
 * state bound to this browser, fresh and unused; then a remix-auth-oauth2 strategy checks the state against
 * the cookie again, exchanges the code and reads the profile; the identity logs in, signs up or is bound to
 * the signed-in user.
 */
import type { OptionKey } from '@switchyard/db/options/registry.ts';
import type { TFunction } from 'i18next';
import { OAuth2Strategy } from 'remix-auth-oauth2';
import { getSessionUser } from '#app/domain/auth/session.server.ts';
import { InputError, isDomainError } from '#app/domain/errors.ts';
import {
  type BindOutcome,
  bindIdentity,
  type ExternalIdentity,
  type LoginOutcome,
  loginOrSignUp,
  providerName,
} from '#app/domain/oauth/accounts.server.ts';
import { oauthT } from '#app/domain/oauth/i18n.server.ts';
import {
  consumeState,
  isFresh,
  issueOAuthState,
  readStateBinding,
  STATE_COOKIE,
} from '#app/domain/oauth/state.server.ts';
import { enforceCriticalLimit } from '#app/domain/security/rate-limit.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

export type OAuth2Provider = 'github' | 'linuxdo';

type ProviderConfig = {
  enabled: OptionKey;
  clientId: OptionKey;
  clientSecret: OptionKey;
  env: string;
  authorize: string;
  token: string;
  user: string;
  scopes: string[];
};

const PROVIDERS: Record<OAuth2Provider, ProviderConfig> = {
  github: {
    enabled: 'GitHubOAuthEnabled',
    clientId: 'GitHubClientId',
    clientSecret: 'GitHubClientSecret',
    env: 'OAUTH_GITHUB',
    authorize: 'https://github.com/login/oauth/authorize',
    token: 'https://github.com/login/oauth/access_token',
    user: 'https://api.github.com/user',
    scopes: ['user:email'],
  },
  linuxdo: {
    enabled: 'LinuxDOOAuthEnabled',
    clientId: 'LinuxDOClientId',
    clientSecret: 'LinuxDOClientSecret',
    env: 'OAUTH_LINUXDO',
    authorize: 'https://connect.linux.do/oauth2/authorize',
    token: 'https://connect.linux.do/oauth2/token',
    user: 'https://connect.linux.do/api/user',
    scopes: [],
  },
};

export function isOAuth2Provider(value: string): value is OAuth2Provider {
  return value === 'github' || value === 'linuxdo';
}

/** The provider's endpoints: OAUTH_<PROVIDER>_{AUTHORIZE,TOKEN,USER}_URL override the public defaults. */
export function providerEndpoints(provider: OAuth2Provider, env: NodeJS.ProcessEnv = process.env) {
  const c = PROVIDERS[provider];
  return {
    authorize: env[`${c.env}_AUTHORIZE_URL`] || c.authorize,
    token: env[`${c.env}_TOKEN_URL`] || c.token,
    user: env[`${c.env}_USER_URL`] || c.user,
  };
}

/** Reads the provider's user endpoint and turns the answer into an identity (GitHub: numeric id, stable). */
async function fetchIdentity(
  provider: OAuth2Provider,
  accessToken: string,
  t: TFunction,
): Promise<ExternalIdentity> {
  const name = providerName(t, provider);
  let body: Record<string, unknown>;
  try {
    const res = await fetch(providerEndpoints(provider).user, {
      headers: {
        Authorization: `Bearer ${accessToken}`,
        Accept: 'application/json',
        'User-Agent': 'Switchyard',
      },
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    throw new InputError(t('errors.exchangeFailed', { provider: name }));
  }
  const id = body.id;
  if ((typeof id !== 'number' && typeof id !== 'string') || String(id) === '' || String(id).length > 64) {
    throw new InputError(t('errors.profileInvalid', { provider: name }));
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  if (provider === 'github') {
    return {
      provider,
      id: String(id),
      displayName: str(body.name) || str(body.login),
      email: str(body.email) || undefined,
    };
  }
  if (body.active === false || body.silenced === true) throw new InputError(t('errors.linuxdoInactive'));
  return { provider, id: String(id), displayName: str(body.name) || str(body.username) };
}

/**
 * remix-auth-oauth2's strategy with the provider's endpoints and the client id/secret of the options. The
 * authorize link is built by the browser from /api/oauth/state (no PKCE, as new-api), so the code is
 * exchanged without a code verifier; the strategy's state store cookie slot carries our binding instead.
 */
class ProviderStrategy extends OAuth2Strategy<ExternalIdentity> {
  protected override validateAuthorizationCode(code: string, _binding: string) {
    return this.client.validateAuthorizationCode(this.options.tokenEndpoint.toString(), code, null);
  }
}

function strategyFor(services: ConsoleServices, provider: OAuth2Provider, t: TFunction) {
  const c = PROVIDERS[provider];
  const endpoints = providerEndpoints(provider);
  const clientId = String(services.options.get(c.clientId) ?? '');
  const clientSecret = String(services.options.get(c.clientSecret) ?? '');
  if (!clientId || !clientSecret) {
    throw new InputError(t('errors.notConfigured', { provider: providerName(t, provider) }));
  }
  const strategy = new ProviderStrategy(
    {
      cookie: STATE_COOKIE,
      clientId,
      clientSecret,
      redirectURI: null as unknown as string,
      authorizationEndpoint: endpoints.authorize,
      tokenEndpoint: endpoints.token,
      scopes: c.scopes,
    },
    async ({ tokens }) => fetchIdentity(provider, tokens.accessToken(), t),
  );
  strategy.name = provider;
  return strategy;
}

export type CallbackOutcome = (LoginOutcome | BindOutcome) & { t: TFunction };

/**
 * The callback of GET /api/oauth/{github,linuxdo} and the /oauth/* pages. Throws InputError (refusals),
 * TooManyRequestsError; returns the login (with the session cookie) or the bind.
 */
export async function handleOAuth2Callback(
  services: ConsoleServices,
  request: Request,
  provider: OAuth2Provider,
): Promise<CallbackOutcome> {
  const t = await oauthT(request);
  await enforceCriticalLimit(request, services, 'oauth');
  const c = PROVIDERS[provider];
  if (!services.options.get(c.enabled)) {
    throw new InputError(t('errors.disabled', { provider: providerName(t, provider) }));
  }
  const url = new URL(request.url);
  const state = url.searchParams.get('state') ?? '';
  if (!url.searchParams.get('code') && !url.searchParams.get('error')) {
    throw new InputError(t('errors.codeMissing'));
  }
  const binding = state ? readStateBinding(request, state) : null;
  if (!binding || !isFresh(binding)) throw new InputError(t('errors.stateInvalid'));
  if (!(await consumeState(services, state))) throw new InputError(t('errors.stateInvalid'));

  const strategy = strategyFor(services, provider, t);
  let identity: ExternalIdentity;
  try {
    identity = await strategy.authenticate(request);
  } catch (error) {
    if (isDomainError(error)) throw error;
    if (error instanceof RangeError || error instanceof ReferenceError) {
      throw new InputError(t('errors.stateInvalid'));
    }
    throw new InputError(t('errors.exchangeFailed', { provider: providerName(t, provider) }));
  }

  const actor = await getSessionUser(request, services);
  if (actor) return { ...(await bindIdentity(services, request, t, actor.id, identity)), t };
  return { ...(await loginOrSignUp(services, request, t, identity, binding.aff)), t };
}

/**
 * The provider's authorize link with a fresh state bound to this browser (GET /oauth/start/{provider}):
 * what the login and settings pages link to, so OAuth starts without JavaScript too. The callback is
 * `<this origin>/oauth/{provider}` (the origin holding the state cookie). Refused (InputError) when the provider is off or has no
 * client id.
 */
export async function startAuthorization(
  services: ConsoleServices,
  request: Request,
  provider: OAuth2Provider,
  aff: string | null,
): Promise<{ url: string; setCookie: string }> {
  const t = await oauthT(request);
  const c = PROVIDERS[provider];
  const name = providerName(t, provider);
  if (!services.options.get(c.enabled)) throw new InputError(t('errors.disabled', { provider: name }));
  const clientId = String(services.options.get(c.clientId) ?? '');
  if (!clientId) throw new InputError(t('errors.notConfigured', { provider: name }));
  const { state, setCookie } = issueOAuthState(request, aff);
  // The callback must come back to the origin holding the state cookie: this request's (https behind a TLS proxy).
  const here = new URL(request.url);
  if (request.headers.get('X-Forwarded-Proto') === 'https') here.protocol = 'https:';
  const origin = here.origin;
  const url = new URL(providerEndpoints(provider).authorize);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('redirect_uri', `${origin}/oauth/${provider}`);
  url.searchParams.set('state', state);
  if (c.scopes.length) url.searchParams.set('scope', c.scopes.join(' '));
  return { url: url.toString(), setCookie };
}
