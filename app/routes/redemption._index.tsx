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
import { ListToolbar, PageSizeField, SearchField, SearchForm } from '#app/components/list/search-form.tsx';
import { Pagination } from '#app/components/pagination.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { formatQuota, type QuotaDisplay } from '#app/domain/account/quota-format.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { redemptionsPageCtx } from '#app/domain/redemptions/http.server.ts';
import {
  FormError,
  FreshCodes,
  formatTime,
  KeyCell,
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
import { getPreferences, serializePageSize } from '#app/utils/preferences.server.ts';
import { parsePageSize } from '#app/utils/preferences.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';

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
  const back = safeRedirect(form.redirectTo, '/redemption');
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

function StatusButton({ row, back }: { row: RedemptionWire; back: string }) {
  const { t } = useTranslation('redemptions');
  const next = row.status === 1 ? 2 : 1;
  return (
    <PostButton
      fields={{ intent: 'status', id: row.id, status: next, redirectTo: back }}
      label={t(next === 1 ? 'actions.enable' : 'actions.disable')}
      dataAction={next === 1 ? 'enable' : 'disable'}
      isDisabled={row.status === 3}
    />
  );
}

function DeleteAction({ row, back }: { row: RedemptionWire; back: string }) {
  const texts = useDeleteTexts('redemptions', { name: row.name, id: row.id });
  return (
    <ConfirmAction
      confirmHref={withRedirectTo(`/redemption/${row.id}/delete`, back)}
      texts={texts}
      fields={{ intent: 'delete', id: row.id, redirectTo: back }}
      dataAction="delete"
    />
  );
}

/** With JavaScript: the create drawer posting to /redemption/new through a fetcher; it then shows the codes once. */
function AddDrawer({ display }: { display: QuotaDisplay }) {
  const { t } = useTranslation('redemptions');
  const [open, setOpen] = useState(false);
  const [round, setRound] = useState(0);
  return (
    <ModalAction
      label={t('actions.add')}
      title={t('form.addTitle')}
      href="/redemption/new"
      hrefClassName="btn btn-primary"
      variant="primary"
      isOpen={open}
      onOpenChange={(next) => {
        setOpen(next);
        // a new drawer starts empty: the codes of the previous round are gone
        if (!next) setRound((r) => r + 1);
      }}
    >
      <AddBody key={round} display={display} close={() => setOpen(false)} />
    </ModalAction>
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
          <div className="list-dialog-actions list-dialog-actions-spaced">
            <Button onPress={close}>{t('actions.done')}</Button>
          </div>
        </>
      ) : (
        <fetcher.Form method="post" action="/redemption/new">
          <input type="hidden" name="intent" value="create" />
          <RedemptionFields mode="create" values={reply?.values} display={display} />
          <FormError message={reply?.error} />
          <div className="list-dialog-actions">
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
  const [open, setOpen] = useState(false);
  return (
    <ModalAction
      label={t('actions.edit')}
      title={t('form.editTitle')}
      href={withRedirectTo(`/redemption/${row.id}/edit`, back)}
      dataAction="edit"
      isOpen={open}
      onOpenChange={setOpen}
    >
      <EditBody id={row.id} close={() => setOpen(false)} />
    </ModalAction>
  );
}

function EditBody({ id, close }: { id: number; close: () => void }) {
  const { t } = useTranslation('redemptions');
  const load = useLoadOnce<typeof editLoader>(`/redemption/${id}/edit`);
  const save = useFetcher<EditReply>();
  useCloseOnSuccess(save, close);
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
          <div className="list-dialog-actions">
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
  const timeZone = useTimeZone();
  const { result, keyword, pageSize, display } = useLoaderData<typeof loader>();
  const { t } = useTranslation('redemptions');
  const location = useLocation();
  const back = location.pathname + location.search;
  const pages = Math.max(1, Math.ceil(result.total / result.page_size));

  return (
    <div className="page redemptions-page">
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
          <PageSizeField label={t('pagination.pageSize')} value={pageSize} />
        </SearchForm>
        <AddDrawer display={display} />
      </ListToolbar>

      <DataTable
        className="redemptions-table"
        columns={[
          t('columns.id'),
          t('columns.name'),
          t('columns.status'),
          t('columns.quota'),
          t('columns.created'),
          t('columns.redeemedBy'),
          t('columns.redeemedTime'),
          t('columns.key'),
          t('columns.actions'),
        ]}
        isEmpty={result.items.length === 0}
        empty={t('empty')}
      >
        {result.items.map((r) => (
          <tr key={r.id} data-redemption-id={r.id} data-name={r.name}>
            <td>{r.id}</td>
            <td>{r.name}</td>
            <td>
              <RedemptionStatusTag status={r.status} />
            </td>
            <td data-quota={r.quota}>{formatQuota(r.quota, display)}</td>
            <td>{formatTime(r.created_time, timeZone)}</td>
            <td data-testid="used-user-id">{r.used_user_id || '-'}</td>
            <td>{formatTime(r.redeemed_time, timeZone)}</td>
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
      </DataTable>

      <Pagination page={result.page} pages={pages} total={result.total} />
    </div>
  );
}

export { RedemptionsErrorBoundary as ErrorBoundary };
