import type { LoaderFunctionArgs } from '@remix-run/node';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import { fail } from '#app/utils/envelope.server.ts';

/**
 * Every `/api` path without a route, whatever the method: 404 in the JSON envelope (never the HTML not-found
 * page of `routes/$.tsx`), as new-api answers an unknown API path. Methods of known paths: server/api-contract.ts.
 */
export async function loader({ request }: LoaderFunctionArgs) {
  const t = await getFixedT(request);
  return fail(t('common:errors.apiNotFound'), 404);
}

export const action = loader;
