import type { LoaderFunctionArgs } from '@remix-run/node';
import { publicVersionsCtx } from '#app/domain/versions/http.server.ts';
import { latestVersions } from '#app/domain/versions/versions.server.ts';
import { envelope, ok } from '#app/utils/envelope.server.ts';

/**
 * GET /api/version/latest (public, an addition: the seed does not show it): data = [{ os_type, version }] for
 * os_type 1, 2, 3, where version is the newest row of that OS or null.
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return envelope(async () => ok(await latestVersions(await publicVersionsCtx(request, context))));
}
