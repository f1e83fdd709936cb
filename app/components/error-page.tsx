import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';

/**
 * The root error page (app/root.tsx ErrorBoundary): a not-found answer, or the seed's message for a failed
 * request (seed 001 §9: 500 'internal server error, contact administrator'; 429 'too many requests, try again
 * later') with a plain link that loads the same address again, so retrying needs no JavaScript.
 */
export function ErrorPage({ status, retryHref }: { status: number; retryHref: string }) {
  const { t } = useTranslation();
  // The app's layout does not render here: mark the document interactive as it would (e2e harness).
  useEffect(() => {
    document.documentElement.dataset.hydrated = 'true';
  }, []);
  if (status === 404) {
    return (
      <main id="main" className="content error-page" data-status={status}>
        <h1>{t('notFound.title')}</h1>
        <p data-testid="error-message">{t('notFound.body')}</p>
        <p>
          <a href="/">{t('notFound.home')}</a>
        </p>
      </main>
    );
  }
  return (
    <main id="main" className="content error-page" data-status={status}>
      <h1>{t('errorPage.title')}</h1>
      <p data-testid="error-message">{status === 429 ? t('errors.tooManyRequests') : t('errors.internal')}</p>
      <p className="error-page-actions">
        <a href={retryHref} className="btn btn-primary" data-testid="error-retry">
          {t('errorPage.retry')}
        </a>
        <a href="/">{t('notFound.home')}</a>
      </p>
    </main>
  );
}
