import { isRouteErrorResponse, useRouteError } from '@remix-run/react';
import { useTranslation } from 'react-i18next';

/**
 * Route error boundary of an admin area: the area's 403 page (`<ns>:forbidden.*`) for non-admins, the common
 * not-found / error page otherwise. With `failedKey`, the 404 and error pages say that fixed failure message of the
 * area instead of the common body (the versions pages, seed 001 §8).
 */
export function ListErrorBoundary({ ns, failedKey }: { ns: string; failedKey?: string }) {
  const error = useRouteError();
  const { t } = useTranslation(ns);
  const { t: tc } = useTranslation('common');
  if (isRouteErrorResponse(error) && error.status === 403) {
    return (
      <div className="page error-page" data-status="403">
        <h1>{t('forbidden.title')}</h1>
        <p>{t('forbidden.body')}</p>
      </div>
    );
  }
  const failed = failedKey ? <p role="alert">{t(failedKey)}</p> : null;
  if (isRouteErrorResponse(error) && error.status === 404) {
    return (
      <div className="page error-page" data-status="404">
        <h1>{tc('notFound.title')}</h1>
        {failed ?? <p>{tc('notFound.body')}</p>}
      </div>
    );
  }
  if (!isRouteErrorResponse(error)) console.error(error);
  return (
    <div className="page error-page">
      <h1>{tc('errorPage.title')}</h1>
      {failed ?? <p>{tc('errorPage.body')}</p>}
    </div>
  );
}
