import type { ActionFunctionArgs } from '@remix-run/node';
import { accountApi } from '#app/domain/account/http.server.ts';
import { updateNotificationSettings } from '#app/domain/account/notification.server.ts';
import { methodNotAllowed, ok, readBody } from '#app/utils/envelope.server.ts';

/** PUT /api/user/setting {notify_type, quota_warning_threshold, webhook_url, webhook_secret, notification_email}. */
export function action({ request, context }: ActionFunctionArgs) {
  return accountApi(request, context, async (ctx) => {
    if (request.method !== 'PUT') return methodNotAllowed('PUT');
    return ok(
      await updateNotificationSettings(ctx, await readBody(request)),
      ctx.t('settings:toast.notifyUpdated'),
    );
  });
}
