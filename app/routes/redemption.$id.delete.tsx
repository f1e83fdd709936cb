import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useDeleteTexts } from '#app/components/list/confirm-action.tsx';
import { ConfirmPage } from '#app/components/list/confirm-page.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { redemptionsPageCtx } from '#app/domain/redemptions/http.server.ts';
import { RedemptionsErrorBoundary } from '#app/domain/redemptions/redemption-ui.tsx';
import { deleteRedemption, getRedemption } from '#app/domain/redemptions/redemptions.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'redemptions'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Redemption' }];

function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}

/** GET /redemption/{id}/delete: the confirmation step of "delete" without JavaScript. */
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
    title: ctx.t('redemptions:confirm.deleteTitle'),
    redemption: { id: row.id, name: row.name },
    redirectTo,
  };
}

/** POST /redemption/{id}/delete: deleteRedemption, then back to the list with a toast. */
export async function action({ request, context, params }: ActionFunctionArgs) {
  const ctx = await redemptionsPageCtx(request, context);
  const form = await request.formData();
  const back = safeRedirect(form.get('redirectTo'), '/redemption');
  try {
    await deleteRedemption(ctx, parseId(params.id));
  } catch (error) {
    if (isDomainError(error)) return redirectWithToast(back, { type: 'error', message: error.message });
    throw error;
  }
  return redirectWithToast(back, { type: 'success', message: ctx.t('redemptions:toast.deleted') });
}

export default function DeleteRedemptionPage() {
  const { redemption, redirectTo } = useLoaderData<typeof loader>();
  return (
    <ConfirmPage
      className="redemptions-page"
      redirectTo={redirectTo}
      {...useDeleteTexts('redemptions', { name: redemption.name, id: redemption.id })}
    />
  );
}

export { RedemptionsErrorBoundary as ErrorBoundary };
