import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useActionData, useLoaderData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { InputError, isDomainError } from '#app/domain/errors.ts';
import { quotaDisplay } from '#app/domain/logs/logs.server.ts';
import { usersPageCtx } from '#app/domain/users/http.server.ts';
import { EditUserFields, FormError, UsersErrorBoundary } from '#app/domain/users/user-ui.tsx';
import {
  getUser,
  listGroups,
  parseInput,
  updateUser,
  updateUserSchema,
} from '#app/domain/users/users.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { createToastHeader, redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'users'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Users' }];

function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}

/** GET /user/edit/{id}: the edit-user form (group and quota only when editing another user). */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const ctx = await usersPageCtx(request, context);
  try {
    const user = await getUser(ctx, parseId(params.id));
    const redirectTo = safeRedirect(new URL(request.url).searchParams.get('redirectTo'), '/user');
    return {
      redirectTo,
      title: ctx.t('users:form.editTitle'),
      user,
      groups: listGroups(ctx),
      self: user.id === ctx.actor!.id,
      display: quotaDisplay(ctx.options),
    };
  } catch (error) {
    if (isDomainError(error) && error.status === 404) throw data(null, { status: 404 });
    if (isDomainError(error) && error.status === 403) throw data({ message: error.message }, { status: 403 });
    throw error;
  }
}

/**
 * POST /user/edit/{id}: intent=update (the PUT /api/user/ payload) or intent=addQuota {add_quota} (a delta,
 * negative allowed). Both go through updateUser; the quota change is audited and logged in one transaction.
 */
export async function action({ request, context, params }: ActionFunctionArgs) {
  const ctx = await usersPageCtx(request, context);
  const id = parseId(params.id);
  const form = Object.fromEntries(await request.formData());
  try {
    if (form.intent === 'addQuota') {
      const current = await getUser(ctx, id);
      const input = parseInput(ctx, updateUserSchema, {
        id,
        username: current.username,
        display_name: current.display_name,
        add_quota: form.add_quota,
      });
      if (input.add_quota === undefined) throw new InputError(ctx.t('users:errors.quotaInteger'));
      await updateUser(ctx, input);
      return redirectWithToast(`/user/edit/${id}`, {
        type: 'success',
        message: ctx.t('users:toast.updated'),
      });
    }
    const input = parseInput(ctx, updateUserSchema, { ...form, id });
    await updateUser(ctx, input);
  } catch (error) {
    if (isDomainError(error) && error.status < 500)
      return data({ ok: false, error: error.message, intent: String(form.intent ?? '') }, { status: 400 });
    throw error;
  }
  const toast = { type: 'success' as const, message: ctx.t('users:toast.updated') };
  // The edit drawer (a fetcher, with JavaScript) stays on the list: data + the flash toast, then revalidation.
  if (form._fetcher === '1')
    return data(
      { ok: true, error: null, intent: 'update' },
      { headers: { 'Set-Cookie': await createToastHeader(toast) } },
    );
  return redirectWithToast(safeRedirect(form.redirectTo, '/user'), toast);
}

export default function EditUserPage() {
  const { user, groups, self, redirectTo, display } = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const navigation = useNavigation();
  const { t } = useTranslation('users');
  return (
    <div className="page users-page form-page">
      <p>
        <Link to="/user">{t('actions.back')}</Link>
      </p>
      <h1>{t('form.editTitle')}</h1>
      <Form method="post" key={`${user.id}:${user.quota}`}>
        <input type="hidden" name="intent" value="update" />
        <input type="hidden" name="redirectTo" value={redirectTo} />
        <EditUserFields user={user} groups={groups} self={self} display={display} />
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

export { UsersErrorBoundary as ErrorBoundary };
