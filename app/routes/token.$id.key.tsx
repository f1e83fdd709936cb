import { data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Link } from '#app/components/ui/link.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { parseId, tokensPageCtx } from '#app/domain/tokens/http.server.ts';
import { KeyField, TokensErrorBoundary } from '#app/domain/tokens/token-ui.tsx';
import { displayKey, getToken } from '#app/domain/tokens/tokens.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';

export const handle = { i18n: ['common', 'users', 'tokens'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Tokens' }];

export const headers = () => ({ 'Cache-Control': 'no-store' });

/** GET /token/{id}/key: the full key of one of the caller's tokens, to copy by hand (the no-JS reveal). */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const ctx = await tokensPageCtx(request, context);
  try {
    const token = await getToken(ctx, parseId(params.id));
    // ?created=1: the page a new token's form leads to without JavaScript
    const created = new URL(request.url).searchParams.get('created') === '1';
    return data(
      {
        title: ctx.t(created ? 'tokens:key.createdTitle' : 'tokens:key.title'),
        created,
        name: token.name,
        key: displayKey(token.key),
        redirectTo: safeRedirect(new URL(request.url).searchParams.get('redirectTo'), '/token'),
      },
      { headers: { 'Cache-Control': 'no-store' } },
    );
  } catch (error) {
    if (isDomainError(error) && error.status === 404) throw data(null, { status: 404 });
    throw error;
  }
}

export default function TokenKeyPage() {
  const { name, key, redirectTo, created } = useLoaderData<typeof loader>();
  const { t } = useTranslation('tokens');
  return (
    <div className="page tokens-page form-page form-page-wide">
      <h1>{t(created ? 'key.createdTitle' : 'key.title')}</h1>
      {created ? <p>{t('key.createdBody')}</p> : null}
      <KeyField id="token-full-key" name={name} value={key} testId="full-key" />
      <p>
        <Link to={redirectTo} className="btn btn-secondary">
          {t('actions.back')}
        </Link>
      </p>
    </div>
  );
}

export { TokensErrorBoundary as ErrorBoundary };
