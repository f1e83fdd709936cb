import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useActionData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { usersPageCtx } from '#app/domain/users/http.server.ts';
import { CreateUserFields, FormError, UsersErrorBoundary } from '#app/domain/users/user-ui.tsx';
import { createUser, createUserSchema, parseInput } from '#app/domain/users/users.server.ts';
import { createToastHeader, redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'users'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Users' }];

/** GET /user/new: the add-user form (the page behind the add-user drawer, used without JavaScript). */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await usersPageCtx(request, context);
  return { title: ctx.t('users:form.addTitle') };
}

/** POST /user/new intent=create {username, display_name, password}: the same createUser as POST /api/user/. */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await usersPageCtx(request, context);
  const form = Object.fromEntries(await request.formData());
  const values = { username: String(form.username ?? ''), display_name: String(form.display_name ?? '') };
  try {
    const input = parseInput(ctx, createUserSchema, form);
    await createUser(ctx, input);
  } catch (error) {
    if (isDomainError(error) && error.status < 500)
      return data({ ok: false, error: error.message, values }, { status: 400 });
    throw error;
  }
  const toast = { type: 'success' as const, message: ctx.t('users:toast.created') };
  // The drawer (a fetcher, with JavaScript) stays on the list: data + the flash toast, then revalidation.
  if (form._fetcher === '1')
    return data(
      { ok: true, error: null, values },
      { headers: { 'Set-Cookie': await createToastHeader(toast) } },
    );
  return redirectWithToast('/user', toast);
}

export default function AddUserPage() {
  const { t } = useTranslation('users');
  const actionData = useActionData<typeof action>();
  const navigation = useNavigation();
  return (
    <div className="page users-page form-page form-page-narrow">
      <p>
        <Link to="/user">{t('actions.back')}</Link>
      </p>
      <h1>{t('form.addTitle')}</h1>
      <Form method="post">
        <input type="hidden" name="intent" value="create" />
        <CreateUserFields values={actionData?.values} />
        <FormError message={actionData?.error} />
        <div className="form-actions">
          <Link to="/user" className="btn btn-secondary">
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

export { UsersErrorBoundary as ErrorBoundary };
