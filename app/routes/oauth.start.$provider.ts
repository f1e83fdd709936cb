import { type LoaderFunctionArgs, redirect } from '@remix-run/node';
import { isDomainError } from '#app/domain/errors.ts';
import { isOAuth2Provider, startAuthorization } from '#app/domain/oauth/oauth2.server.ts';
import { getServices } from '#app/services.server.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

/**
 * GET /oauth/start/{github,linuxdo}[?aff=CODE]: binds a fresh state to this browser and redirects to the
 * provider's authorize page (a plain link, so third-party login works without JavaScript). A disabled
 * provider returns to /login with the refusal as a flash toast.
 */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const provider = params.provider ?? '';
  if (!isOAuth2Provider(provider)) throw new Response('Not Found', { status: 404 });
  try {
    const aff = new URL(request.url).searchParams.get('aff');
    const { url, setCookie } = await startAuthorization(getServices(context), request, provider, aff);
    return redirect(url, { headers: { 'Set-Cookie': setCookie, 'Cache-Control': 'no-store' } });
  } catch (error) {
    if (!isDomainError(error)) throw error;
    return redirectWithToast('/login', { type: 'error', message: error.message });
  }
}
