import type { ActionFunctionArgs } from '@remix-run/node';
import { Role } from '@switchyard/db/entities/user.ts';
import { domainApi } from '#app/domain/http.server.ts';
import { resetModelRatios } from '#app/domain/pricing/model-tab.server.ts';
import { methodNotAllowed, ok } from '#app/utils/envelope.server.ts';

export function loader() {
  return methodNotAllowed('POST');
}

/**
 * POST /api/option/rest_model_ratio (admin; new-api's spelling): ModelPrice, ModelRatio and CompletionRatio back
 * to the shipped defaults, each changed table audited and announced; data is the number of tables rewritten.
 */
export function action({ request, context }: ActionFunctionArgs) {
  return domainApi(request, context, { minRole: Role.Admin }, async (ctx) => {
    if (request.method !== 'POST') return methodNotAllowed('POST');
    return ok(await resetModelRatios(ctx), ctx.t('settings:options.modelRatioReset'));
  });
}
