import { isRouteErrorResponse, useLocation, useRouteError } from '@remix-run/react';
import { useTranslation } from 'react-i18next';

/**
 * Route error boundary of an admin area: the area's 403 page (`<ns>:forbidden.*`, or the refusal's own
 * `message` when the loader threw one), the common not-found / error page otherwise. With `failedKey`, the 404 and error pages say that fixed failure message of the
 * area instead of the common body (the versions pages, seed 001 §8).
 */
export function ListErrorBoundary({ ns, failedKey }: { ns: string; failedKey?: string }) {
  const error = useRouteError();
  const { t } = useTranslation(ns);
  const { t: tc } = useTranslation('common');
  const { pathname, search } = useLocation();
  if (isRouteErrorResponse(error) && error.status === 403) {
    // A refusal of one record (e.g. a user of a higher role) carries the domain's translated message.
    const message = (error.data as { message?: unknown } | null)?.message;
    return (
      <div className="page error-page" data-status="403">
        <h1>{t('forbidden.title')}</h1>
        {typeof message === 'string' ? <p role="alert">{message}</p> : <p>{t('forbidden.body')}</p>}
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
  // The seed's 500 message (429: too many requests) and a plain link that loads the page again.
  const status = isRouteErrorResponse(error) ? error.status : 500;
  return (
    <div className="page error-page" data-status={status}>
      <h1>{tc('errorPage.title')}</h1>
      {failed ?? (
        <p data-testid="error-message">
          {status === 429 ? tc('errors.tooManyRequests') : tc('errors.internal')}
        </p>
      )}
      <p className="error-page-actions">
        <a href={`${pathname}${search}`} className="btn btn-primary" data-testid="error-retry">
          {tc('errorPage.retry')}
        </a>
      </p>
    </div>
  );
}
