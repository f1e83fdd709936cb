import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import { Role } from '@switchyard/db/entities/user.ts';
import { domainApi } from '#app/domain/http.server.ts';
import { listOptions, updateOption } from '#app/domain/settings/options.server.ts';
import { methodNotAllowed, ok, readBody } from '#app/utils/envelope.server.ts';

/**
 * GET /api/option/ (admin): data is every option as {key, value}; a secret option has value '' and says only
 * whether it is set ({key, value: '', secret: true, is_set}); a root-only option's row adds `root_only: true`.
 */
export function loader({ request, context }: LoaderFunctionArgs) {
  return domainApi(request, context, { minRole: Role.Admin }, async (ctx) => ok(listOptions(ctx)));
}

/**
 * PUT /api/option/ {key, value} (admin; root for a root-only key, ADR 033): validates, audits, stores and
 * announces one option.
 */
export function action({ request, context }: ActionFunctionArgs) {
  return domainApi(request, context, { minRole: Role.Admin }, async (ctx) => {
    if (request.method !== 'PUT') return methodNotAllowed('GET, PUT');
    const body = await readBody(request);
    await updateOption(ctx, body.key, body.value);
    return ok(null, ctx.t('settings:options.updated'));
  });
}
