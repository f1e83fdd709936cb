import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useDeleteTexts } from '#app/components/list/confirm-action.tsx';
import { ConfirmPage } from '#app/components/list/confirm-page.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { usersPageCtx } from '#app/domain/users/http.server.ts';
import { UsersErrorBoundary } from '#app/domain/users/user-ui.tsx';
import { getUser, manageUser } from '#app/domain/users/users.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'users'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Users' }];

function parseId(value: string | undefined): number {
  return /^\d{1,9}$/.test(value ?? '') ? Number(value) : 0;
}

/** GET /user/{id}/delete: the confirmation step of "delete" (deregister) without JavaScript. */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const ctx = await usersPageCtx(request, context);
  let user: Awaited<ReturnType<typeof getUser>>;
  try {
    user = await getUser(ctx, parseId(params.id));
  } catch (error) {
    if (isDomainError(error) && error.status === 404) throw data(null, { status: 404 });
    if (isDomainError(error) && error.status === 403) throw data({ message: error.message }, { status: 403 });
    throw error;
  }
  const redirectTo = safeRedirect(new URL(request.url).searchParams.get('redirectTo'), '/user');
  return {
    title: ctx.t('users:confirm.deleteTitle'),
    user: { id: user.id, username: user.username },
    redirectTo,
  };
}

/** POST /user/{id}/delete: manageUser(delete), then back to the list with a toast. */
export async function action({ request, context, params }: ActionFunctionArgs) {
  const ctx = await usersPageCtx(request, context);
  const form = await request.formData();
  const back = safeRedirect(form.get('redirectTo'), '/user');
  try {
    await manageUser(ctx, { id: parseId(params.id), action: 'delete' });
  } catch (error) {
    if (isDomainError(error)) return redirectWithToast(back, { type: 'error', message: error.message });
    throw error;
  }
  return redirectWithToast(back, { type: 'success', message: ctx.t('users:toast.done') });
}

export default function DeleteUserPage() {
  const { user, redirectTo } = useLoaderData<typeof loader>();
  return (
    <ConfirmPage
      className="users-page"
      redirectTo={redirectTo}
      {...useDeleteTexts('users', { username: user.username })}
    />
  );
}

export { UsersErrorBoundary as ErrorBoundary };
