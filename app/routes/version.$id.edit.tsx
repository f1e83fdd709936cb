import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useActionData, useLoaderData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { submitVersionForm } from '#app/domain/versions/form.server.ts';
import { versionsPageCtx } from '#app/domain/versions/http.server.ts';
import {
  FormError,
  toFormValues,
  VersionFields,
  VersionsErrorBoundary,
} from '#app/domain/versions/version-ui.tsx';
import { getVersion } from '#app/domain/versions/versions.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';

export const handle = { i18n: ['common', 'versions'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Versions' }];

function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}

/**
 * GET /version/{id}/edit: the edit-version form. The edit modal's fetcher loads it with ?modal=1: then a missing
 * version answers `version: null` (the modal shows 'load version info failed') instead of the 404 page.
 */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const ctx = await versionsPageCtx(request, context);
  const modal = new URL(request.url).searchParams.get('modal') === '1';
  try {
    const version = await getVersion(ctx, parseId(params.id));
    const redirectTo = safeRedirect(new URL(request.url).searchParams.get('redirectTo'), '/version');
    return { title: ctx.t('versions:form.editTitle'), version, redirectTo };
  } catch (error) {
    if (isDomainError(error) && error.status === 404) {
      if (modal) return { title: ctx.t('versions:form.editTitle'), version: null, redirectTo: '/version' };
      throw data(null, { status: 404 });
    }
    throw error;
  }
}

/** POST /version/{id}/edit {the form fields, redirectTo}: updateVersion (PUT /api/version with Id). */
export async function action({ request, context, params }: ActionFunctionArgs) {
  const ctx = await versionsPageCtx(request, context);
  return submitVersionForm(ctx, request, parseId(params.id));
}

export default function EditVersionPage() {
  const { version, redirectTo } = useLoaderData<typeof loader>();
  const { t } = useTranslation('versions');
  const reply = useActionData<typeof action>();
  const navigation = useNavigation();
  if (!version) return <p role="alert">{t('errors.loadInfoFailed')}</p>;
  return (
    <div className="page versions-page form-page version-form-page">
      <p>
        <Link to={redirectTo}>{t('actions.back')}</Link>
      </p>
      <h1>{t('form.editTitle')}</h1>
      <Form method="post" noValidate>
        <input type="hidden" name="redirectTo" value={redirectTo} />
        <VersionFields values={reply?.values ?? toFormValues(version)} errors={reply?.fieldErrors} />
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
    </div>
  );
}

export { VersionsErrorBoundary as ErrorBoundary };
