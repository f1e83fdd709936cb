import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useActionData, useLoaderData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { parseId, tokensPageCtx } from '#app/domain/tokens/http.server.ts';
import {
  editorData,
  formToTokenInput,
  submittedValues,
  toFormValues,
} from '#app/domain/tokens/page.server.ts';
import { FormError, TokenFields, TokensErrorBoundary } from '#app/domain/tokens/token-ui.tsx';
import { getToken, parseInput, updateToken, updateTokenSchema } from '#app/domain/tokens/tokens.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { requestTimeZone } from '#app/utils/time.ts';
import { createToastHeader, redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'users', 'tokens'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Tokens' }];

/** GET /token/{id}/edit: the edit form of one of the caller's tokens (another user's id is 404). */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const ctx = await tokensPageCtx(request, context);
  try {
    const token = await getToken(ctx, parseId(params.id));
    return {
      title: ctx.t('tokens:form.editTitle'),
      id: token.id,
      values: toFormValues(token, requestTimeZone(request)),
      redirectTo: safeRedirect(new URL(request.url).searchParams.get('redirectTo'), '/token'),
      ...(await editorData(ctx)),
    };
  } catch (error) {
    if (isDomainError(error) && error.status === 404) throw data(null, { status: 404 });
    throw error;
  }
}

/** POST /token/{id}/edit: the same updateToken as PUT /api/token/ (the status is kept, 3/4 settle). */
export async function action({ request, context, params }: ActionFunctionArgs) {
  const ctx = await tokensPageCtx(request, context);
  const form = Object.fromEntries(await request.formData());
  try {
    const input = parseInput(ctx, updateTokenSchema, {
      ...formToTokenInput(form, requestTimeZone(request)),
      id: parseId(params.id),
    });
    await updateToken(ctx, input);
  } catch (error) {
    if (isDomainError(error) && error.status < 500)
      return data({ ok: false, error: error.message, values: submittedValues(form) }, { status: 400 });
    throw error;
  }
  const toast = { type: 'success' as const, message: ctx.t('tokens:toast.updated') };
  if (form._fetcher === '1')
    return data(
      { ok: true, error: null, values: null },
      { headers: { 'Set-Cookie': await createToastHeader(toast) } },
    );
  return redirectWithToast(safeRedirect(form.redirectTo, '/token'), toast);
}

export default function EditTokenPage() {
  const { values, models, groups, display, redirectTo } = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const navigation = useNavigation();
  const { t } = useTranslation('tokens');
  return (
    <div className="page tokens-page form-page">
      <p>
        <Link to={redirectTo}>{t('actions.back')}</Link>
      </p>
      <h1>{t('form.editTitle')}</h1>
      <Form method="post">
        <input type="hidden" name="redirectTo" value={redirectTo} />
        <TokenFields
          values={actionData?.values ?? values}
          models={models}
          groups={groups}
          display={display}
          create={false}
        />
        <FormError message={actionData?.error} />
        <div className="form-actions">
          <Link to={redirectTo} className="btn btn-secondary">
            {t('actions.cancel')}
          </Link>
          <Button type="submit" variant="primary" isDisabled={navigation.state === 'submitting'}>
            {t('actions.save')}
          </Button>
        </div>
      </Form>
    </div>
  );
}

export { TokensErrorBoundary as ErrorBoundary };
