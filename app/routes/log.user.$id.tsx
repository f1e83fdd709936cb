import { data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Link } from '#app/components/ui/link.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { logsPageCtx } from '#app/domain/logs/http.server.ts';
import { LogsErrorBoundary, UserInfoList } from '#app/domain/logs/log-ui.tsx';
import { getLogUserInfo, quotaDisplay } from '#app/domain/logs/logs.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';

export const handle = { i18n: ['common', 'logs'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'User' }];

/**
 * GET /log/user/{id}?redirectTo: the admin's user-info view of the log table (seed 001 §2.10 / §3 User info):
 * the page without JavaScript, the dialog's data with it.
 */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const ctx = await logsPageCtx(request, context, { admin: true });
  const id = /^\d{1,9}$/.test(params.id ?? '') ? Number(params.id) : 0;
  let info: Awaited<ReturnType<typeof getLogUserInfo>>;
  try {
    info = await getLogUserInfo(ctx, id);
  } catch (error) {
    if (isDomainError(error) && error.status === 404) throw data(null, { status: 404 });
    throw error;
  }
  return {
    title: ctx.t('logs:userInfo.title'),
    info,
    display: quotaDisplay(ctx.options),
    redirectTo: safeRedirect(new URL(request.url).searchParams.get('redirectTo'), '/log'),
  };
}

export default function LogUserInfoPage() {
  const { info, display, redirectTo } = useLoaderData<typeof loader>();
  const { t } = useTranslation('logs');
  return (
    <div className="page logs-page logs-confirm">
      <h1>{t('userInfo.title')}</h1>
      <UserInfoList info={info} display={display} />
      <Link to={redirectTo} className="btn btn-secondary">
        {t('userInfo.back')}
      </Link>
    </div>
  );
}

export { LogsErrorBoundary as ErrorBoundary };
