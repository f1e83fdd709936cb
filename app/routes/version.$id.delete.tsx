import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { useDeleteTexts } from '#app/components/list/confirm-action.tsx';
import { ConfirmPage } from '#app/components/list/confirm-page.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { osKey } from '#app/domain/versions/constants.ts';
import { versionsPageCtx } from '#app/domain/versions/http.server.ts';
import { VersionsErrorBoundary } from '#app/domain/versions/version-ui.tsx';
import { deleteVersion, getVersion } from '#app/domain/versions/versions.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'versions'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Versions' }];

function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}

/** GET /version/{id}/delete: the confirmation step of "delete" without JavaScript. */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const ctx = await versionsPageCtx(request, context);
  let version: Awaited<ReturnType<typeof getVersion>>;
  try {
    version = await getVersion(ctx, parseId(params.id));
  } catch (error) {
    if (isDomainError(error) && error.status === 404) throw data(null, { status: 404 });
    throw error;
  }
  const redirectTo = safeRedirect(new URL(request.url).searchParams.get('redirectTo'), '/version');
  return {
    title: ctx.t('versions:confirm.deleteTitle'),
    version: { id: version.id, version: version.version, os_type: version.os_type },
    redirectTo,
  };
}

/** POST /version/{id}/delete: deleteVersion (DELETE /api/version/{id}), then back to the list with a toast. */
export async function action({ request, context, params }: ActionFunctionArgs) {
  const ctx = await versionsPageCtx(request, context);
  const form = await request.formData();
  const back = safeRedirect(form.get('redirectTo'), '/version');
  try {
    await deleteVersion(ctx, parseId(params.id));
  } catch (error) {
    if (isDomainError(error) && error.status < 500)
      return redirectWithToast(back, {
        type: 'error',
        message: `${ctx.t('versions:errors.deleteFailed')}: ${error.message}`,
      });
    throw error;
  }
  return redirectWithToast(back, { type: 'success', message: ctx.t('versions:toast.deleted') });
}

export default function DeleteVersionPage() {
  const { version, redirectTo } = useLoaderData<typeof loader>();
  const { t } = useTranslation('versions');
  return (
    <ConfirmPage
      className="versions-page"
      redirectTo={redirectTo}
      {...useDeleteTexts('versions', { version: version.version, os: t(`os.${osKey(version.os_type)}`) })}
    />
  );
}

export { VersionsErrorBoundary as ErrorBoundary };
