import type { LoaderFunctionArgs } from '@remix-run/node';
import { OAuthCallbackPage, oauthCallbackMeta } from '#app/components/oauth/oauth-callback.tsx';
import { oauthCallbackLoader } from '#app/domain/oauth/callback-page.server.ts';
import { getServices } from '#app/services.server.ts';

export const handle = { i18n: 'oauth' };

/** /oauth/github?code&state: the OAuth callback page (see oauthCallbackLoader). */
export function loader({ request, context }: LoaderFunctionArgs) {
  return oauthCallbackLoader(getServices(context), request, 'github');
}

export const meta = oauthCallbackMeta;

export default OAuthCallbackPage;
