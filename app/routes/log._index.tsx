import { data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useFetcher, useLoaderData, useLocation, useNavigation } from '@remix-run/react';
import { useState } from 'react';
import { DialogTrigger } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { ConfirmModal } from '#app/components/list/confirm-action.tsx';
import { DataTable } from '#app/components/list/data-table.tsx';
import { Pagination } from '#app/components/pagination.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { formatQuota } from '#app/domain/account/quota-format.ts';
import {
  formatLogTime,
  fromDateTimeLocal,
  LOG_COUNT_CAP,
  LOG_TYPES,
  type LogWire,
  logTypeKey,
  parseOther,
  startOfDay,
  toDateTimeLocal,
} from '#app/domain/logs/constants.ts';
import { logsPageCtx } from '#app/domain/logs/http.server.ts';
import {
  CopyText,
  LogContent,
  LogDetailsPanel,
  LogsErrorBoundary,
  LogTypeTag,
  ModelCell,
  UserCell,
  UseTimeCell,
} from '#app/domain/logs/log-ui.tsx';
import {
  listAllLogs,
  listSelfLogs,
  logQuerySchema,
  parseInput,
  quotaDisplay,
  statAllLogs,
  statSelfLogs,
} from '#app/domain/logs/logs.server.ts';
import type { loader as clearLoader } from '#app/routes/log.clear.tsx';
import { useHydrated } from '#app/utils/hydrated.ts';
import { getPreferences, serializePageSize } from '#app/utils/preferences.server.ts';
import { pageSizes, parsePageSize } from '#app/utils/preferences.ts';
import { requestTimeZone } from '#app/utils/time.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';

export const handle = { i18n: ['common', 'logs'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Logs' }];

/** Seed 001 §9 "Logs default": from the start of today (in the user's zone) to one hour ahead. */
function defaultWindow(timeZone: string, now = Date.now()): { start: number; end: number } {
  const seconds = Math.floor(now / 1000);
  return { start: startOfDay(seconds, timeZone), end: seconds + 3600 };
}

/** A time field: the form's datetime-local value, else the API's unix seconds, else the default. */
function timeParam(url: URL, field: string, apiField: string, fallback: number, timeZone: string): number {
  if (url.searchParams.has(field)) return fromDateTimeLocal(url.searchParams.get(field), timeZone);
  if (url.searchParams.has(apiField)) return Number(url.searchParams.get(apiField)) || 0;
  return fallback;
}

/**
 * GET /log?start&end&token_name&model_name&group&type&channel&username&p&page_size: the usage-log table
 * (seed 001 §2.10). Admins see every user's rows with channel / user filters and columns; anyone else their own.
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await logsPageCtx(request, context);
  const admin = ctx.actor.role >= 10;
  const url = new URL(request.url);
  const chosen = parsePageSize(url.searchParams.get('page_size'));
  const prefs = await getPreferences(request);
  const pageSize = chosen ?? prefs.pageSize;
  const timeZone = requestTimeZone(request);
  const win = defaultWindow(timeZone);
  const raw = Object.fromEntries(url.searchParams);
  const q = parseInput(ctx, logQuerySchema, {
    ...raw,
    page_size: pageSize,
    start_timestamp: timeParam(url, 'start', 'start_timestamp', win.start, timeZone),
    end_timestamp: timeParam(url, 'end', 'end_timestamp', win.end, timeZone),
    ...(admin ? {} : { username: '', channel: 0 }),
  });
  const [result, stat] = admin
    ? await Promise.all([listAllLogs(ctx, q), statAllLogs(ctx, q)])
    : await Promise.all([listSelfLogs(ctx, q), statSelfLogs(ctx, q)]);
  const headers = new Headers({ 'Cache-Control': 'no-store' });
  if (chosen && chosen !== prefs.pageSize) headers.append('Set-Cookie', await serializePageSize(chosen));
  return data(
    {
      title: ctx.t('logs:title'),
      admin,
      result,
      stat,
      filters: {
        start: toDateTimeLocal(q.start_timestamp, timeZone),
        end: toDateTimeLocal(q.end_timestamp, timeZone),
        token_name: q.token_name,
        model_name: q.model_name,
        group: q.group,
        type: q.type,
        channel: q.channel ? String(q.channel) : '',
        username: q.username,
      },
      pageSize,
      display: quotaDisplay(ctx.options),
    },
    { headers },
  );
}

type Filters = ReturnType<typeof useLoaderData<typeof loader>>['filters'];

function FilterForm({ filters, admin, pageSize }: { filters: Filters; admin: boolean; pageSize: number }) {
  const { t } = useTranslation('logs');
  const zone = useTimeZone();
  const navigation = useNavigation();
  const text = (name: keyof Filters, label: string) => (
    <label className="logs-field">
      {label}
      <input name={name} defaultValue={String(filters[name] ?? '')} autoComplete="off" />
    </label>
  );
  return (
    <Form method="get" role="search" aria-label={t('filters.label')} className="logs-filters">
      <label className="logs-field">
        {t('filters.start', { zone })}
        <input type="datetime-local" name="start" defaultValue={filters.start} />
      </label>
      <label className="logs-field">
        {t('filters.end', { zone })}
        <input type="datetime-local" name="end" defaultValue={filters.end} />
      </label>
      {text('token_name', t('filters.tokenName'))}
      {text('model_name', t('filters.modelName'))}
      {text('group', t('filters.group'))}
      {admin ? (
        <>
          <label className="logs-field">
            {t('filters.channel')}
            <input name="channel" inputMode="numeric" pattern="\d*" defaultValue={filters.channel} />
          </label>
          {text('username', t('filters.username'))}
        </>
      ) : null}
      <label className="logs-field">
        {t('filters.type')}
        <select name="type" defaultValue={String(filters.type)}>
          <option value="0">{t('type.all')}</option>
          {LOG_TYPES.map((n) => (
            <option key={n} value={n}>
              {t(`type.${logTypeKey(n)}`)}
            </option>
          ))}
        </select>
      </label>
      <label className="logs-field">
        {t('filters.pageSize')}
        <select name="page_size" defaultValue={String(pageSize)}>
          {pageSizes.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
      <div className="logs-filter-actions">
        <Button type="submit" variant="primary" isDisabled={navigation.state === 'loading'}>
          {t('filters.submit')}
        </Button>
        <a href="/log" className="btn btn-ghost">
          {t('filters.reset')}
        </a>
      </div>
    </Form>
  );
}

/**
 * Admin cleanup: a GET form to the confirm page /log/clear?before= without JavaScript; with it, a react-aria
 * alert dialog that loads the count from that page and posts the deletion there.
 */
function ClearLogs({ back }: { back: string }) {
  const { t } = useTranslation('logs');
  const zone = useTimeZone();
  const hydrated = useHydrated();
  const [before, setBefore] = useState('');
  const [open, setOpen] = useState(false);
  const preview = useFetcher<typeof clearLoader>();
  return (
    <section className="logs-clear" aria-labelledby="logs-clear-title">
      <h2 id="logs-clear-title">{t('clear.title')}</h2>
      <Form
        method="get"
        action="/log/clear"
        className="logs-filters"
        onSubmit={(e) => {
          if (!hydrated) return;
          e.preventDefault();
          if (!before) return;
          preview.load(`/log/clear?${new URLSearchParams({ before })}`);
          setOpen(true);
        }}
      >
        <input type="hidden" name="redirectTo" value={back} />
        <label className="logs-field">
          {t('clear.before', { zone })}
          <input
            type="datetime-local"
            name="before"
            required
            value={before}
            onChange={(e) => setBefore(e.target.value)}
          />
        </label>
        <div className="logs-filter-actions">
          <Button type="submit" variant="secondary">
            {t('clear.submit')}
          </Button>
        </div>
      </Form>
      {hydrated ? (
        <DialogTrigger isOpen={open} onOpenChange={setOpen}>
          <ConfirmModal
            title={t('clear.confirmTitle')}
            body={
              preview.data && preview.state === 'idle' ? (
                <p data-testid="clear-body">
                  {t(preview.data.capped ? 'clear.confirmBodyCapped' : 'clear.confirmBody', {
                    time: preview.data.time,
                    count: preview.data.count,
                    zone,
                  })}
                </p>
              ) : (
                <p aria-busy="true">…</p>
              )
            }
            cancelLabel={t('clear.cancel')}
            confirmLabel={t('clear.confirm')}
            action="/log/clear"
            fields={{ before, redirectTo: back }}
            confirmDisabled={!preview.data}
          />
        </DialogTrigger>
      ) : null}
    </section>
  );
}

function LogRow({
  log,
  admin,
  back,
  display,
}: {
  log: LogWire;
  admin: boolean;
  back: string;
  display: ReturnType<typeof useLoaderData<typeof loader>>['display'];
}) {
  const details = parseOther(log.other);
  const columns = admin ? 13 : 10;
  const timeZone = useTimeZone();
  // One <tbody> per log: the row and its expandable details row (a <details>, so it opens without JavaScript).
  return (
    <tbody className="log-group" data-log-id={log.id} data-type={logTypeKey(log.type)}>
      <tr>
        <td>{formatLogTime(log.created_at, timeZone)}</td>
        {admin ? (
          <td title={log.channel_name} data-testid="log-channel">
            {log.channel || '-'}
          </td>
        ) : null}
        {admin ? (
          <td>
            <UserCell log={log} back={back} />
          </td>
        ) : null}
        <td>
          <CopyText text={log.token_name} />
        </td>
        <td>{log.group || '-'}</td>
        <td>
          <LogTypeTag type={log.type} />
        </td>
        <td data-testid="log-model">
          <ModelCell log={log} details={details} />
        </td>
        <td>
          <UseTimeCell log={log} details={details} />
        </td>
        <td data-testid="log-prompt">{log.type === 2 ? log.prompt_tokens : ''}</td>
        <td data-testid="log-completion">{log.type === 2 ? log.completion_tokens : ''}</td>
        <td data-testid="log-cost" data-quota={log.quota}>
          {log.quota ? formatQuota(log.quota, display) : ''}
        </td>
        {admin ? <td data-testid="log-retry">{details.useChannel?.join(' → ') ?? ''}</td> : null}
        <td className="log-content" data-testid="log-content">
          <LogContent content={log.content} />
        </td>
      </tr>
      <tr className="log-expand-row">
        <td colSpan={columns}>
          <LogDetailsPanel log={log} details={details} admin={admin} />
        </td>
      </tr>
    </tbody>
  );
}

export default function LogsPage() {
  const { admin, result, stat, filters, pageSize, display } = useLoaderData<typeof loader>();
  const { t } = useTranslation('logs');
  const location = useLocation();
  const back = location.pathname + location.search;
  // The total is exact below the cap; past it (or on a later page) "next" still follows has_more.
  const pages = Math.max(
    1,
    Math.ceil(result.total / result.page_size),
    result.page + (result.has_more ? 1 : 0),
  );
  return (
    <div className="page logs-page">
      <h1>{t('title')}</h1>
      <ul className="logs-stats" aria-label={t('stats.label')}>
        <li className="logs-chip" data-testid="stat-quota">
          {t('stats.quota')}: <strong>{formatQuota(stat.quota, display)}</strong>
        </li>
        <li className="logs-chip" data-testid="stat-rpm">
          {t('stats.rpm')}: <strong>{stat.rpm}</strong>
        </li>
        <li className="logs-chip" data-testid="stat-tpm">
          {t('stats.tpm')}: <strong>{stat.tpm}</strong>
        </li>
      </ul>
      <FilterForm filters={filters} admin={admin} pageSize={pageSize} />

      <DataTable
        className="logs-table"
        columns={[
          t('columns.time'),
          admin ? t('columns.channel') : null,
          admin ? t('columns.user') : null,
          t('columns.token'),
          t('columns.group'),
          t('columns.type'),
          t('columns.model'),
          t('columns.useTime'),
          t('columns.prompt'),
          t('columns.completion'),
          t('columns.cost'),
          admin ? t('columns.retry') : null,
          t('columns.details'),
        ]}
        isEmpty={result.items.length === 0}
        empty={t('empty')}
        rowGroups
      >
        {result.items.map((log) => (
          <LogRow key={log.id} log={log} admin={admin} back={back} display={display} />
        ))}
      </DataTable>

      <Pagination page={result.page} pages={pages} total={result.total} />
      {result.total_capped ? (
        <p className="logs-note">{t('pagination.more', { count: LOG_COUNT_CAP })}</p>
      ) : null}

      {admin ? <ClearLogs back={back} /> : null}
    </div>
  );
}

export { LogsErrorBoundary as ErrorBoundary };
