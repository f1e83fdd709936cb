import type { ActionFunctionArgs } from '@remix-run/node';
import { versionsApi } from '#app/domain/versions/http.server.ts';
import {
  createVersion,
  parseInput,
  updateVersion,
  versionFormSchema,
  versionUpdateSchema,
} from '#app/domain/versions/versions.server.ts';
import { fail, ok, readBody } from '#app/utils/envelope.server.ts';

/**
 * POST /api/version {Version, DownUrl, FileMd5, ForceIds, Force, OsType, Remark}: data = the new row;
 * PUT /api/version {... plus Id}: data = the updated row (admin).
 */
export function action({ request, context }: ActionFunctionArgs) {
  return versionsApi(request, context, async (ctx) => {
    if (request.method === 'POST') {
      const input = parseInput(ctx, versionFormSchema, await readBody(request));
      return ok(await createVersion(ctx, input));
    }
    if (request.method === 'PUT') {
      const input = parseInput(ctx, versionUpdateSchema, await readBody(request));
      return ok(await updateVersion(ctx, input));
    }
    return fail('method not allowed', 405, { headers: { Allow: 'POST, PUT' } });
  });
}
