import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useActionData, useLoaderData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { redemptionsPageCtx } from '#app/domain/redemptions/http.server.ts';
import {
  FormError,
  RedemptionFields,
  RedemptionStatusTag,
  RedemptionsErrorBoundary,
} from '#app/domain/redemptions/redemption-ui.tsx';
import {
  getRedemption,
  parseInput,
  quotaDisplay,
  updateRedemption,
  updateRedemptionSchema,
} from '#app/domain/redemptions/redemptions.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { createToastHeader, redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'redemptions'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Redemption' }];

function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}

/** GET /redemption/{id}/edit: name and quota of an unused code (a used or disabled one shows why it cannot be). */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const ctx = await redemptionsPageCtx(request, context);
  let row: Awaited<ReturnType<typeof getRedemption>>;
  try {
    row = await getRedemption(ctx, parseId(params.id));
  } catch (error) {
    if (isDomainError(error) && error.status === 404) throw data(null, { status: 404 });
    throw error;
  }
  const redirectTo = safeRedirect(new URL(request.url).searchParams.get('redirectTo'), '/redemption');
  return {
    title: ctx.t('redemptions:form.editTitle'),
    redemption: { id: row.id, name: row.name, quota: row.quota, status: row.status },
    display: quotaDisplay(ctx.options),
    redirectTo,
  };
}

export type EditReply = { ok: boolean; error: string | null; values: { name: string; quota: string } };

/** POST /redemption/{id}/edit intent=update {name, quota, redirectTo}: the same updateRedemption as PUT /api/redemption/. */
export async function action({ request, context, params }: ActionFunctionArgs) {
  const ctx = await redemptionsPageCtx(request, context);
  const form = Object.fromEntries(await request.formData());
  const back = safeRedirect(form.redirectTo, '/redemption');
  const values = { name: String(form.name ?? ''), quota: String(form.quota ?? '') };
  try {
    const input = parseInput(ctx, updateRedemptionSchema, {
      id: parseId(params.id),
      name: values.name,
      quota: values.quota,
    });
    await updateRedemption(ctx, input);
  } catch (error) {
    if (isDomainError(error) && error.status === 404) throw data(null, { status: 404 });
    if (isDomainError(error) && error.status < 500)
      return data<EditReply>({ ok: false, error: error.message, values }, { status: 400 });
    throw error;
  }
  const toast = { type: 'success' as const, message: ctx.t('redemptions:toast.updated') };
  // The drawer (a fetcher, with JavaScript) stays on the list: data + the flash toast, then revalidation.
  if (form._fetcher === '1')
    return data<EditReply>(
      { ok: true, error: null, values },
      { headers: { 'Set-Cookie': await createToastHeader(toast) } },
    );
  return redirectWithToast(back, toast);
}

export default function EditRedemptionPage() {
  const { redemption, display, redirectTo } = useLoaderData<typeof loader>();
  const reply = useActionData<typeof action>();
  const { t } = useTranslation('redemptions');
  const navigation = useNavigation();
  const editable = redemption.status === 1;
  return (
    <div className="page redemptions-page form-page">
      <p>
        <Link to={redirectTo}>{t('actions.back')}</Link>
      </p>
      <h1>{t('form.editTitle')}</h1>
      <p>
        #{redemption.id} <RedemptionStatusTag status={redemption.status} />
      </p>
      {editable ? (
        <Form method="post">
          <input type="hidden" name="intent" value="update" />
          <input type="hidden" name="redirectTo" value={redirectTo} />
          <RedemptionFields
            mode="edit"
            values={reply?.values ?? { name: redemption.name, quota: redemption.quota }}
            display={display}
          />
          <FormError message={reply?.error} />
          <div className="form-actions">
            <Link to={redirectTo} className="btn btn-secondary">
              {t('actions.cancel')}
            </Link>
            <Button type="submit" variant="primary" isDisabled={navigation.state === 'submitting'}>
              {t('actions.save')}
            </Button>
          </div>
        </Form>
      ) : (
        <p role="alert">{t('form.usedNotEditable')}</p>
      )}
    </div>
  );
}

export { RedemptionsErrorBoundary as ErrorBoundary };
