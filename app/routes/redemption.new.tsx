import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useActionData, useLoaderData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { redemptionsPageCtx } from '#app/domain/redemptions/http.server.ts';
import {
  FormError,
  FreshCodes,
  RedemptionFields,
  RedemptionsErrorBoundary,
} from '#app/domain/redemptions/redemption-ui.tsx';
import {
  createRedemptionSchema,
  createRedemptions,
  parseInput,
  quotaDisplay,
} from '#app/domain/redemptions/redemptions.server.ts';
import { createToastHeader } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'redemptions'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Redemption' }];

/** GET /redemption/new: the create form (the page behind the create drawer, used without JavaScript). */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await redemptionsPageCtx(request, context);
  return { title: ctx.t('redemptions:form.addTitle'), display: quotaDisplay(ctx.options) };
}

export type CreateReply = {
  ok: boolean;
  error: string | null;
  keys: string[];
  values: { name: string; quota: string; count: string };
};

/**
 * POST /redemption/new {name, quota, count}: the same createRedemptions as POST /api/redemption/. The answer is
 * the page itself with the fresh codes, shown once (no redirect: the keys are never stored in a cookie or a URL);
 * it is not cached.
 */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await redemptionsPageCtx(request, context);
  const form = Object.fromEntries(await request.formData());
  const values = {
    name: String(form.name ?? ''),
    quota: String(form.quota ?? ''),
    count: String(form.count ?? ''),
  };
  let keys: string[];
  try {
    keys = await createRedemptions(ctx, parseInput(ctx, createRedemptionSchema, form));
  } catch (error) {
    if (isDomainError(error) && error.status < 500)
      return data<CreateReply>({ ok: false, error: error.message, keys: [], values }, { status: 400 });
    throw error;
  }
  const headers = new Headers({ 'Cache-Control': 'no-store' });
  headers.append(
    'Set-Cookie',
    await createToastHeader({ type: 'success', message: ctx.t('redemptions:toast.created') }),
  );
  return data<CreateReply>({ ok: true, error: null, keys, values }, { headers });
}

export default function NewRedemptionPage() {
  const { display } = useLoaderData<typeof loader>();
  const { t } = useTranslation('redemptions');
  const reply = useActionData<typeof action>();
  const navigation = useNavigation();
  return (
    <div className="page redemptions-page form-page">
      <p>
        <Link to="/redemption">{t('actions.back')}</Link>
      </p>
      <h1>{t('form.addTitle')}</h1>
      {reply?.ok ? (
        <>
          <FreshCodes keys={reply.keys} />
          <p>
            <Link to="/redemption" className="btn btn-secondary">
              {t('actions.done')}
            </Link>
          </p>
        </>
      ) : (
        <Form method="post">
          <input type="hidden" name="intent" value="create" />
          <RedemptionFields mode="create" values={reply?.values} display={display} />
          <FormError message={reply?.error} />
          <div className="form-actions">
            <Link to="/redemption" className="btn btn-secondary">
              {t('actions.cancel')}
            </Link>
            <Button type="submit" variant="primary" isDisabled={navigation.state === 'submitting'}>
              {t('actions.save')}
            </Button>
          </div>
        </Form>
      )}
    </div>
  );
}

export { RedemptionsErrorBoundary as ErrorBoundary };
