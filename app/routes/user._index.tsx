import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useFetcher, useLoaderData, useLocation, useNavigation } from '@remix-run/react';
import { useEffect, useRef, useState } from 'react';
import { Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { Pagination } from '#app/components/pagination.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { type ManageAction, USER_STATUS_LOCKED } from '#app/domain/users/constants.ts';
import { usersPageCtx } from '#app/domain/users/http.server.ts';
import {
  CreateUserFields,
  dialogStyle,
  drawerStyle,
  type EditableUser,
  EditUserFields,
  FormError,
  inputStyle,
  overlayStyle,
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
import { useHydrated } from '#app/utils/hydrated.ts';
import { getPreferences, serializePageSize } from '#app/utils/preferences.server.ts';
import { pageSizes, parsePageSize, safeRedirectTo } from '#app/utils/preferences.ts';
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
    },
    { headers },
  );
}

/** POST /user?index intent=manage {id, action, redirectTo}: one row action, then back with a toast (PRG). */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await usersPageCtx(request, context);
  const form = Object.fromEntries(await request.formData());
  const back = safeRedirectTo(form.redirectTo, '/user');
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

/** Table layout (scoped to this page until the shared stylesheet gets a table style). */
const TABLE_CSS =
  '.users-table th,.users-table td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid var(--border);vertical-align:middle}' +
  '.users-table .row-actions{display:flex;flex-wrap:wrap;gap:.25rem}';

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
    <Form method="post" className="inline-form" style={{ display: 'inline' }}>
      <input type="hidden" name="intent" value="manage" />
      <input type="hidden" name="id" value={user.id} />
      <input type="hidden" name="action" value={action} />
      <input type="hidden" name="redirectTo" value={back} />
      <Button type="submit" variant="ghost" isDisabled={disabled} data-action={action}>
        {t(`actions.${action}`)}
      </Button>
    </Form>
  );
}

function DeleteAction({ user, back }: { user: UserWire; back: string }) {
  const { t } = useTranslation('users');
  const hydrated = useHydrated();
  if (!hydrated) {
    // Without JavaScript: a confirmation page.
    return (
      <Link
        to={`/user/${user.id}/delete?${new URLSearchParams({ redirectTo: back })}`}
        className="btn btn-ghost"
      >
        {t('actions.delete')}
      </Link>
    );
  }
  return (
    <DialogTrigger>
      <Button variant="ghost" data-action="delete">
        {t('actions.delete')}
      </Button>
      <ModalOverlay isDismissable style={overlayStyle}>
        <Modal style={dialogStyle}>
          <Dialog role="alertdialog">
            {({ close }) => (
              <>
                <Heading slot="title">{t('confirm.deleteTitle')}</Heading>
                <p>{t('confirm.deleteBody', { username: user.username })}</p>
                <Form method="post" onSubmit={() => close()}>
                  <input type="hidden" name="intent" value="manage" />
                  <input type="hidden" name="id" value={user.id} />
                  <input type="hidden" name="action" value="delete" />
                  <input type="hidden" name="redirectTo" value={back} />
                  <div style={{ display: 'flex', gap: '0.5rem', justifyContent: 'flex-end' }}>
                    <Button onPress={close}>{t('actions.cancel')}</Button>
                    <Button type="submit" variant="primary">
                      {t('actions.confirmDelete')}
                    </Button>
                  </div>
                </Form>
              </>
            )}
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

type DrawerReply = { ok: boolean; error: string | null };

/** Closes a drawer once its fetcher's submission succeeded (the reply carries ok: true). */
function useCloseOnSuccess(fetcher: { state: string; data?: DrawerReply }, close: () => void) {
  useEffect(() => {
    if (fetcher.state === 'idle' && fetcher.data?.ok) close();
  }, [fetcher.state, fetcher.data, close]);
}

/** With JavaScript: the add-user drawer (a side panel) posting to /user/edit through a fetcher. */
function AddUserDrawer() {
  const { t } = useTranslation('users');
  const [open, setOpen] = useState(false);
  return (
    <DialogTrigger isOpen={open} onOpenChange={setOpen}>
      <Button variant="primary">{t('actions.add')}</Button>
      <ModalOverlay isDismissable style={overlayStyle}>
        <Modal style={drawerStyle}>
          <Dialog aria-label={t('form.addTitle')}>
            <AddUserBody close={() => setOpen(false)} />
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

function AddUserBody({ close }: { close: () => void }) {
  const { t } = useTranslation('users');
  const fetcher = useFetcher<DrawerReply>();
  useCloseOnSuccess(fetcher, close);
  return (
    <>
      <Heading slot="title">{t('form.addTitle')}</Heading>
      <fetcher.Form method="post" action="/user/edit">
        <input type="hidden" name="intent" value="create" />
        <input type="hidden" name="_fetcher" value="1" />
        <CreateUserFields />
        <FormError message={fetcher.data?.error} />
        <div style={{ display: 'flex', gap: '0.5rem', justifyContent: 'flex-end' }}>
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
  const hydrated = useHydrated();
  const [open, setOpen] = useState(false);
  const href = `/user/edit/${user.id}?${new URLSearchParams({ redirectTo: back })}`;
  if (!hydrated) {
    return (
      <Link to={href} className="btn btn-ghost">
        {t('actions.edit')}
      </Link>
    );
  }
  return (
    <DialogTrigger isOpen={open} onOpenChange={setOpen}>
      <Button variant="ghost" data-action="edit">
        {t('actions.edit')}
      </Button>
      <ModalOverlay isDismissable style={overlayStyle}>
        <Modal style={drawerStyle}>
          <Dialog aria-label={t('form.editTitle')}>
            <EditUserBody id={user.id} href={href} close={() => setOpen(false)} />
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

type EditLoaderData = { user: EditableUser; groups: string[]; self: boolean };

function EditUserBody({ id, href, close }: { id: number; href: string; close: () => void }) {
  const { t } = useTranslation('users');
  const load = useFetcher<EditLoaderData>();
  const save = useFetcher<DrawerReply>();
  useCloseOnSuccess(save, close);
  const requested = useRef(false);
  useEffect(() => {
    if (requested.current) return;
    requested.current = true;
    load.load(`/user/edit/${id}`);
  }, [id, load]);
  const loaded = load.data;
  return (
    <>
      <Heading slot="title">{t('form.editTitle')}</Heading>
      {loaded ? (
        <save.Form method="post" action={`/user/edit/${id}`}>
          <input type="hidden" name="intent" value="update" />
          <input type="hidden" name="_fetcher" value="1" />
          <EditUserFields user={loaded.user} groups={loaded.groups} self={loaded.self} />
          <FormError message={save.data?.error} />
          <div style={{ display: 'flex', gap: '0.5rem', justifyContent: 'flex-end', alignItems: 'center' }}>
            {loaded.self ? null : (
              <Link to={href} className="btn btn-ghost">
                {t('actions.addQuota')}
              </Link>
            )}
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
  const { result, groups, keyword, group, pageSize, actor } = useLoaderData<typeof loader>();
  const { t } = useTranslation('users');
  const hydrated = useHydrated();
  const location = useLocation();
  const navigation = useNavigation();
  const back = location.pathname + location.search;
  const pages = Math.max(1, Math.ceil(result.total / result.page_size));

  return (
    <div className="page users-page">
      <style>{TABLE_CSS}</style>
      <h1>{t('title')}</h1>
      <div
        style={{
          display: 'flex',
          flexWrap: 'wrap',
          gap: '0.5rem',
          alignItems: 'flex-end',
          marginBottom: '1rem',
        }}
      >
        <Form
          method="get"
          role="search"
          aria-label={t('search.label')}
          style={{ display: 'flex', flexWrap: 'wrap', gap: '0.5rem', alignItems: 'flex-end' }}
        >
          <label style={{ display: 'flex', flexDirection: 'column' }}>
            {t('search.keyword')}
            <input
              type="search"
              name="keyword"
              defaultValue={keyword}
              placeholder={t('search.keywordPlaceholder')}
              style={{ ...inputStyle, minWidth: '18rem' }}
            />
          </label>
          <label style={{ display: 'flex', flexDirection: 'column' }}>
            {t('search.group')}
            <select name="group" defaultValue={group} style={inputStyle}>
              <option value="">{t('search.allGroups')}</option>
              {groups.map((g) => (
                <option key={g} value={g}>
                  {g}
                </option>
              ))}
            </select>
          </label>
          <label style={{ display: 'flex', flexDirection: 'column' }}>
            {t('pagination.pageSize')}
            <select name="page_size" defaultValue={String(pageSize)} style={inputStyle}>
              {pageSizes.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
          <Button type="submit" variant="secondary" isDisabled={navigation.state === 'loading'}>
            {t('search.submit')}
          </Button>
        </Form>
        {hydrated ? (
          <AddUserDrawer />
        ) : (
          <Link to="/user/edit" className="btn btn-primary">
            {t('actions.add')}
          </Link>
        )}
      </div>

      <table className="table users-table" style={{ width: '100%', borderCollapse: 'collapse' }}>
        <thead>
          <tr>
            <th scope="col">{t('columns.id')}</th>
            <th scope="col">{t('columns.username')}</th>
            <th scope="col">{t('columns.group')}</th>
            <th scope="col">{t('columns.quota')}</th>
            <th scope="col">{t('columns.usedQuota')}</th>
            <th scope="col">{t('columns.requestCount')}</th>
            <th scope="col">{t('columns.role')}</th>
            <th scope="col">{t('columns.status')}</th>
            <th scope="col">{t('columns.actions')}</th>
          </tr>
        </thead>
        <tbody>
          {result.items.length === 0 ? (
            <tr>
              <td colSpan={9}>{t('empty')}</td>
            </tr>
          ) : null}
          {result.items.map((u) => {
            const deleted = u.DeletedAt !== null;
            const lower = u.role < actor.role;
            return (
              <tr key={u.id} data-user-id={u.id} data-username={u.username}>
                <td>{u.id}</td>
                <td>
                  <span>{u.username}</span>
                  {u.display_name && u.display_name !== u.username ? (
                    <small> ({u.display_name})</small>
                  ) : null}
                </td>
                <td>{u.group}</td>
                <td>{u.quota}</td>
                <td>{u.used_quota}</td>
                <td>{u.request_count}</td>
                <td>
                  <RoleTag role={u.role} />
                </td>
                <td>
                  <StatusTag status={u.status} deleted={deleted} />
                </td>
                <td>
                  {deleted ? null : (
                    <div
                      className="row-actions"
                      title={t('actions.rowActions', { username: u.username })}
                      style={{ display: 'flex', flexWrap: 'wrap', gap: '0.25rem' }}
                    >
                      {lower || u.id === actor.id ? <EditAction user={u} back={back} /> : null}
                      {lower && actor.role >= 100 && u.role < 10 ? (
                        <ManageButton user={u} action="promote" back={back} />
                      ) : null}
                      {lower && actor.role >= 100 && u.role >= 10 ? (
                        <ManageButton user={u} action="demote" back={back} />
                      ) : null}
                      {lower && u.status === 1 ? (
                        <ManageButton user={u} action="disable" back={back} />
                      ) : null}
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
        </tbody>
      </table>

      <Pagination page={result.page} pages={pages} total={result.total} />
    </div>
  );
}

export { UsersErrorBoundary as ErrorBoundary };
