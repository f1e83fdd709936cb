import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { ConfirmPage } from '#app/components/list/confirm-page.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { formatLogTime, fromDateTimeLocal } from '#app/domain/logs/constants.ts';
import { logsPageCtx } from '#app/domain/logs/http.server.ts';
import { LogsErrorBoundary } from '#app/domain/logs/log-ui.tsx';
import { clearLogsBefore, countLogsBefore } from '#app/domain/logs/logs.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { requestTimeZone } from '#app/utils/time.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';

export const handle = { i18n: ['common', 'logs'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Logs' }];

/**
 * GET /log/clear?before={datetime-local, in the user's zone}&redirectTo: the confirmation step of the admin log cleanup (the
 * page without JavaScript; the dialog with it reads the same answer): the cut-off and how many rows would go.
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await logsPageCtx(request, context, { admin: true });
  const url = new URL(request.url);
  const before = url.searchParams.get('before') ?? '';
  const timeZone = requestTimeZone(request);
  const target = fromDateTimeLocal(before, timeZone);
  const redirectTo = safeRedirect(url.searchParams.get('redirectTo'), '/log');
  const base = {
    title: ctx.t('logs:clear.confirmTitle'),
    before,
    redirectTo,
    time: formatLogTime(target, timeZone),
  };
  try {
    const { count, capped } = await countLogsBefore(ctx, target);
    return { ...base, count, capped, error: '' };
  } catch (error) {
    if (isDomainError(error)) return { ...base, count: 0, capped: false, error: error.message };
    throw error;
  }
}

/** POST /log/clear {before, redirectTo}: deletes the rows before the cut-off, then back with a toast. */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await logsPageCtx(request, context, { admin: true });
  const form = await request.formData();
  const back = safeRedirect(form.get('redirectTo'), '/log');
  try {
    const count = await clearLogsBefore(
      ctx,
      fromDateTimeLocal(String(form.get('before') ?? ''), requestTimeZone(request)),
    );
    return redirectWithToast(back, { type: 'success', message: ctx.t('logs:clear.done', { count }) });
  } catch (error) {
    if (isDomainError(error)) return redirectWithToast(back, { type: 'error', message: error.message });
    throw error;
  }
}

export default function ClearLogsPage() {
  const { before, redirectTo, time, count, capped, error } = useLoaderData<typeof loader>();
  const { t } = useTranslation('logs');
  const zone = useTimeZone();
  if (!error) {
    return (
      <ConfirmPage
        className="logs-page logs-confirm"
        title={t('clear.confirmTitle')}
        body={
          <p data-testid="clear-body">
            {t(capped ? 'clear.confirmBodyCapped' : 'clear.confirmBody', { time, count, zone })}
          </p>
        }
        redirectTo={redirectTo}
        cancelLabel={t('clear.cancel')}
        confirmLabel={t('clear.confirm')}
        fields={{ before }}
      />
    );
  }
  return (
    <div className="page logs-page logs-confirm">
      <h1>{t('clear.confirmTitle')}</h1>
      <p role="alert">{error}</p>
      <Link to={redirectTo} className="btn btn-secondary">
        {t('userInfo.back')}
      </Link>
    </div>
  );
}

export { LogsErrorBoundary as ErrorBoundary };
