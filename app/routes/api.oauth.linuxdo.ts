import type { LoaderFunctionArgs } from '@remix-run/node';
import { oauth2ApiCallback } from '#app/domain/oauth/api-callback.server.ts';
import { getServices } from '#app/services.server.ts';

/** GET /api/oauth/linuxdo?code&state: log in, sign up or bind (see oauth2ApiCallback). */
export function loader({ request, context }: LoaderFunctionArgs) {
  return oauth2ApiCallback(getServices(context), request, 'linuxdo');
}
