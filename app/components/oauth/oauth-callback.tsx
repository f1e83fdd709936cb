import type { MetaFunction } from '@remix-run/node';
import { Link, useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';

/** The refusal view of /oauth/github and /oauth/linuxdo: the message, then /setting (seed 001 §4). */
export type OAuthCallbackData = { provider: string; message: string };

/** Seconds before the page sends the user on to /setting (a meta refresh: no JavaScript needed). */
export const CALLBACK_REDIRECT_SECONDS = 3;

export const oauthCallbackMeta: MetaFunction = () => [
  { title: 'OAuth' },
  { httpEquiv: 'refresh', content: `${CALLBACK_REDIRECT_SECONDS};url=/setting` },
];

export function OAuthCallbackPage() {
  const { message } = useLoaderData<OAuthCallbackData>();
  const { t } = useTranslation('oauth');
  return (
    <div className="page oauth-callback">
      <h1>{t('callback.failed')}</h1>
      <p role="alert" data-testid="oauth-error">
        {message}
      </p>
      <p>{t('callback.redirecting')}</p>
      <p>
        <Link to="/setting">{t('callback.toSettings')}</Link>
      </p>
    </div>
  );
}
