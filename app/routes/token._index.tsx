import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useFetcher, useLoaderData, useLocation } from '@remix-run/react';
import { createContext, useContext, useState } from 'react';
import { Dialog, DialogTrigger, Heading, Modal, ModalOverlay, Popover } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { ConfirmAction, useDeleteTexts, withRedirectTo } from '#app/components/list/confirm-action.tsx';
import { DataTable } from '#app/components/list/data-table.tsx';
import { useCloseOnSuccess, useLoadOnce } from '#app/components/list/fetcher-hooks.ts';
import { ModalAction } from '#app/components/list/modal-action.tsx';
import { PostButton } from '#app/components/list/post-button.tsx';
import { ListToolbar, PageSizeField, SearchField, SearchForm } from '#app/components/list/search-form.tsx';
import { Pagination } from '#app/components/pagination.tsx';
import { useToast } from '#app/components/toaster.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { quotaDisplay } from '#app/domain/account/account.server.ts';
import { formatQuota } from '#app/domain/account/quota-format.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { tokensPageCtx } from '#app/domain/tokens/http.server.ts';
import { type EditorData, formatTime } from '#app/domain/tokens/page.server.ts';
import {
  CreatedKeys,
  emptyTokenForm,
  FormError,
  TokenFields,
  type TokenFormValues,
  TokenStatusTag,
  TokensErrorBoundary,
} from '#app/domain/tokens/token-ui.tsx';
import {
  listTokens,
  parseInput,
  searchTokens,
  setTokenStatus,
  statusOnlySchema,
} from '#app/domain/tokens/tokens.server.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import { getPreferences, serializePageSize } from '#app/utils/preferences.server.ts';
import { parsePageSize } from '#app/utils/preferences.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { requestTimeZone } from '#app/utils/time.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'users', 'tokens'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Tokens' }];

type ApiAddress = { title?: string; url: string; line?: string };

/** GET /token?keyword&token&p&page_size: the caller's tokens (seed 001 §2.5). */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await tokensPageCtx(request, context);
  const url = new URL(request.url);
  const timeZone = requestTimeZone(request);
  const keyword = (url.searchParams.get('keyword') ?? '').trim();
  const token = (url.searchParams.get('token') ?? '').trim();
  const page = Math.max(1, Number.parseInt(url.searchParams.get('p') ?? '1', 10) || 1);
  const chosen = parsePageSize(url.searchParams.get('page_size'));
  const prefs = await getPreferences(request);
  const pageSize = chosen ?? prefs.pageSize;
  const result =
    keyword || token
      ? await searchTokens(ctx, { keyword, token, page, size: pageSize })
      : await listTokens(ctx, { page, size: pageSize });
  const headers = new Headers({ 'Cache-Control': 'no-store' });
  if (chosen && chosen !== prefs.pageSize) headers.append('Set-Cookie', await serializePageSize(chosen));
  const addresses = ((ctx.options.get('apiAddressList') ?? []) as ApiAddress[]).filter(
    (a) => a && typeof a.url === 'string',
  );
  return data(
    {
      title: ctx.t('tokens:title'),
      items: result.items.map((tok) => ({
        ...tok,
        key: `sk-${tok.key}`,
        created_text: formatTime(tok.created_time, timeZone),
        expired_text: tok.expired_time === -1 ? null : formatTime(tok.expired_time, timeZone),
      })),
      page: result.page,
      total: result.total,
      pageSize,
      keyword,
      token,
      display: quotaDisplay(ctx.options as never),
      addresses,
    },
    { headers },
  );
}

/** POST /token?index intent=status {id, status}: enable / disable (status_only), then back with a toast. */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await tokensPageCtx(request, context);
  const form = Object.fromEntries(await request.formData());
  const back = safeRedirect(form.redirectTo, '/token');
  if (form.intent !== 'status')
    return redirectWithToast(back, { type: 'error', message: ctx.t('tokens:errors.invalidAction') });
  try {
    const input = parseInput(ctx, statusOnlySchema, form);
    await setTokenStatus(ctx, input);
    const message = ctx.t(input.status === 1 ? 'tokens:toast.enabled' : 'tokens:toast.disabled');
    return redirectWithToast(back, { type: 'success', message });
  } catch (error) {
    if (isDomainError(error)) return redirectWithToast(back, { type: 'error', message: error.message });
    throw error;
  }
}

type Row = ReturnType<typeof useLoaderData<typeof loader>>['items'][number];

function maskKey(key: string): string {
  return key.length > 12 ? `${key.slice(0, 7)}${'*'.repeat(10)}${key.slice(-4)}` : key;
}

/** Copy failures open a dialog with the text to copy by hand (seed 001 §8); provided by TokensPage. */
const ManualCopyContext = createContext<(text: string) => void>(() => {});

function useCopy(fallback?: (text: string) => void) {
  const { t } = useTranslation('tokens');
  const { notify } = useToast();
  const fromContext = useContext(ManualCopyContext);
  const showManualCopy = fallback ?? fromContext;
  return async (text: string) => {
    try {
      await navigator.clipboard.writeText(text);
      notify({ type: 'success', message: t('key.copied', { text }) });
    } catch {
      showManualCopy(text);
    }
  };
}

function ManualCopyDialog({ text, close }: { text: string | null; close: () => void }) {
  const { t } = useTranslation('tokens');
  return (
    <ModalOverlay
      isOpen={text !== null}
      onOpenChange={(open) => !open && close()}
      isDismissable
      className="list-overlay"
    >
      <Modal className="list-dialog">
        <Dialog role="alertdialog">
          <Heading slot="title">{t('key.copyFailed')}</Heading>
          <textarea readOnly value={text ?? ''} rows={4} className="list-input list-input-full" />
          <Button onPress={close}>{t('actions.close')}</Button>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}

function KeyCell({ row, back }: { row: Row; back: string }) {
  const { t } = useTranslation('tokens');
  const hydrated = useHydrated();
  const copy = useCopy();
  const revealHref = `/token/${row.id}/key?${new URLSearchParams({ redirectTo: back })}`;
  return (
    <span style={{ display: 'inline-flex', gap: '0.25rem', alignItems: 'center' }}>
      <code data-testid="masked-key">{maskKey(row.key)}</code>
      {hydrated ? (
        <Button variant="ghost" onPress={() => copy(row.key)} data-action="copy">
          {t('actions.copy')}
        </Button>
      ) : (
        <Link to={revealHref} className="btn btn-ghost">
          {t('actions.reveal')}
        </Link>
      )}
    </span>
  );
}

function StatusButton({ row, back }: { row: Row; back: string }) {
  const { t } = useTranslation('tokens');
  const next = row.status === 1 ? 2 : 1;
  return (
    <PostButton
      fields={{ intent: 'status', id: row.id, status: next, redirectTo: back }}
      label={t(next === 1 ? 'actions.enable' : 'actions.disable')}
      dataAction={next === 1 ? 'enable' : 'disable'}
    />
  );
}

function DeleteAction({ row, back }: { row: Row; back: string }) {
  const texts = useDeleteTexts('tokens', { name: row.name });
  return (
    <ConfirmAction
      confirmHref={withRedirectTo(`/token/${row.id}/delete`, back)}
      texts={texts}
      action={`/token/${row.id}/delete`}
      fields={{ redirectTo: back }}
      dataAction="delete"
    />
  );
}

type DrawerReply = {
  ok: boolean;
  error: string | null;
  values: TokenFormValues | null;
  /** a create's new keys, shown once in the drawer */
  created?: { id: number; name: string; key: string }[] | null;
};
type EditorLoad = EditorData & { values?: TokenFormValues };

/** With JavaScript: the create / edit drawer, loading /token/new or /token/{id}/edit and posting there. */
function TokenDrawer({ id, trigger, href }: { id: number | null; trigger: string; href: string }) {
  const { t } = useTranslation('tokens');
  const [open, setOpen] = useState(false);
  return (
    <ModalAction
      label={trigger}
      title={t(id ? 'form.editTitle' : 'form.addTitle')}
      href={href}
      hrefClassName={id ? 'btn btn-ghost' : 'btn btn-primary'}
      variant={id ? 'ghost' : 'primary'}
      dataAction={id ? 'edit' : 'add'}
      modalClassName="list-drawer list-drawer-wide"
      isOpen={open}
      onOpenChange={setOpen}
    >
      <DrawerBody id={id} close={() => setOpen(false)} />
    </ModalAction>
  );
}

function DrawerBody({ id, close }: { id: number | null; close: () => void }) {
  const { t } = useTranslation('tokens');
  const href = id ? `/token/${id}/edit` : '/token/new';
  const load = useLoadOnce<EditorLoad>(href);
  const save = useFetcher<DrawerReply>();
  const createdKeys = save.data?.ok ? save.data.created : null;
  // A create stays open on its new keys (closed with "done"); an edit closes once saved.
  useCloseOnSuccess(createdKeys?.length ? { state: save.state, data: null } : save, close);
  const loaded = load.data;
  if (createdKeys?.length)
    return (
      <CreatedKeys
        keys={createdKeys}
        close={close}
        heading={<Heading slot="title">{t('key.createdTitle')}</Heading>}
      />
    );
  return (
    <>
      <Heading slot="title">{t(id ? 'form.editTitle' : 'form.addTitle')}</Heading>
      {loaded ? (
        <save.Form method="post" action={href}>
          <input type="hidden" name="_fetcher" value="1" />
          <TokenFields
            values={save.data?.values ?? loaded.values ?? emptyTokenForm}
            models={loaded.models}
            groups={loaded.groups}
            display={loaded.display}
            create={!id}
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

function AddressList({ addresses }: { addresses: ApiAddress[] }) {
  const { t } = useTranslation('tokens');
  if (addresses.length === 0) return <p>{t('address.empty')}</p>;
  return (
    <ul data-testid="api-addresses" style={{ margin: 0, paddingLeft: '1rem' }}>
      {addresses.map((a) => (
        <li key={a.url}>
          {a.title ? <strong>{a.title}: </strong> : null}
          <code>{a.url}</code>
          {a.line ? <small> ({a.line})</small> : null}
        </li>
      ))}
    </ul>
  );
}

/** The API address popover (apiAddressList); without JavaScript a <details> disclosure. */
function ApiAddresses({ addresses }: { addresses: ApiAddress[] }) {
  const { t } = useTranslation('tokens');
  const hydrated = useHydrated();
  if (!hydrated) {
    return (
      <details className="api-addresses">
        <summary className="btn btn-ghost">{t('actions.apiAddress')}</summary>
        <AddressList addresses={addresses} />
      </details>
    );
  }
  return (
    <DialogTrigger>
      <Button variant="ghost">{t('actions.apiAddress')}</Button>
      <Popover placement="bottom start" className="dropdown-panel" style={{ padding: '0.75rem' }}>
        <Dialog aria-label={t('address.title')}>
          <AddressList addresses={addresses} />
        </Dialog>
      </Popover>
    </DialogTrigger>
  );
}

export default function TokensPage() {
  const { items, page, total, pageSize, keyword, token, display, addresses } = useLoaderData<typeof loader>();
  const { t } = useTranslation('tokens');
  const hydrated = useHydrated();
  const location = useLocation();
  const { notify } = useToast();
  const [selected, setSelected] = useState<number[]>([]);
  const [manualCopy, setManualCopy] = useState<string | null>(null);
  const copy = useCopy(setManualCopy);
  const back = location.pathname + location.search;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const quota = (q: number) => formatQuota(q, display);

  function copySelected() {
    const keys = items.filter((r) => selected.includes(r.id)).map((r) => `${r.name}    ${r.key}`);
    if (keys.length === 0) return notify({ type: 'error', message: t('key.selectFirst') });
    void copy(keys.join('\n'));
  }

  return (
    <ManualCopyContext.Provider value={setManualCopy}>
      <div className="page tokens-page">
        <h1>{t('title')}</h1>
        {hydrated ? <ManualCopyDialog text={manualCopy} close={() => setManualCopy(null)} /> : null}
        <ListToolbar>
          <SearchForm label={t('search.label')} submitLabel={t('search.submit')}>
            <SearchField
              label={t('search.keyword')}
              name="keyword"
              defaultValue={keyword}
              placeholder={t('search.keywordPlaceholder')}
            />
            <SearchField
              label={t('search.token')}
              name="token"
              defaultValue={token}
              placeholder={t('search.tokenPlaceholder')}
            />
            <PageSizeField label={t('pagination.pageSize')} value={pageSize} />
          </SearchForm>
          <TokenDrawer id={null} trigger={t('actions.add')} href="/token/new" />
          {hydrated ? (
            <Button variant="secondary" onPress={copySelected}>
              {t('actions.copySelected')}
            </Button>
          ) : null}
          <ApiAddresses addresses={addresses} />
        </ListToolbar>

        <DataTable
          className="tokens-table"
          columns={[
            hydrated ? t('columns.select') : null,
            t('columns.name'),
            t('columns.status'),
            t('columns.remain'),
            t('columns.used'),
            t('columns.group'),
            t('columns.created'),
            t('columns.expired'),
            t('columns.key'),
            t('columns.actions'),
          ]}
          isEmpty={items.length === 0}
          empty={t('empty')}
        >
          {items.map((row) => (
            <tr key={row.id} data-token-id={row.id} data-token-name={row.name}>
              {hydrated ? (
                <td>
                  <input
                    type="checkbox"
                    aria-label={t('columns.select')}
                    checked={selected.includes(row.id)}
                    onChange={(e) =>
                      setSelected((s) => (e.target.checked ? [...s, row.id] : s.filter((x) => x !== row.id)))
                    }
                  />
                </td>
              ) : null}
              <td>{row.name}</td>
              <td>
                <TokenStatusTag status={row.status} modelLimited={row.model_limits_enabled} />
              </td>
              <td data-testid="remain">{row.unlimited_quota ? t('unlimited') : quota(row.remain_quota)}</td>
              <td>{quota(row.used_quota)}</td>
              <td>{row.group || '—'}</td>
              <td>{row.created_text}</td>
              <td>{row.expired_text ?? t('never')}</td>
              <td>
                <KeyCell row={row} back={back} />
              </td>
              <td>
                <div className="row-actions">
                  {row.status === 1 || row.status === 2 || row.status === 3 || row.status === 4 ? (
                    <StatusButton row={row} back={back} />
                  ) : null}
                  <TokenDrawer
                    id={row.id}
                    trigger={t('actions.edit')}
                    href={withRedirectTo(`/token/${row.id}/edit`, back)}
                  />
                  <DeleteAction row={row} back={back} />
                </div>
              </td>
            </tr>
          ))}
        </DataTable>

        <Pagination page={page} pages={pages} total={total} />
      </div>
    </ManualCopyContext.Provider>
  );
}

export { TokensErrorBoundary as ErrorBoundary };
