import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useActionData, useLoaderData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { getSelf, updateSelf } from '#app/domain/account/account.server.ts';
import { currentSessionId } from '#app/domain/auth/session.server.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { domainPageCtx } from '#app/domain/http.server.ts';
import { Field, FormError, UsersErrorBoundary } from '#app/domain/users/user-ui.tsx';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'users'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Profile' }];

/**
 * GET /user/edit (seed 000 route map: any signed-in user; new-api's edit page without an id edits oneself): the
 * caller's own username, display name and password, and the bound identifiers read-only.
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await domainPageCtx(request, context, {});
  const self = await getSelf(ctx);
  return {
    title: ctx.t('users:form.selfTitle'),
    user: {
      username: self.username,
      display_name: self.display_name,
      github_id: self.github_id,
      wechat_id: self.wechat_id,
      telegram_id: self.telegram_id,
      email: self.email,
    },
  };
}

/**
 * POST /user/edit {username, display_name, password, password2, original_password}: the same updateSelf as
 * PUT /api/user/self (one username rule; a new password needs the current one, and ends the other sessions).
 */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await domainPageCtx(request, context, {});
  const form = Object.fromEntries(await request.formData());
  const values = { username: String(form.username ?? ''), display_name: String(form.display_name ?? '') };
  try {
    await updateSelf(
      ctx,
      {
        username: form.username,
        display_name: form.display_name,
        password: form.password,
        password2: form.password2,
        original_password: form.original_password,
      },
      { currentSessionId: (await currentSessionId(request)) ?? undefined },
    );
  } catch (error) {
    if (isDomainError(error) && error.status < 500)
      return data({ error: error.message, values }, { status: 400 });
    throw error;
  }
  return redirectWithToast('/user/edit', { type: 'success', message: ctx.t('settings:toast.updated') });
}

export default function EditSelfPage() {
  const { user } = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const navigation = useNavigation();
  const { t } = useTranslation('users');
  const values = actionData?.values ?? user;
  return (
    <div className="page users-page form-page form-page-narrow">
      <h1>{t('form.selfTitle')}</h1>
      <Form method="post" key={`${user.username}:${user.display_name}`} data-testid="self-form">
        <Field
          label={t('form.username')}
          name="username"
          defaultValue={values.username}
          autoComplete="username"
        />
        <Field
          label={t('form.displayName')}
          name="display_name"
          defaultValue={values.display_name}
          autoComplete="nickname"
        />
        <Field
          label={t('form.password')}
          name="password"
          type="password"
          defaultValue=""
          placeholder={t('form.passwordPlaceholder')}
          autoComplete="new-password"
        />
        <Field label={t('form.password2')} name="password2" type="password" autoComplete="new-password" />
        <Field
          label={t('form.originalPassword')}
          name="original_password"
          type="password"
          autoComplete="current-password"
          hint={t('form.originalPasswordHint')}
        />
        <Field
          label={t('form.githubId')}
          name="github_id"
          defaultValue={user.github_id}
          readOnly
          hint={t('form.readonlyHint')}
        />
        <Field label={t('form.wechatId')} name="wechat_id" defaultValue={user.wechat_id} readOnly />
        <Field label={t('form.telegramId')} name="telegram_id" defaultValue={user.telegram_id} readOnly />
        <Field label={t('form.email')} name="email" defaultValue={user.email} readOnly />
        <FormError message={actionData?.error} />
        <div className="form-actions">
          <Link to="/setting" className="btn btn-secondary">
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
