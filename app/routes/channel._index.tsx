import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useFetcher, useLoaderData, useLocation, useRevalidator, useSubmit } from '@remix-run/react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import {
  ConfirmAction,
  ConfirmDialog,
  useDeleteTexts,
  withRedirectTo,
} from '#app/components/list/confirm-action.tsx';
import { DataTable } from '#app/components/list/data-table.tsx';
import { useCloseOnSuccess, useLoadOnce } from '#app/components/list/fetcher-hooks.ts';
import { ModalAction } from '#app/components/list/modal-action.tsx';
import { PostButton } from '#app/components/list/post-button.tsx';
import { PageSizeField, SearchField, SearchForm, SelectField } from '#app/components/list/search-form.tsx';
import { Pagination } from '#app/components/pagination.tsx';
import { useApiClient, useToast } from '#app/components/toaster.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { formatQuota, type QuotaDisplay } from '#app/domain/account/quota-format.ts';
import {
  ChannelFields,
  type ChannelFormValues,
  ChannelStatusTag,
  ChannelsErrorBoundary,
  FormError,
  type ModelFetcher,
  ResponseTimeTag,
  TagFields,
  type TestOutcome,
  TestResults,
} from '#app/domain/channels/channel-ui.tsx';
import {
  type ChannelWire,
  copyChannel,
  deleteChannels,
  deleteDisabledChannels,
  fixAbilities,
  groupOptions,
  idsSchema,
  listChannels,
  parseInput,
  setChannelStatus,
  setChannelsTag,
  setTagStatus,
} from '#app/domain/channels/channels.server.ts';
import { channelTypeLabel, formatTime } from '#app/domain/channels/constants.ts';
import { groupChannelEntries } from '#app/domain/channels/entries.ts';
import { channelsPageCtx, parseId } from '#app/domain/channels/http.server.ts';
import { readChannelPrefs, serializeChannelPrefs } from '#app/domain/channels/prefs.server.ts';
import { updateAllChannelBalances, updateChannelBalance } from '#app/domain/channels/relay-ops.server.ts';
import { isDomainError } from '#app/domain/errors.ts';
import type { loader as editLoader, SaveReply } from '#app/routes/channel.$id.edit.tsx';
import type { loader as newLoader } from '#app/routes/channel.new.tsx';
import type { TagReply, loader as tagLoader } from '#app/routes/channel.tag.tsx';
import type { loader as testAllLoader } from '#app/routes/channel.test-all.tsx';
import { useHydrated } from '#app/utils/hydrated.ts';
import { getPreferences, serializePageSize } from '#app/utils/preferences.server.ts';
import { parsePageSize } from '#app/utils/preferences.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';

export const handle = { i18n: ['common', 'channels'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Channels' }];

/**
 * GET /channel?keyword&model&group&p&page_size (+ prefs=1&id_sort&tag_mode to change the remembered toggles):
 * the admin channel table (seed 001 §2.4).
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  const url = new URL(request.url);
  const q = (k: string) => (url.searchParams.get(k) ?? '').trim();
  const page = Math.max(1, Number.parseInt(q('p') || '1', 10) || 1);
  const chosen = parsePageSize(url.searchParams.get('page_size'));
  const prefs = await getPreferences(request);
  const pageSize = chosen ?? prefs.pageSize;
  const headers = new Headers({ 'Cache-Control': 'no-store' });
  let view = await readChannelPrefs(request);
  if (url.searchParams.has('prefs')) {
    const on = (k: string) => ['1', 'on', 'true'].includes(q(k));
    view = { idSort: on('id_sort'), tagMode: on('tag_mode') };
    headers.append('Set-Cookie', await serializeChannelPrefs(view));
  }
  if (chosen && chosen !== prefs.pageSize) headers.append('Set-Cookie', await serializePageSize(chosen));
  const filter = { keyword: q('keyword'), model: q('model'), group: q('group') };
  const result = await listChannels(ctx, { ...filter, page, pageSize, ...view });
  return data(
    {
      title: ctx.t('channels:title'),
      result,
      filter,
      pageSize,
      view,
      groups: await groupOptions(ctx),
      userId: ctx.actor.id,
      display: {
        displayInCurrency: Boolean(ctx.options.get('DisplayInCurrencyEnabled')),
        quotaPerUnit: Number(ctx.options.get('QuotaPerUnit')) || 500000,
      } satisfies QuotaDisplay,
    },
    { headers },
  );
}

/** POST /channel?index intent=...: one row, tag or batch action, then back with a toast (PRG). */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  const formData = await request.formData();
  const form = Object.fromEntries(formData);
  const back = safeRedirect(form.redirectTo, '/channel');
  const t = ctx.t;
  const done = (message: string) => redirectWithToast(back, { type: 'success', message });
  try {
    switch (form.intent) {
      case 'status': {
        const row = await setChannelStatus(ctx, parseId(String(form.id)), Number(form.status));
        return done(t(row.status === 1 ? 'channels:toast.enabled' : 'channels:toast.disabled'));
      }
      case 'copy': {
        await copyChannel(ctx, parseId(String(form.id)));
        return done(t('channels:toast.created', { count: 1 }));
      }
      case 'tagStatus': {
        const status = form.status === '1' ? 1 : 2;
        const n = await setTagStatus(ctx, String(form.tag ?? ''), status);
        return done(
          t(status === 1 ? 'channels:toast.tagEnabled' : 'channels:toast.tagDisabled', { count: n }),
        );
      }
      case 'batchDelete': {
        const { ids } = parseInput(ctx, idsSchema, { ids: formData.getAll('ids').map(String) });
        return done(t('channels:toast.batchDeleted', { count: await deleteChannels(ctx, ids) }));
      }
      case 'batchTag': {
        const { ids } = parseInput(ctx, idsSchema, { ids: formData.getAll('ids').map(String) });
        return done(
          t('channels:toast.tagged', { count: await setChannelsTag(ctx, ids, String(form.tag ?? '')) }),
        );
      }
      case 'deleteDisabled':
        return done(t('channels:toast.disabledDeleted', { count: await deleteDisabledChannels(ctx) }));
      case 'fix':
        return done(t('channels:toast.fixed', await fixAbilities(ctx)));
      case 'balance': {
        const id = parseId(String(form.id));
        const balance = await updateChannelBalance(ctx, id);
        return done(
          t('channels:balance.updated', { name: String(form.name ?? id), amount: `$${balance.toFixed(2)}` }),
        );
      }
      case 'balanceAll': {
        const s = await updateAllChannelBalances(ctx);
        return done(t('channels:balance.allDone', { succeeded: s.succeeded, total: s.total }));
      }
    }
    return redirectWithToast(back, { type: 'error', message: t('channels:errors.invalidInput') });
  } catch (error) {
    if (isDomainError(error)) return redirectWithToast(back, { type: 'error', message: error.message });
    throw error;
  }
}

type Data = ReturnType<typeof useLoaderData<typeof loader>>;

/** The api-client with the New-Api-User header of the signed-in admin (the JSON contract needs it). */
function useChannelApi(userId: number) {
  const api = useApiClient();
  return useCallback(
    <T,>(url: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set('New-Api-User', String(userId));
      return api.request<T>(url, { ...init, headers });
    },
    [api, userId],
  );
}

function useModelFetcher(userId: number, id?: number): ModelFetcher {
  const call = useChannelApi(userId);
  const { t } = useTranslation('channels');
  const { notify } = useToast();
  return useCallback(
    async (form: HTMLFormElement) => {
      const fd = new FormData(form);
      const key = String(fd.get('key') ?? '').trim();
      let res: Awaited<ReturnType<typeof call<string[]>>>;
      if (id && !key) res = await call<string[]>(`/api/channel/fetch_models/${id}`);
      else {
        if (!key) {
          notify({ type: 'error', message: t('errors.keyRequiredForFetch') });
          return null;
        }
        res = await call<string[]>('/api/channel/fetch_models', {
          method: 'POST',
          body: JSON.stringify({
            type: fd.get('type'),
            key: key.split('\n')[0],
            base_url: fd.get('base_url'),
            other: fd.get('other'),
            setting: fd.get('setting'),
            openai_organization: fd.get('openai_organization'),
          }),
          headers: { 'Content-Type': 'application/json' },
        });
      }
      return res.ok ? res.data : null;
    },
    [call, id, notify, t],
  );
}

function ChannelFormBody({
  mode,
  id,
  userId,
  close,
}: {
  mode: 'create' | 'edit';
  id?: number;
  userId: number;
  close: () => void;
}) {
  const { t } = useTranslation('channels');
  const url = mode === 'create' ? '/channel/new' : `/channel/${id}/edit`;
  const loaded = useLoadOnce<typeof newLoader | typeof editLoader>(url).data;
  const save = useFetcher<SaveReply>();
  const fetchModels = useModelFetcher(userId, id);
  useCloseOnSuccess(save, close);
  const title = mode === 'create' ? t('form.addTitle') : t('form.editTitle');
  return (
    <>
      <Heading slot="title">{title}</Heading>
      {!loaded ? (
        <p aria-busy="true">…</p>
      ) : (
        <save.Form method="post" action={url}>
          <input type="hidden" name="_fetcher" value="1" />
          <ChannelFields
            mode={mode}
            values={(save.data?.values as ChannelFormValues | undefined) ?? loaded.values}
            groupOptions={loaded.groups}
            modelOptions={loaded.models}
            types={loaded.types.options}
            typesSource={loaded.types.source}
            fetchModels={fetchModels}
            fieldErrors={save.data?.fieldErrors}
          />
          <FormError message={save.data?.error} />
          <div className="channel-dialog-actions">
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

function AddAction({ userId }: { userId: number }) {
  const { t } = useTranslation('channels');
  const [open, setOpen] = useState(false);
  const [round, setRound] = useState(0);
  return (
    <ModalAction
      label={t('actions.add')}
      title={t('form.addTitle')}
      href="/channel/new"
      hrefClassName="btn btn-primary"
      variant="primary"
      modalClassName="list-drawer list-drawer-wide"
      isOpen={open}
      onOpenChange={(o) => {
        setOpen(o);
        if (!o) setRound((r) => r + 1);
      }}
    >
      <ChannelFormBody key={round} mode="create" userId={userId} close={() => setOpen(false)} />
    </ModalAction>
  );
}

function EditAction({ row, back, userId }: { row: ChannelWire; back: string; userId: number }) {
  const { t } = useTranslation('channels');
  const [open, setOpen] = useState(false);
  const [round, setRound] = useState(0);
  return (
    <ModalAction
      label={t('actions.edit')}
      title={t('form.editTitle')}
      href={withRedirectTo(`/channel/${row.id}/edit`, back)}
      dataAction="edit"
      modalClassName="list-drawer list-drawer-wide"
      isOpen={open}
      onOpenChange={(o) => {
        setOpen(o);
        if (!o) setRound((r) => r + 1);
      }}
    >
      <ChannelFormBody key={round} mode="edit" id={row.id} userId={userId} close={() => setOpen(false)} />
    </ModalAction>
  );
}

/** Row "test": with JavaScript a model-picker dialog calling GET /api/channel/test/{id}; without, a page. */
function TestAction({ row, back, userId }: { row: ChannelWire; back: string; userId: number }) {
  const { t } = useTranslation('channels');
  const hydrated = useHydrated();
  const call = useChannelApi(userId);
  const { notify } = useToast();
  const revalidator = useRevalidator();
  const [busy, setBusy] = useState(false);
  if (!hydrated)
    return (
      <Link
        to={`/channel/${row.id}/test?${new URLSearchParams({ redirectTo: back })}`}
        className="btn btn-ghost"
      >
        {t('actions.test')}
      </Link>
    );
  const models = row.models.split(',').filter(Boolean);
  const run = async (model: string) => {
    setBusy(true);
    const res = await call<number>(`/api/channel/test/${row.id}?${new URLSearchParams({ model })}`);
    setBusy(false);
    if (res.ok)
      notify({ type: 'success', message: t('test.result', { name: row.name, time: res.data.toFixed(2) }) });
    revalidator.revalidate();
  };
  return (
    <DialogTrigger>
      <Button variant="ghost" data-action="test" isDisabled={busy}>
        {t('actions.test')}
      </Button>
      <ModalOverlay isDismissable className="list-overlay">
        <Modal className="list-dialog">
          <Dialog>
            {({ close }) => (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  const model = String(new FormData(e.currentTarget).get('model') ?? '');
                  close();
                  void run(model);
                }}
              >
                <Heading slot="title">{t('test.pickTitle', { name: row.name })}</Heading>
                <div className="channel-field">
                  <label htmlFor={`test-model-${row.id}`}>{t('test.model')}</label>
                  <select id={`test-model-${row.id}`} name="model" className="channel-input" defaultValue="">
                    <option value="">
                      {t('test.defaultModel', { model: row.test_model || models[0] || '' })}
                    </option>
                    {models.map((m) => (
                      <option key={m} value={m}>
                        {m}
                      </option>
                    ))}
                  </select>
                </div>
                <div className="channel-dialog-actions">
                  <Button onPress={close}>{t('actions.cancel')}</Button>
                  <Button type="submit" variant="primary">
                    {t('actions.test')}
                  </Button>
                </div>
              </form>
            )}
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

function BalanceAction({ row, back, userId }: { row: ChannelWire; back: string; userId: number }) {
  const { t } = useTranslation('channels');
  const hydrated = useHydrated();
  const call = useChannelApi(userId);
  const { notify } = useToast();
  const revalidator = useRevalidator();
  const [busy, setBusy] = useState(false);
  if (!hydrated)
    return (
      <PostButton
        fields={{ intent: 'balance', id: row.id, name: row.name, redirectTo: back }}
        action="/channel?index"
        label={t('actions.balance')}
      />
    );
  return (
    <Button
      variant="ghost"
      data-action="balance"
      isDisabled={busy}
      onPress={async () => {
        setBusy(true);
        const res = await call<number>(`/api/channel/update_balance/${row.id}/`);
        setBusy(false);
        if (res.ok)
          notify({
            type: 'success',
            message: t('balance.updated', { name: row.name, amount: `$${res.data.toFixed(2)}` }),
          });
        revalidator.revalidate();
      }}
    >
      {t('actions.balance')}
    </Button>
  );
}

function DeleteAction({ row, back }: { row: ChannelWire; back: string }) {
  const texts = useDeleteTexts('channels', { name: row.name, id: row.id });
  return (
    <ConfirmAction
      confirmHref={withRedirectTo(`/channel/${row.id}/delete`, back)}
      texts={texts}
      action="/channel?index"
      fields={{ intent: 'batchDelete', ids: String(row.id), redirectTo: back }}
    />
  );
}

/** Toolbar actions that confirm first: a dialog with JavaScript, the /channel/confirm page without. */
function ConfirmedTool({
  op,
  back,
  label,
  title,
  body,
}: {
  op: string;
  back: string;
  label: string;
  title: string;
  body: string;
}) {
  const { t } = useTranslation('channels');
  return (
    <ConfirmAction
      confirmHref={withRedirectTo('/channel/confirm', back, { op })}
      linkClassName="btn btn-secondary"
      texts={{
        label,
        title,
        body,
        confirmLabel: t('actions.confirm'),
        cancelLabel: t('actions.cancel'),
      }}
      action="/channel?index"
      fields={{ intent: op, redirectTo: back }}
      variant="secondary"
    />
  );
}

/** Test all (JavaScript): tests each channel in turn through GET /api/channel/test/{id}, with progress. */
function TestAllAction({ userId }: { userId: number }) {
  const { t } = useTranslation('channels');
  const hydrated = useHydrated();
  const [open, setOpen] = useState(false);
  const [round, setRound] = useState(0);
  if (!hydrated)
    return (
      <Link to="/channel/test-all" className="btn btn-secondary">
        {t('actions.testAll')}
      </Link>
    );
  return (
    <DialogTrigger
      isOpen={open}
      onOpenChange={(o) => {
        setOpen(o);
        if (!o) setRound((r) => r + 1);
      }}
    >
      <Button variant="secondary">{t('actions.testAll')}</Button>
      <ModalOverlay isDismissable className="list-overlay">
        <Modal className="list-dialog list-dialog-wide">
          <Dialog aria-label={t('test.allTitle')}>
            <TestAllBody key={round} userId={userId} close={() => setOpen(false)} />
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

function TestAllBody({ userId, close }: { userId: number; close: () => void }) {
  const { t } = useTranslation('channels');
  const loaded = useLoadOnce<typeof testAllLoader>('/channel/test-all').data;
  const revalidator = useRevalidator();
  const [results, setResults] = useState<TestOutcome[]>([]);
  const [running, setRunning] = useState(false);
  const stopped = useRef(false);
  useEffect(
    () => () => {
      stopped.current = true;
    },
    [],
  );
  const channels = loaded?.channels ?? [];
  const start = async () => {
    setRunning(true);
    setResults([]);
    for (const c of channels) {
      if (stopped.current) break;
      // a failing channel is a result, not a toast: read the envelope directly
      const res = await fetch(`/api/channel/test/${c.id}`, {
        headers: { 'New-Api-User': String(userId), Accept: 'application/json' },
        credentials: 'same-origin',
      });
      const body = (await res.json().catch(() => null)) as {
        success?: boolean;
        message?: string;
        data?: number;
      } | null;
      if (res.status === 401) return window.location.assign('/login?expired=true');
      setResults((r) => [
        ...r,
        {
          id: c.id,
          name: c.name,
          ok: body?.success === true,
          time: Number(body?.data ?? 0),
          message: body?.message ?? t('errors.requestFailed'),
        },
      ]);
    }
    setRunning(false);
    revalidator.revalidate();
  };
  const ok = results.filter((r) => r.ok).length;
  return (
    <>
      <Heading slot="title">{t('test.allTitle')}</Heading>
      {!loaded ? (
        <p aria-busy="true">…</p>
      ) : channels.length === 0 ? (
        <p>{t('test.none')}</p>
      ) : (
        <>
          <p>{t('test.allIntro')}</p>
          <progress max={channels.length} value={results.length} aria-label={t('test.allTitle')} />
          <p role="status" aria-live="polite" data-testid="test-all-progress">
            {running
              ? `${t('test.running')} ${t('test.progress', { done: results.length, total: channels.length })}`
              : results.length
                ? t('test.done', { ok, failed: results.length - ok })
                : ''}
          </p>
          <TestResults results={results} />
        </>
      )}
      <div className="channel-dialog-actions">
        <Button onPress={close}>{t('actions.close')}</Button>
        <Button variant="primary" isDisabled={running || channels.length === 0} onPress={() => void start()}>
          {t('actions.start')}
        </Button>
      </div>
    </>
  );
}

function BalanceAllAction({ back, userId }: { back: string; userId: number }) {
  const { t } = useTranslation('channels');
  const hydrated = useHydrated();
  const call = useChannelApi(userId);
  const { notify } = useToast();
  const revalidator = useRevalidator();
  const [busy, setBusy] = useState(false);
  if (!hydrated)
    return (
      <PostButton
        fields={{ intent: 'balanceAll', redirectTo: back }}
        action="/channel?index"
        label={t('actions.updateAllBalances')}
      />
    );
  return (
    <Button
      variant="secondary"
      isDisabled={busy}
      onPress={async () => {
        setBusy(true);
        const res = await call<{ total: number; succeeded: number }>('/api/channel/update_balance');
        setBusy(false);
        if (res.ok) notify({ type: 'success', message: t('balance.allDone', res.data) });
        revalidator.revalidate();
      }}
    >
      {busy ? t('test.running') : t('actions.updateAllBalances')}
    </Button>
  );
}

function TagEditAction({ tag, back }: { tag: string; back: string }) {
  const { t } = useTranslation('channels');
  const hydrated = useHydrated();
  const [open, setOpen] = useState(false);
  const [round, setRound] = useState(0);
  const href = `/channel/tag?${new URLSearchParams({ tag, redirectTo: back })}`;
  if (!hydrated)
    return (
      <Link to={href} className="btn btn-ghost">
        {t('actions.editTag')}
      </Link>
    );
  return (
    <DialogTrigger
      isOpen={open}
      onOpenChange={(o) => {
        setOpen(o);
        if (!o) setRound((r) => r + 1);
      }}
    >
      <Button variant="ghost" data-action="edit-tag">
        {t('actions.editTag')}
      </Button>
      <ModalOverlay isDismissable className="list-overlay">
        <Modal className="list-dialog list-dialog-wide">
          <Dialog aria-label={t('tagForm.title', { tag })}>
            <TagEditBody key={round} tag={tag} close={() => setOpen(false)} />
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

function TagEditBody({ tag, close }: { tag: string; close: () => void }) {
  const { t } = useTranslation('channels');
  useLoadOnce<typeof tagLoader>(`/channel/tag?${new URLSearchParams({ tag })}`);
  const save = useFetcher<TagReply>();
  useCloseOnSuccess(save, close);
  return (
    <>
      <Heading slot="title">{t('tagForm.title', { tag })}</Heading>
      <save.Form method="post" action="/channel/tag">
        <input type="hidden" name="_fetcher" value="1" />
        <TagFields tag={tag} values={save.data?.values} />
        <FormError message={save.data?.error} />
        <div className="channel-dialog-actions">
          <Button onPress={close}>{t('actions.cancel')}</Button>
          <Button type="submit" variant="primary" isDisabled={save.state !== 'idle'}>
            {t('actions.save')}
          </Button>
        </div>
      </save.Form>
    </>
  );
}

function ChannelRow({
  row,
  back,
  userId,
  display,
  selected,
  toggle,
  child,
}: {
  row: ChannelWire;
  back: string;
  userId: number;
  display: QuotaDisplay;
  selected: boolean;
  toggle: (id: number, on: boolean) => void;
  child?: boolean;
}) {
  const { t } = useTranslation('channels');
  const timeZone = useTimeZone();
  return (
    <tr data-channel-id={row.id} data-name={row.name} className={child ? 'channel-child-row' : undefined}>
      <td>
        <input
          type="checkbox"
          name="ids"
          value={row.id}
          form="channel-batch"
          checked={selected}
          onChange={(e) => toggle(row.id, e.target.checked)}
          aria-label={t('selectRow', { name: row.name })}
        />
      </td>
      <td>{row.id}</td>
      <td>
        {row.name}
        {row.tag && !child ? <span className="badge channel-tag">{row.tag}</span> : null}
      </td>
      <td>
        {row.group.split(',').map((g) => (
          <span key={g} className="badge channel-group">
            {g}
          </span>
        ))}
      </td>
      <td>{channelTypeLabel(row.type)}</td>
      <td>
        <ChannelStatusTag status={row.status} otherInfo={row.other_info} />
      </td>
      <td>
        <ResponseTimeTag ms={row.response_time} testTime={row.test_time} />
      </td>
      <td title={row.balance_updated_time ? formatTime(row.balance_updated_time, timeZone) : undefined}>
        {formatQuota(row.used_quota, display)} / ${row.balance.toFixed(2)}
      </td>
      <td>{row.priority}</td>
      <td>{row.weight}</td>
      <td>
        <div className="row-actions channel-row-actions">
          <TestAction row={row} back={back} userId={userId} />
          <BalanceAction row={row} back={back} userId={userId} />
          <PostButton
            fields={{ intent: 'status', id: row.id, status: row.status === 1 ? 2 : 1, redirectTo: back }}
            action="/channel?index"
            label={t(row.status === 1 ? 'actions.disable' : 'actions.enable')}
            dataAction={row.status === 1 ? 'disable' : 'enable'}
          />
          <EditAction row={row} back={back} userId={userId} />
          <PostButton
            fields={{ intent: 'copy', id: row.id, redirectTo: back }}
            action="/channel?index"
            label={t('actions.copy')}
            dataAction="copy"
          />
          <DeleteAction row={row} back={back} />
        </div>
      </td>
    </tr>
  );
}

function BatchBar({ selected, back }: { selected: number[]; back: string }) {
  const { t } = useTranslation('channels');
  const hydrated = useHydrated();
  const [tag, setTag] = useState('');
  const ids = selected.map(String);
  return (
    <Form method="get" action="/channel/confirm" id="channel-batch" className="channel-batch">
      <input type="hidden" name="redirectTo" value={back} />
      <span role="status" aria-live="polite">
        {hydrated ? t('selected', { count: selected.length }) : null}
      </span>
      <label htmlFor="channel-batch-tag">{t('tagForm.batchTag')}</label>
      <input
        id="channel-batch-tag"
        name="tag"
        value={tag}
        onChange={(e) => setTag(e.target.value)}
        className="channel-input"
      />
      {hydrated ? (
        <>
          <ConfirmDialog
            texts={{
              label: t('actions.batchTag'),
              title: t('tagForm.batchTitle'),
              body: `${t('selected', { count: selected.length })} → ${tag}`,
              confirmLabel: t('actions.confirm'),
              cancelLabel: t('actions.cancel'),
            }}
            action="/channel?index"
            fields={{ intent: 'batchTag', tag, ids, redirectTo: back }}
            variant="secondary"
            isDisabled={selected.length === 0 || !tag.trim()}
          />
          <ConfirmDialog
            texts={{
              label: t('actions.batchDelete'),
              title: t('confirm.batchDeleteTitle'),
              body: t('confirm.batchDeleteBody', { count: selected.length }),
              confirmLabel: t('actions.confirmDelete'),
              cancelLabel: t('actions.cancel'),
            }}
            action="/channel?index"
            fields={{ intent: 'batchDelete', ids, redirectTo: back }}
            variant="secondary"
            isDisabled={selected.length === 0}
          />
        </>
      ) : (
        <>
          <Button type="submit" name="op" value="batchTag">
            {t('actions.batchTag')}
          </Button>
          <Button type="submit" name="op" value="batchDelete">
            {t('actions.batchDelete')}
          </Button>
        </>
      )}
    </Form>
  );
}

export default function ChannelsPage() {
  const { result, filter, pageSize, view, groups, userId, display } = useLoaderData<typeof loader>() as Data;
  const { t } = useTranslation('channels');
  const location = useLocation();
  const submit = useSubmit();
  const hydrated = useHydrated();
  const back = location.pathname + location.search;
  const pages = Math.max(1, Math.ceil(result.total / result.page_size));
  const entries = useMemo(() => groupChannelEntries(result.items, result.tag_mode), [result]);
  const [selected, setSelected] = useState<number[]>([]);
  const toggle = useCallback(
    (id: number, on: boolean) =>
      setSelected((s) => (on ? [...new Set([...s, id])] : s.filter((x) => x !== id))),
    [],
  );
  // rows that left the page (deleted, another page) are no longer selected
  const visible = result.items.map((c) => c.id);
  const visibleKey = visible.join(',');
  useEffect(() => {
    const ids = new Set(visibleKey.split(',').map(Number));
    setSelected((s) => s.filter((id) => ids.has(id)));
  }, [visibleKey]);
  const rowProps = { back, userId, display, toggle };

  return (
    <div className="page channels-page">
      <h1>{t('title')}</h1>
      <div className="channel-toolbar">
        <SearchForm label={t('search.label')} submitLabel={t('search.submit')}>
          <SearchField
            label={t('search.keyword')}
            name="keyword"
            defaultValue={filter.keyword}
            placeholder={t('search.keywordPlaceholder')}
          />
          <SearchField
            label={t('search.model')}
            name="model"
            defaultValue={filter.model}
            placeholder={t('search.modelPlaceholder')}
          />
          <SelectField
            label={t('search.group')}
            name="group"
            defaultValue={filter.group}
            options={[['', t('search.anyGroup')], ...groups.map((g) => [g, g] as const)]}
          />
          <PageSizeField label={t('preferences.pageSize', { ns: 'common' })} value={pageSize} />
        </SearchForm>
        <Form
          method="get"
          className="channel-prefs"
          aria-label={t('prefs.label')}
          onChange={(e) => {
            if (hydrated) submit(e.currentTarget);
          }}
        >
          <input type="hidden" name="prefs" value="1" />
          {filter.keyword ? <input type="hidden" name="keyword" value={filter.keyword} /> : null}
          {filter.model ? <input type="hidden" name="model" value={filter.model} /> : null}
          {filter.group ? <input type="hidden" name="group" value={filter.group} /> : null}
          <label className="channel-check">
            <input type="checkbox" name="id_sort" value="1" defaultChecked={view.idSort} />
            {t('prefs.idSort')}
          </label>
          <label className="channel-check">
            <input type="checkbox" name="tag_mode" value="1" defaultChecked={view.tagMode} />
            {t('prefs.tagMode')}
          </label>
          {hydrated ? null : (
            <Button type="submit" variant="ghost">
              {t('prefs.apply')}
            </Button>
          )}
        </Form>
      </div>
      <div className="channel-tools">
        <AddAction userId={userId} />
        <TestAllAction userId={userId} />
        <BalanceAllAction back={back} userId={userId} />
        <ConfirmedTool
          op="fix"
          back={back}
          label={t('actions.fix')}
          title={t('confirm.fixTitle')}
          body={t('confirm.fixBody')}
        />
        <ConfirmedTool
          op="deleteDisabled"
          back={back}
          label={t('actions.deleteDisabled')}
          title={t('confirm.deleteDisabledTitle')}
          body={t('confirm.deleteDisabledBody')}
        />
      </div>
      <BatchBar selected={selected} back={back} />

      <DataTable
        className="channels-table"
        columns={[
          <span key="select" className="sr-only">
            {t('columns.select')}
          </span>,
          t('columns.id'),
          t('columns.name'),
          t('columns.group'),
          t('columns.type'),
          t('columns.status'),
          t('columns.responseTime'),
          t('columns.balance'),
          t('columns.priority'),
          t('columns.weight'),
          t('columns.actions'),
        ]}
        isEmpty={result.items.length === 0}
        empty={t('empty')}
      >
        {entries.map((item) =>
          item.kind === 'channel' ? (
            <ChannelRow
              key={item.channel.id}
              row={item.channel}
              selected={selected.includes(item.channel.id)}
              {...rowProps}
            />
          ) : (
            <TagRows
              key={`tag-${item.tag}`}
              tag={item.tag}
              rows={item.children}
              selected={selected}
              {...rowProps}
            />
          ),
        )}
      </DataTable>

      <Pagination page={result.page} pages={pages} total={result.total} />
    </div>
  );
}

function TagRows({
  tag,
  rows,
  selected,
  back,
  ...rest
}: {
  tag: string;
  rows: ChannelWire[];
  selected: number[];
  back: string;
  userId: number;
  display: QuotaDisplay;
  toggle: (id: number, on: boolean) => void;
}) {
  const { t } = useTranslation('channels');
  return (
    <>
      <tr className="channel-tag-row" data-tag={tag}>
        <td />
        <td colSpan={9}>
          <strong>{t('tagRow', { tag, count: rows.length })}</strong>
        </td>
        <td>
          <div className="row-actions channel-row-actions">
            <PostButton
              fields={{ intent: 'tagStatus', tag, status: 1, redirectTo: back }}
              action="/channel?index"
              label={t('actions.enableAll')}
            />
            <PostButton
              fields={{ intent: 'tagStatus', tag, status: 2, redirectTo: back }}
              action="/channel?index"
              label={t('actions.disableAll')}
            />
            <TagEditAction tag={tag} back={back} />
          </div>
        </td>
      </tr>
      {rows.map((r) => (
        <ChannelRow key={r.id} row={r} back={back} selected={selected.includes(r.id)} child {...rest} />
      ))}
    </>
  );
}

export { ChannelsErrorBoundary as ErrorBoundary };
