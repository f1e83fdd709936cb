import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useFetcher, useLoaderData, useLocation, useRevalidator } from '@remix-run/react';
import { useState } from 'react';
import { Heading } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { ConfirmAction, useDeleteTexts, withRedirectTo } from '#app/components/list/confirm-action.tsx';
import { DataTable } from '#app/components/list/data-table.tsx';
import { useCloseOnSuccess, useLoadOnce } from '#app/components/list/fetcher-hooks.ts';
import { ModalAction } from '#app/components/list/modal-action.tsx';
import { ListToolbar, PageSizeField, SearchForm } from '#app/components/list/search-form.tsx';
import { Pagination } from '#app/components/pagination.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { osKey, type VersionWire } from '#app/domain/versions/constants.ts';
import type { VersionFormReply } from '#app/domain/versions/form.server.ts';
import { versionsPageCtx } from '#app/domain/versions/http.server.ts';
import {
  FormError,
  formatDate,
  Md5,
  modalStyle,
  OsLabel,
  Remark,
  toFormValues,
  VersionFields,
  VersionsErrorBoundary,
} from '#app/domain/versions/version-ui.tsx';
import { deleteVersion, listVersions, versionView } from '#app/domain/versions/versions.server.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import { getPreferences, serializePageSize } from '#app/utils/preferences.server.ts';
import { parsePageSize } from '#app/utils/preferences.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';

export const handle = { i18n: ['common', 'versions'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Versions' }];

/** GET /version?p&page_size: the admin versions table (seed 001 §2.7), newest first, server-side pages. */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await versionsPageCtx(request, context);
  const url = new URL(request.url);
  const page = Math.max(1, Number.parseInt(url.searchParams.get('p') ?? '1', 10) || 1);
  const chosen = parsePageSize(url.searchParams.get('page_size'));
  const prefs = await getPreferences(request);
  const pageSize = chosen ?? prefs.pageSize;
  const listed = await listVersions(ctx, { page, pageSize });
  const result = { ...listed, list: listed.list.map(versionView) };
  const headers = new Headers();
  // The chosen page size is kept in the page_size preference cookie (seed §9: "stored locally").
  if (chosen && chosen !== prefs.pageSize) headers.append('Set-Cookie', await serializePageSize(chosen));
  return data({ title: ctx.t('versions:title'), result, pageSize }, { headers });
}

/** POST /version?index intent=delete {id, redirectTo}: deletes (the modal confirmation), then back with a toast. */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await versionsPageCtx(request, context);
  const form = Object.fromEntries(await request.formData());
  const back = safeRedirect(form.redirectTo, '/version');
  if (form.intent !== 'delete')
    return redirectWithToast(back, { type: 'error', message: ctx.t('versions:errors.operationFailed') });
  const id = /^\d{1,9}$/.test(String(form.id ?? '')) ? Number(form.id) : 0;
  try {
    await deleteVersion(ctx, id);
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

function FormButtons({ close, busy }: { close: () => void; busy: boolean }) {
  const { t } = useTranslation('versions');
  return (
    <div className="list-dialog-actions">
      <Button onPress={close}>{t('actions.cancel')}</Button>
      <Button type="submit" variant="primary" isDisabled={busy}>
        {t('actions.save')}
      </Button>
    </div>
  );
}

/** With JavaScript: the add-version modal (width 650) posting to /version/new through a fetcher. */
function AddVersionModal() {
  const { t } = useTranslation('versions');
  const [open, setOpen] = useState(false);
  return (
    <ModalAction
      label={t('actions.add')}
      title={t('form.addTitle')}
      href="/version/new"
      hrefClassName="btn btn-primary"
      variant="primary"
      modalClassName="version-modal"
      modalStyle={modalStyle}
      testId="version-modal"
      isOpen={open}
      onOpenChange={setOpen}
    >
      <AddVersionBody close={() => setOpen(false)} />
    </ModalAction>
  );
}

function AddVersionBody({ close }: { close: () => void }) {
  const { t } = useTranslation('versions');
  const fetcher = useFetcher<VersionFormReply>();
  useCloseOnSuccess(fetcher, close);
  return (
    <>
      <Heading slot="title">{t('form.addTitle')}</Heading>
      <fetcher.Form method="post" action="/version/new" noValidate>
        <input type="hidden" name="_fetcher" value="1" />
        <VersionFields values={fetcher.data?.values} errors={fetcher.data?.fieldErrors} />
        <FormError message={fetcher.data?.error} />
        <FormButtons close={close} busy={fetcher.state !== 'idle'} />
      </fetcher.Form>
    </>
  );
}

/** Row "edit": with JavaScript a modal loading /version/{id}/edit through a fetcher; without, that page. */
function EditAction({ version, back }: { version: VersionWire; back: string }) {
  const { t } = useTranslation('versions');
  const [open, setOpen] = useState(false);
  return (
    <ModalAction
      label={t('actions.edit')}
      title={t('form.editTitle')}
      href={withRedirectTo(`/version/${version.id}/edit`, back)}
      dataAction="edit"
      modalClassName="version-modal"
      modalStyle={modalStyle}
      testId="version-modal"
      isOpen={open}
      onOpenChange={setOpen}
    >
      <EditVersionBody id={version.id} close={() => setOpen(false)} />
    </ModalAction>
  );
}

function EditVersionBody({ id, close }: { id: number; close: () => void }) {
  const { t } = useTranslation('versions');
  const load = useLoadOnce<{ version: VersionWire | null }>(`/version/${id}/edit?modal=1`);
  const save = useFetcher<VersionFormReply>();
  useCloseOnSuccess(save, close);
  const loaded = load.data?.version;
  const failed = load.state === 'idle' && load.data !== undefined && !loaded;
  return (
    <>
      <Heading slot="title">{t('form.editTitle')}</Heading>
      {loaded ? (
        <save.Form method="post" action={`/version/${id}/edit`} noValidate>
          <input type="hidden" name="_fetcher" value="1" />
          <VersionFields values={save.data?.values ?? toFormValues(loaded)} errors={save.data?.fieldErrors} />
          <FormError message={save.data?.error} />
          <FormButtons close={close} busy={save.state !== 'idle'} />
        </save.Form>
      ) : failed ? (
        <FormError message={t('errors.loadInfoFailed')} />
      ) : (
        <p aria-busy="true">…</p>
      )}
    </>
  );
}

function DeleteAction({ version, back }: { version: VersionWire; back: string }) {
  const { t } = useTranslation('versions');
  const texts = useDeleteTexts('versions', {
    version: version.version,
    os: t(`os.${osKey(version.os_type)}`),
  });
  return (
    <ConfirmAction
      confirmHref={withRedirectTo(`/version/${version.id}/delete`, back)}
      texts={texts}
      action="/version?index"
      fields={{ intent: 'delete', id: version.id, redirectTo: back }}
      dataAction="delete"
    />
  );
}

/** Refresh: with JavaScript a revalidation of this page's loader; without, a link to this page. */
function RefreshAction({ href }: { href: string }) {
  const { t } = useTranslation('versions');
  const hydrated = useHydrated();
  const revalidator = useRevalidator();
  if (!hydrated) {
    return (
      <Link to={href} className="btn btn-secondary">
        {t('actions.refresh')}
      </Link>
    );
  }
  return (
    <Button
      variant="secondary"
      onPress={() => revalidator.revalidate()}
      isDisabled={revalidator.state !== 'idle'}
    >
      {t('actions.refresh')}
    </Button>
  );
}

export default function VersionsPage() {
  const timeZone = useTimeZone();
  const { result, pageSize } = useLoaderData<typeof loader>();
  const { t } = useTranslation('versions');
  const location = useLocation();
  const back = location.pathname + location.search;
  const pages = Math.max(1, Math.ceil(result.total / (result.page_size || 1)));

  return (
    <div className="page versions-page">
      <h1>{t('title')}</h1>
      <ListToolbar>
        <AddVersionModal />
        <RefreshAction href={back} />
        <SearchForm submitLabel={t('pagination.apply')} submitVariant="ghost" className="list-search-end">
          <PageSizeField label={t('pagination.pageSize')} value={pageSize} />
        </SearchForm>
      </ListToolbar>

      <DataTable
        className="versions-table"
        columns={[
          t('columns.id'),
          t('columns.osType'),
          t('columns.version'),
          t('columns.downUrl'),
          t('columns.fileMd5'),
          t('columns.force'),
          t('columns.forceIds'),
          t('columns.lastDate'),
          t('columns.remark'),
          t('columns.actions'),
        ]}
        isEmpty={result.list.length === 0}
        empty={t('empty')}
      >
        {result.list.map((v) => (
          <tr key={v.id} data-version-id={v.id} data-version={v.version} data-os-type={v.os_type}>
            <td>{v.id}</td>
            <td>
              <OsLabel osType={v.os_type} />
            </td>
            <td>{v.version}</td>
            <td className="downurl">
              <a href={v.downurl} rel="noopener noreferrer nofollow" target="_blank">
                {v.downurl}
              </a>
            </td>
            <td>
              <Md5 value={v.filemd5} />
            </td>
            <td data-force={v.force}>{t(v.force === 1 ? 'force.yes' : 'force.no')}</td>
            <td>{v.forceids || '-'}</td>
            <td>
              <time dateTime={v.last_date}>{formatDate(v.last_date, timeZone)}</time>
            </td>
            <td>
              <Remark html={v.remark_html} />
            </td>
            <td>
              <div className="row-actions" title={t('actions.rowActions', { version: v.version })}>
                <EditAction version={v} back={back} />
                <DeleteAction version={v} back={back} />
              </div>
            </td>
          </tr>
        ))}
      </DataTable>

      <Pagination page={result.page} pages={pages} total={result.total} />
    </div>
  );
}

/** 403 for non-admins; any other failure of the list: 'load version list failed'. */
export function ErrorBoundary() {
  return <VersionsErrorBoundary failedKey="errors.loadListFailed" />;
}
