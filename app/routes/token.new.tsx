import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useActionData, useLoaderData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { tokensPageCtx } from '#app/domain/tokens/http.server.ts';
import { editorData, formToTokenInput, submittedValues } from '#app/domain/tokens/page.server.ts';
import { emptyTokenForm, FormError, TokenFields, TokensErrorBoundary } from '#app/domain/tokens/token-ui.tsx';
import { createTokenSchema, createTokens, displayKey, parseInput } from '#app/domain/tokens/tokens.server.ts';
import { requestTimeZone } from '#app/utils/time.ts';
import { createToastHeader, redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'users', 'tokens'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Tokens' }];

/** GET /token/new: the create-token form (the page behind the drawer, used without JavaScript). */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await tokensPageCtx(request, context);
  return { title: ctx.t('tokens:form.addTitle'), ...(await editorData(ctx)) };
}

/** POST /token/new: the same createTokens as POST /api/token/ (count > 1 creates a batch). */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await tokensPageCtx(request, context);
  const form = Object.fromEntries(await request.formData());
  let created: { id: number; name: string; key: string }[] = [];
  try {
    const input = parseInput(ctx, createTokenSchema, formToTokenInput(form, requestTimeZone(request)));
    created = (await createTokens(ctx, input)).map((tk) => ({
      id: tk.id,
      name: tk.name,
      key: displayKey(tk.key),
    }));
  } catch (error) {
    if (isDomainError(error) && error.status < 500)
      return data(
        { ok: false, error: error.message, values: submittedValues(form), created: null },
        { status: 400 },
      );
    throw error;
  }
  const count = created.length;
  const toast = {
    type: 'success' as const,
    message: count > 1 ? ctx.t('tokens:toast.createdMany', { count }) : ctx.t('tokens:toast.created'),
  };
  // The new keys are shown right away: in the drawer with JavaScript, else on the key page (one token).
  if (form._fetcher === '1')
    return data(
      { ok: true, error: null, values: null, created },
      { headers: { 'Set-Cookie': await createToastHeader(toast), 'Cache-Control': 'no-store' } },
    );
  const [only] = created;
  if (count === 1 && only)
    return redirectWithToast(
      `/token/${only.id}/key?${new URLSearchParams({ created: '1', redirectTo: '/token' })}`,
      toast,
    );
  return redirectWithToast('/token', toast);
}

export default function NewTokenPage() {
  const { models, groups, display } = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const navigation = useNavigation();
  const { t } = useTranslation('tokens');
  return (
    <div className="page tokens-page form-page">
      <p>
        <Link to="/token">{t('actions.back')}</Link>
      </p>
      <h1>{t('form.addTitle')}</h1>
      <Form method="post">
        <TokenFields
          values={actionData?.values ?? emptyTokenForm}
          models={models}
          groups={groups}
          display={display}
          create
        />
        <FormError message={actionData?.error} />
        <div className="form-actions">
          <Link to="/token" className="btn btn-secondary">
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
