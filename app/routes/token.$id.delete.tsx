import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useDeleteTexts } from '#app/components/list/confirm-action.tsx';
import { ConfirmPage } from '#app/components/list/confirm-page.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { parseId, tokensPageCtx } from '#app/domain/tokens/http.server.ts';
import { TokensErrorBoundary } from '#app/domain/tokens/token-ui.tsx';
import { deleteToken, getToken } from '#app/domain/tokens/tokens.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'users', 'tokens'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Tokens' }];

/** GET /token/{id}/delete: the confirmation step of "delete" without JavaScript. */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const ctx = await tokensPageCtx(request, context);
  try {
    const token = await getToken(ctx, parseId(params.id));
    return {
      title: ctx.t('tokens:confirm.deleteTitle'),
      token: { id: token.id, name: token.name },
      redirectTo: safeRedirect(new URL(request.url).searchParams.get('redirectTo'), '/token'),
    };
  } catch (error) {
    if (isDomainError(error) && error.status === 404) throw data(null, { status: 404 });
    throw error;
  }
}

/** POST /token/{id}/delete: deleteToken, then back to the list with a toast. */
export async function action({ request, context, params }: ActionFunctionArgs) {
  const ctx = await tokensPageCtx(request, context);
  const form = await request.formData();
  const back = safeRedirect(form.get('redirectTo'), '/token');
  try {
    await deleteToken(ctx, parseId(params.id));
  } catch (error) {
    if (isDomainError(error)) return redirectWithToast(back, { type: 'error', message: error.message });
    throw error;
  }
  return redirectWithToast(back, { type: 'success', message: ctx.t('tokens:toast.deleted') });
}

export default function DeleteTokenPage() {
  const { token, redirectTo } = useLoaderData<typeof loader>();
  return (
    <ConfirmPage
      className="tokens-page"
      redirectTo={redirectTo}
      {...useDeleteTexts('tokens', { name: token.name })}
    />
  );
}

export { TokensErrorBoundary as ErrorBoundary };
