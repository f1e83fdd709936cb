import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useFetcher, useLoaderData, useLocation } from '@remix-run/react';
import { useState } from 'react';
import { Heading } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { ConfirmAction, useDeleteTexts, withRedirectTo } from '#app/components/list/confirm-action.tsx';
import { DataTable } from '#app/components/list/data-table.tsx';
import { useCloseOnSuccess, useLoadOnce } from '#app/components/list/fetcher-hooks.ts';
import { ModalAction } from '#app/components/list/modal-action.tsx';
import { PostButton } from '#app/components/list/post-button.tsx';
import {
  ListToolbar,
  PageSizeField,
  SearchField,
  SearchForm,
  SelectField,
} from '#app/components/list/search-form.tsx';
import { Pagination } from '#app/components/pagination.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { formatQuota, type QuotaDisplay } from '#app/domain/account/quota-format.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { quotaDisplay } from '#app/domain/logs/logs.server.ts';
import { type ManageAction, USER_STATUS_LOCKED } from '#app/domain/users/constants.ts';
import { usersPageCtx } from '#app/domain/users/http.server.ts';
import {
  CreateUserFields,
  type EditableUser,
  EditUserFields,
  FormError,
  RoleTag,
  StatusTag,
  UsersErrorBoundary,
} from '#app/domain/users/user-ui.tsx';
import type { UserWire } from '#app/domain/users/users.server.ts';
import {
  listGroups,
  listUsers,
  manageUser,
  manageUserSchema,
  parseInput,
  searchUsers,
} from '#app/domain/users/users.server.ts';
import { getPreferences, serializePageSize } from '#app/utils/preferences.server.ts';
import { parsePageSize } from '#app/utils/preferences.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'users'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Users' }];

/** GET /user?keyword&group&p&page_size: the admin users table (seed 000 §2 "Admin users page"). */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await usersPageCtx(request, context);
  const url = new URL(request.url);
  const keyword = (url.searchParams.get('keyword') ?? '').trim();
  const group = (url.searchParams.get('group') ?? '').trim();
  const page = Math.max(1, Number.parseInt(url.searchParams.get('p') ?? '1', 10) || 1);
  const chosen = parsePageSize(url.searchParams.get('page_size'));
  const prefs = await getPreferences(request);
  const pageSize = chosen ?? prefs.pageSize;
  const result =
    keyword || group
      ? await searchUsers(ctx, { keyword, group, page, pageSize })
      : await listUsers(ctx, { page, pageSize });
  const headers = new Headers();
  // The chosen page size is kept in the page_size preference cookie (seed §9: "stored locally").
  if (chosen && chosen !== prefs.pageSize) headers.append('Set-Cookie', await serializePageSize(chosen));
  return data(
    {
      title: ctx.t('users:title'),
      result,
      groups: listGroups(ctx),
      keyword,
      group,
      pageSize,
      actor: { id: ctx.actor!.id, role: ctx.actor!.role },
      display: quotaDisplay(ctx.options),
    },
    { headers },
  );
}

/** POST /user?index intent=manage {id, action, redirectTo}: one row action, then back with a toast (PRG). */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await usersPageCtx(request, context);
  const form = Object.fromEntries(await request.formData());
  const back = safeRedirect(form.redirectTo, '/user');
  if (form.intent !== 'manage')
    return redirectWithToast(back, { type: 'error', message: ctx.t('users:errors.invalidAction') });
  try {
    const input = parseInput(ctx, manageUserSchema, form);
    await manageUser(ctx, input);
    return redirectWithToast(back, { type: 'success', message: ctx.t('users:toast.done') });
  } catch (error) {
    if (isDomainError(error)) return redirectWithToast(back, { type: 'error', message: error.message });
    throw error;
  }
}

function ManageButton({
  user,
  action,
  back,
  disabled,
}: {
  user: UserWire;
  action: ManageAction;
  back: string;
  disabled?: boolean;
}) {
  const { t } = useTranslation('users');
  return (
    <PostButton
      className="inline-form list-inline-form"
      fields={{ intent: 'manage', id: user.id, action, redirectTo: back }}
      label={t(`actions.${action}`)}
      dataAction={action}
      isDisabled={disabled}
    />
  );
}

function DeleteAction({ user, back }: { user: UserWire; back: string }) {
  const texts = useDeleteTexts('users', { username: user.username });
  return (
    <ConfirmAction
      confirmHref={withRedirectTo(`/user/${user.id}/delete`, back)}
      texts={texts}
      fields={{ intent: 'manage', id: user.id, action: 'delete', redirectTo: back }}
      dataAction="delete"
    />
  );
}

type DrawerReply = { ok: boolean; error: string | null };

/** With JavaScript: the add-user drawer (a side panel) posting to /user/new through a fetcher. */
function AddUserDrawer() {
  const { t } = useTranslation('users');
  const [open, setOpen] = useState(false);
  return (
    <ModalAction
      label={t('actions.add')}
      title={t('form.addTitle')}
      href="/user/new"
      hrefClassName="btn btn-primary"
      variant="primary"
      isOpen={open}
      onOpenChange={setOpen}
    >
      <AddUserBody close={() => setOpen(false)} />
    </ModalAction>
  );
}

function AddUserBody({ close }: { close: () => void }) {
  const { t } = useTranslation('users');
  const fetcher = useFetcher<DrawerReply>();
  useCloseOnSuccess(fetcher, close);
  return (
    <>
      <Heading slot="title">{t('form.addTitle')}</Heading>
      <fetcher.Form method="post" action="/user/new">
        <input type="hidden" name="intent" value="create" />
        <input type="hidden" name="_fetcher" value="1" />
        <CreateUserFields />
        <FormError message={fetcher.data?.error} />
        <div className="list-dialog-actions">
          <Button onPress={close}>{t('actions.cancel')}</Button>
          <Button type="submit" variant="primary" isDisabled={fetcher.state !== 'idle'}>
            {t('actions.save')}
          </Button>
        </div>
      </fetcher.Form>
    </>
  );
}

/** Row "edit": with JavaScript a drawer loading /user/edit/{id} through a fetcher; without, that page. */
function EditAction({ user, back }: { user: UserWire; back: string }) {
  const { t } = useTranslation('users');
  const [open, setOpen] = useState(false);
  const href = withRedirectTo(`/user/edit/${user.id}`, back);
  return (
    <ModalAction
      label={t('actions.edit')}
      title={t('form.editTitle')}
      href={href}
      dataAction="edit"
      isOpen={open}
      onOpenChange={setOpen}
    >
      <EditUserBody id={user.id} close={() => setOpen(false)} />
    </ModalAction>
  );
}

type EditLoaderData = { user: EditableUser; groups: string[]; self: boolean; display: QuotaDisplay };

function EditUserBody({ id, close }: { id: number; close: () => void }) {
  const { t } = useTranslation('users');
  const load = useLoadOnce<EditLoaderData>(`/user/edit/${id}`);
  const save = useFetcher<DrawerReply>();
  useCloseOnSuccess(save, close);
  const loaded = load.data;
  return (
    <>
      <Heading slot="title">{t('form.editTitle')}</Heading>
      {loaded ? (
        <save.Form method="post" action={`/user/edit/${id}`}>
          <input type="hidden" name="intent" value="update" />
          <input type="hidden" name="_fetcher" value="1" />
          <EditUserFields
            user={loaded.user}
            groups={loaded.groups}
            self={loaded.self}
            display={loaded.display}
          />
          <FormError message={save.data?.error} />
          <div className="list-dialog-actions">
            <Button onPress={close}>{t('actions.cancel')}</Button>
            <Button type="submit" variant="primary" isDisabled={save.state !== 'idle'}>
              {t('actions.save')}
            </Button>
          </div>
        </save.Form>
      ) : (
        <p aria-busy="true">…</p>
      )}
    </>
  );
}

export default function UsersPage() {
  const { result, groups, keyword, group, pageSize, actor, display } = useLoaderData<typeof loader>();
  const { t } = useTranslation('users');
  const location = useLocation();
  const back = location.pathname + location.search;
  const pages = Math.max(1, Math.ceil(result.total / result.page_size));

  return (
    <div className="page users-page">
      <h1>{t('title')}</h1>
      <ListToolbar>
        <SearchForm label={t('search.label')} submitLabel={t('search.submit')}>
          <SearchField
            label={t('search.keyword')}
            name="keyword"
            defaultValue={keyword}
            placeholder={t('search.keywordPlaceholder')}
            wide
          />
          <SelectField
            label={t('search.group')}
            name="group"
            defaultValue={group}
            options={[['', t('search.allGroups')], ...groups.map((g) => [g, g] as const)]}
          />
          <PageSizeField label={t('pagination.pageSize')} value={pageSize} />
        </SearchForm>
        <AddUserDrawer />
      </ListToolbar>

      <DataTable
        className="users-table"
        columns={[
          t('columns.id'),
          t('columns.username'),
          t('columns.group'),
          t('columns.quota'),
          t('columns.usedQuota'),
          t('columns.requestCount'),
          t('columns.role'),
          t('columns.status'),
          t('columns.actions'),
        ]}
        isEmpty={result.items.length === 0}
        empty={t('empty')}
      >
        {result.items.map((u) => {
          const deleted = u.DeletedAt !== null;
          const lower = u.role < actor.role;
          return (
            <tr key={u.id} data-user-id={u.id} data-username={u.username}>
              <td>{u.id}</td>
              <td>
                <span>{u.username}</span>
                {u.display_name && u.display_name !== u.username ? <small> ({u.display_name})</small> : null}
              </td>
              <td>{u.group}</td>
              <td data-testid="user-quota" data-quota={u.quota}>
                {formatQuota(u.quota, display)}
              </td>
              <td data-testid="user-used-quota" data-quota={u.used_quota}>
                {formatQuota(u.used_quota, display)}
              </td>
              <td>{u.request_count}</td>
              <td>
                <RoleTag role={u.role} />
              </td>
              <td>
                <StatusTag status={u.status} deleted={deleted} />
              </td>
              <td>
                {deleted ? null : (
                  <div className="row-actions" title={t('actions.rowActions', { username: u.username })}>
                    {lower || u.id === actor.id ? <EditAction user={u} back={back} /> : null}
                    {lower && actor.role >= 100 && u.role < 10 ? (
                      <ManageButton user={u} action="promote" back={back} />
                    ) : null}
                    {lower && actor.role >= 100 && u.role >= 10 ? (
                      <ManageButton user={u} action="demote" back={back} />
                    ) : null}
                    {lower && u.status === 1 ? <ManageButton user={u} action="disable" back={back} /> : null}
                    {lower && u.status !== 1 ? (
                      <ManageButton
                        user={u}
                        action="enable"
                        back={back}
                        disabled={u.status === USER_STATUS_LOCKED}
                      />
                    ) : null}
                    {lower ? <DeleteAction user={u} back={back} /> : null}
                  </div>
                )}
              </td>
            </tr>
          );
        })}
      </DataTable>

      <Pagination page={result.page} pages={pages} total={result.total} />
    </div>
  );
}

export { UsersErrorBoundary as ErrorBoundary };
