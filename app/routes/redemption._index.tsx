import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useFetcher, useLoaderData, useLocation, useNavigation } from '@remix-run/react';
import { useEffect, useRef, useState } from 'react';
import { Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { Pagination } from '#app/components/pagination.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { formatQuota, type QuotaDisplay } from '#app/domain/account/quota-format.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { redemptionsPageCtx } from '#app/domain/redemptions/http.server.ts';
import {
  dialogStyle,
  drawerStyle,
  FormError,
  FreshCodes,
  formatTime,
  inputStyle,
  KeyCell,
  overlayStyle,
  RedemptionFields,
  RedemptionStatusTag,
  RedemptionsErrorBoundary,
} from '#app/domain/redemptions/redemption-ui.tsx';
import {
  deleteRedemption,
  listRedemptions,
  parseInput,
  quotaDisplay,
  type RedemptionWire,
  searchRedemptions,
  updateRedemption,
  updateRedemptionSchema,
} from '#app/domain/redemptions/redemptions.server.ts';
import type { EditReply, loader as editLoader } from '#app/routes/redemption.$id.edit.tsx';
import type { CreateReply } from '#app/routes/redemption.new.tsx';
import { useHydrated } from '#app/utils/hydrated.ts';
import { getPreferences, serializePageSize } from '#app/utils/preferences.server.ts';
import { pageSizes, parsePageSize, safeRedirectTo } from '#app/utils/preferences.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'redemptions'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Redemption' }];

/** GET /redemption?keyword&p&page_size: the admin redemption codes table (seed 001 §2.6). */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await redemptionsPageCtx(request, context);
  const url = new URL(request.url);
  const keyword = (url.searchParams.get('keyword') ?? '').trim();
  const page = Math.max(1, Number.parseInt(url.searchParams.get('p') ?? '1', 10) || 1);
  const chosen = parsePageSize(url.searchParams.get('page_size'));
  const prefs = await getPreferences(request);
  const pageSize = chosen ?? prefs.pageSize;
  const result = keyword
    ? await searchRedemptions(ctx, { keyword, page, pageSize })
    : await listRedemptions(ctx, { page, pageSize });
  const headers = new Headers({ 'Cache-Control': 'no-store' });
  if (chosen && chosen !== prefs.pageSize) headers.append('Set-Cookie', await serializePageSize(chosen));
  return data(
    { title: ctx.t('redemptions:title'), result, keyword, pageSize, display: quotaDisplay(ctx.options) },
    { headers },
  );
}

/**
 * POST /redemption?index intent=status {id, status, redirectTo} (enable / disable) or intent=delete {id}: one row
 * action, then back with a toast (PRG).
 */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await redemptionsPageCtx(request, context);
  const form = Object.fromEntries(await request.formData());
  const back = safeRedirectTo(form.redirectTo, '/redemption');
  try {
    if (form.intent === 'status') {
      const input = parseInput(ctx, updateRedemptionSchema, { ...form, status_only: true });
      const row = await updateRedemption(ctx, input);
      const message = ctx.t(row.status === 1 ? 'redemptions:toast.enabled' : 'redemptions:toast.disabled');
      return redirectWithToast(back, { type: 'success', message });
    }
    if (form.intent === 'delete') {
      const id = /^\d{1,9}$/.test(String(form.id ?? '')) ? Number(form.id) : 0;
      await deleteRedemption(ctx, id);
      return redirectWithToast(back, { type: 'success', message: ctx.t('redemptions:toast.deleted') });
    }
    return redirectWithToast(back, { type: 'error', message: ctx.t('redemptions:errors.invalidInput') });
  } catch (error) {
    if (isDomainError(error)) return redirectWithToast(back, { type: 'error', message: error.message });
    throw error;
  }
}

const TABLE_CSS =
  '.redemptions-table th,.redemptions-table td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid var(--border);vertical-align:middle}' +
  '.redemptions-table .row-actions{display:flex;flex-wrap:wrap;gap:.25rem}';

function StatusButton({ row, back }: { row: RedemptionWire; back: string }) {
  const { t } = useTranslation('redemptions');
  const next = row.status === 1 ? 2 : 1;
  return (
    <Form method="post" style={{ display: 'inline' }}>
      <input type="hidden" name="intent" value="status" />
      <input type="hidden" name="id" value={row.id} />
      <input type="hidden" name="status" value={next} />
      <input type="hidden" name="redirectTo" value={back} />
      <Button
        type="submit"
        variant="ghost"
        isDisabled={row.status === 3}
        data-action={next === 1 ? 'enable' : 'disable'}
      >
        {t(next === 1 ? 'actions.enable' : 'actions.disable')}
      </Button>
    </Form>
  );
}

function DeleteAction({ row, back }: { row: RedemptionWire; back: string }) {
  const { t } = useTranslation('redemptions');
  const hydrated = useHydrated();
  if (!hydrated) {
    return (
      <Link
        to={`/redemption/${row.id}/delete?${new URLSearchParams({ redirectTo: back })}`}
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
                <p>{t('confirm.deleteBody', { name: row.name, id: row.id })}</p>
                <Form method="post" onSubmit={() => close()}>
                  <input type="hidden" name="intent" value="delete" />
                  <input type="hidden" name="id" value={row.id} />
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

/** With JavaScript: the create drawer posting to /redemption/new through a fetcher; it then shows the codes once. */
function AddDrawer({ display }: { display: QuotaDisplay }) {
  const { t } = useTranslation('redemptions');
  const [open, setOpen] = useState(false);
  const [round, setRound] = useState(0);
  return (
    <DialogTrigger
      isOpen={open}
      onOpenChange={(next) => {
        setOpen(next);
        // a new drawer starts empty: the codes of the previous round are gone
        if (!next) setRound((r) => r + 1);
      }}
    >
      <Button variant="primary">{t('actions.add')}</Button>
      <ModalOverlay isDismissable style={overlayStyle}>
        <Modal style={drawerStyle}>
          <Dialog aria-label={t('form.addTitle')}>
            <AddBody key={round} display={display} close={() => setOpen(false)} />
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

function AddBody({ display, close }: { display: QuotaDisplay; close: () => void }) {
  const { t } = useTranslation('redemptions');
  const fetcher = useFetcher<CreateReply>();
  const reply = fetcher.data;
  return (
    <>
      <Heading slot="title">{t('form.addTitle')}</Heading>
      {reply?.ok ? (
        <>
          <FreshCodes keys={reply.keys} />
          <div style={{ display: 'flex', justifyContent: 'flex-end', marginTop: '0.75rem' }}>
            <Button onPress={close}>{t('actions.done')}</Button>
          </div>
        </>
      ) : (
        <fetcher.Form method="post" action="/redemption/new">
          <input type="hidden" name="intent" value="create" />
          <RedemptionFields mode="create" values={reply?.values} display={display} />
          <FormError message={reply?.error} />
          <div style={{ display: 'flex', gap: '0.5rem', justifyContent: 'flex-end' }}>
            <Button onPress={close}>{t('actions.cancel')}</Button>
            <Button type="submit" variant="primary" isDisabled={fetcher.state !== 'idle'}>
              {t('actions.save')}
            </Button>
          </div>
        </fetcher.Form>
      )}
    </>
  );
}

/** Row "edit": with JavaScript a drawer loading /redemption/{id}/edit through a fetcher; without, that page. */
function EditAction({ row, back }: { row: RedemptionWire; back: string }) {
  const { t } = useTranslation('redemptions');
  const hydrated = useHydrated();
  const [open, setOpen] = useState(false);
  const href = `/redemption/${row.id}/edit?${new URLSearchParams({ redirectTo: back })}`;
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
            <EditBody id={row.id} close={() => setOpen(false)} />
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

function EditBody({ id, close }: { id: number; close: () => void }) {
  const { t } = useTranslation('redemptions');
  const load = useFetcher<typeof editLoader>();
  const save = useFetcher<EditReply>();
  const requested = useRef(false);
  useEffect(() => {
    if (requested.current) return;
    requested.current = true;
    load.load(`/redemption/${id}/edit`);
  }, [id, load]);
  useEffect(() => {
    if (save.state === 'idle' && save.data?.ok) close();
  }, [save.state, save.data, close]);
  const loaded = load.data;
  return (
    <>
      <Heading slot="title">{t('form.editTitle')}</Heading>
      {!loaded ? (
        <p aria-busy="true">…</p>
      ) : loaded.redemption.status !== 1 ? (
        <p role="alert">{t('form.usedNotEditable')}</p>
      ) : (
        <save.Form method="post" action={`/redemption/${id}/edit`}>
          <input type="hidden" name="intent" value="update" />
          <input type="hidden" name="_fetcher" value="1" />
          <RedemptionFields
            mode="edit"
            values={save.data?.values ?? { name: loaded.redemption.name, quota: loaded.redemption.quota }}
            display={loaded.display}
          />
          <FormError message={save.data?.error} />
          <div style={{ display: 'flex', gap: '0.5rem', justifyContent: 'flex-end' }}>
            <Button onPress={close}>{t('actions.cancel')}</Button>
            <Button type="submit" variant="primary" isDisabled={save.state !== 'idle'}>
              {t('actions.save')}
            </Button>
          </div>
        </save.Form>
      )}
    </>
  );
}

export default function RedemptionsPage() {
  const { result, keyword, pageSize, display } = useLoaderData<typeof loader>();
  const { t } = useTranslation('redemptions');
  const hydrated = useHydrated();
  const location = useLocation();
  const navigation = useNavigation();
  const back = location.pathname + location.search;
  const pages = Math.max(1, Math.ceil(result.total / result.page_size));

  return (
    <div className="page redemptions-page">
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
          <AddDrawer display={display} />
        ) : (
          <Link to="/redemption/new" className="btn btn-primary">
            {t('actions.add')}
          </Link>
        )}
      </div>

      <table className="table redemptions-table" style={{ width: '100%', borderCollapse: 'collapse' }}>
        <thead>
          <tr>
            <th scope="col">{t('columns.id')}</th>
            <th scope="col">{t('columns.name')}</th>
            <th scope="col">{t('columns.status')}</th>
            <th scope="col">{t('columns.quota')}</th>
            <th scope="col">{t('columns.created')}</th>
            <th scope="col">{t('columns.redeemedBy')}</th>
            <th scope="col">{t('columns.redeemedTime')}</th>
            <th scope="col">{t('columns.key')}</th>
            <th scope="col">{t('columns.actions')}</th>
          </tr>
        </thead>
        <tbody>
          {result.items.length === 0 ? (
            <tr>
              <td colSpan={9}>{t('empty')}</td>
            </tr>
          ) : null}
          {result.items.map((r) => (
            <tr key={r.id} data-redemption-id={r.id} data-name={r.name}>
              <td>{r.id}</td>
              <td>{r.name}</td>
              <td>
                <RedemptionStatusTag status={r.status} />
              </td>
              <td data-quota={r.quota}>{formatQuota(r.quota, display)}</td>
              <td>{formatTime(r.created_time)}</td>
              <td data-testid="used-user-id">{r.used_user_id || '-'}</td>
              <td>{formatTime(r.redeemed_time)}</td>
              <td>
                <KeyCell code={r.key} />
              </td>
              <td>
                <div className="row-actions" title={t('actions.rowActions', { name: r.name })}>
                  {r.status === 1 ? <EditAction row={r} back={back} /> : null}
                  {r.status !== 3 ? <StatusButton row={r} back={back} /> : null}
                  <DeleteAction row={r} back={back} />
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>

      <Pagination page={result.page} pages={pages} total={result.total} />
    </div>
  );
}

export { RedemptionsErrorBoundary as ErrorBoundary };
