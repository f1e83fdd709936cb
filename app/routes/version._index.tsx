import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import {
  Form,
  useFetcher,
  useLoaderData,
  useLocation,
  useNavigation,
  useRevalidator,
} from '@remix-run/react';
import { useEffect, useRef, useState } from 'react';
import { Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { Pagination } from '#app/components/pagination.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { osKey, type VersionWire } from '#app/domain/versions/constants.ts';
import type { VersionFormReply } from '#app/domain/versions/form.server.ts';
import { versionsPageCtx } from '#app/domain/versions/http.server.ts';
import {
  confirmStyle,
  FormError,
  formatDate,
  inputStyle,
  Md5,
  modalStyle,
  OsLabel,
  overlayStyle,
  Remark,
  toFormValues,
  VersionFields,
  VersionsErrorBoundary,
} from '#app/domain/versions/version-ui.tsx';
import { deleteVersion, listVersions } from '#app/domain/versions/versions.server.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import { getPreferences, serializePageSize } from '#app/utils/preferences.server.ts';
import { pageSizes, parsePageSize, safeRedirectTo } from '#app/utils/preferences.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

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
  const result = await listVersions(ctx, { page, pageSize });
  const headers = new Headers();
  // The chosen page size is kept in the page_size preference cookie (seed §9: "stored locally").
  if (chosen && chosen !== prefs.pageSize) headers.append('Set-Cookie', await serializePageSize(chosen));
  return data({ title: ctx.t('versions:title'), result, pageSize }, { headers });
}

/** POST /version?index intent=delete {id, redirectTo}: deletes (the modal confirmation), then back with a toast. */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await versionsPageCtx(request, context);
  const form = Object.fromEntries(await request.formData());
  const back = safeRedirectTo(form.redirectTo, '/version');
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

const TABLE_CSS =
  '.versions-table th,.versions-table td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid var(--border);vertical-align:top}' +
  '.versions-table .row-actions{display:flex;flex-wrap:wrap;gap:.25rem}' +
  '.versions-table .version-remark{max-width:22rem;max-height:8rem;overflow:auto}' +
  '.versions-table .downurl{max-width:18rem;word-break:break-all}';

/** Closes a modal once its fetcher's submission succeeded (the reply carries ok: true). */
function useCloseOnSuccess(fetcher: { state: string; data?: VersionFormReply }, close: () => void) {
  useEffect(() => {
    if (fetcher.state === 'idle' && fetcher.data?.ok) close();
  }, [fetcher.state, fetcher.data, close]);
}

function FormButtons({ close, busy }: { close: () => void; busy: boolean }) {
  const { t } = useTranslation('versions');
  return (
    <div style={{ display: 'flex', gap: '0.5rem', justifyContent: 'flex-end' }}>
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
    <DialogTrigger isOpen={open} onOpenChange={setOpen}>
      <Button variant="primary">{t('actions.add')}</Button>
      <ModalOverlay isDismissable style={overlayStyle}>
        <Modal style={modalStyle} data-testid="version-modal">
          <Dialog aria-label={t('form.addTitle')}>
            <AddVersionBody close={() => setOpen(false)} />
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
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
  const hydrated = useHydrated();
  const [open, setOpen] = useState(false);
  const href = `/version/${version.id}/edit?${new URLSearchParams({ redirectTo: back })}`;
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
        <Modal style={modalStyle} data-testid="version-modal">
          <Dialog aria-label={t('form.editTitle')}>
            <EditVersionBody id={version.id} close={() => setOpen(false)} />
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

function EditVersionBody({ id, close }: { id: number; close: () => void }) {
  const { t } = useTranslation('versions');
  const load = useFetcher<{ version: VersionWire | null }>();
  const save = useFetcher<VersionFormReply>();
  useCloseOnSuccess(save, close);
  const requested = useRef(false);
  useEffect(() => {
    if (requested.current) return;
    requested.current = true;
    load.load(`/version/${id}/edit?modal=1`);
  }, [id, load]);
  const loaded = load.data?.version;
  const failed = load.state === 'idle' && requested.current && load.data !== undefined && !loaded;
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
  const hydrated = useHydrated();
  const os = t(`os.${osKey(version.os_type)}`);
  if (!hydrated) {
    // Without JavaScript: a confirmation page.
    return (
      <Link
        to={`/version/${version.id}/delete?${new URLSearchParams({ redirectTo: back })}`}
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
        <Modal style={confirmStyle}>
          <Dialog role="alertdialog">
            {({ close }) => (
              <>
                <Heading slot="title">{t('confirm.deleteTitle')}</Heading>
                <p>{t('confirm.deleteBody', { version: version.version, os })}</p>
                <Form method="post" action="/version?index" onSubmit={() => close()}>
                  <input type="hidden" name="intent" value="delete" />
                  <input type="hidden" name="id" value={version.id} />
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
  const { result, pageSize } = useLoaderData<typeof loader>();
  const { t } = useTranslation('versions');
  const hydrated = useHydrated();
  const location = useLocation();
  const navigation = useNavigation();
  const back = location.pathname + location.search;
  const pages = Math.max(1, Math.ceil(result.total / (result.page_size || 1)));

  return (
    <div className="page versions-page">
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
        {hydrated ? (
          <AddVersionModal />
        ) : (
          <Link to="/version/new" className="btn btn-primary">
            {t('actions.add')}
          </Link>
        )}
        <RefreshAction href={back} />
        <Form
          method="get"
          style={{ display: 'flex', gap: '0.5rem', alignItems: 'flex-end', marginLeft: 'auto' }}
        >
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
          <Button type="submit" variant="ghost" isDisabled={navigation.state === 'loading'}>
            {t('pagination.apply')}
          </Button>
        </Form>
      </div>

      <div style={{ overflowX: 'auto' }}>
        <table className="table versions-table" style={{ width: '100%', borderCollapse: 'collapse' }}>
          <thead>
            <tr>
              <th scope="col">{t('columns.id')}</th>
              <th scope="col">{t('columns.osType')}</th>
              <th scope="col">{t('columns.version')}</th>
              <th scope="col">{t('columns.downUrl')}</th>
              <th scope="col">{t('columns.fileMd5')}</th>
              <th scope="col">{t('columns.force')}</th>
              <th scope="col">{t('columns.forceIds')}</th>
              <th scope="col">{t('columns.lastDate')}</th>
              <th scope="col">{t('columns.remark')}</th>
              <th scope="col">{t('columns.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {result.list.length === 0 ? (
              <tr>
                <td colSpan={10}>{t('empty')}</td>
              </tr>
            ) : null}
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
                  <time dateTime={v.last_date}>{formatDate(v.last_date)}</time>
                </td>
                <td>
                  <Remark html={v.remark} />
                </td>
                <td>
                  <div className="row-actions" title={t('actions.rowActions', { version: v.version })}>
                    <EditAction version={v} back={back} />
                    <DeleteAction version={v} back={back} />
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      <Pagination page={result.page} pages={pages} total={result.total} />
    </div>
  );
}

/** 403 for non-admins; any other failure of the list: 'load version list failed'. */
export function ErrorBoundary() {
  return <VersionsErrorBoundary failedKey="errors.loadListFailed" />;
}
