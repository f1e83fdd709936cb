import type { LoaderFunctionArgs } from '@remix-run/node';
import { oauthEnvelope } from '#app/domain/oauth/http.server.ts';
import { issueOAuthState } from '#app/domain/oauth/state.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/oauth/state[?aff=CODE]: a fresh OAuth state, bound to this browser by an HttpOnly cookie. */
export function loader({ request }: LoaderFunctionArgs) {
  return oauthEnvelope(request, () => {
    const { state, setCookie } = issueOAuthState(request, new URL(request.url).searchParams.get('aff'));
    return ok(state, '', { headers: { 'Set-Cookie': setCookie } });
  });
}
