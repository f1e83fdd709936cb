import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from '@remix-run/node';
import { Form, useActionData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { submitVersionForm } from '#app/domain/versions/form.server.ts';
import { versionsPageCtx } from '#app/domain/versions/http.server.ts';
import { FormError, VersionFields, VersionsErrorBoundary } from '#app/domain/versions/version-ui.tsx';

export const handle = { i18n: ['common', 'versions'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Versions' }];

/** GET /version/new: the add-version form (the page behind the add modal, used without JavaScript). */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await versionsPageCtx(request, context);
  return { title: ctx.t('versions:form.addTitle') };
}

/** POST /version/new {Version, DownUrl, FileMd5, ForceIds, Force, OsType, Remark}: createVersion (POST /api/version). */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await versionsPageCtx(request, context);
  return submitVersionForm(ctx, request, null);
}

export default function AddVersionPage() {
  const { t } = useTranslation('versions');
  const reply = useActionData<typeof action>();
  const navigation = useNavigation();
  return (
    <div className="page versions-page form-page version-form-page">
      <p>
        <Link to="/version">{t('actions.back')}</Link>
      </p>
      <h1>{t('form.addTitle')}</h1>
      <Form method="post" noValidate>
        <VersionFields values={reply?.values} errors={reply?.fieldErrors} />
        <FormError message={reply?.error} />
        <div className="form-actions">
          <Link to="/version" className="btn btn-secondary">
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
