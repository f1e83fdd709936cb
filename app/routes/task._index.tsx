import { data, type LinksFunction, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useLoaderData, useNavigation } from '@remix-run/react';
import { Role } from '@switchyard/db/entities/user.ts';
import { useTranslation } from 'react-i18next';
import { DataTable } from '#app/components/list/data-table.tsx';
import { ListErrorBoundary } from '#app/components/list/error-boundary.tsx';
import { Pagination } from '#app/components/pagination.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { isDomainError } from '#app/domain/errors.ts';
import { domainPageCtx } from '#app/domain/http.server.ts';
import { TaskRow } from '#app/domain/tasks/task-ui.tsx';
import { listAllTasks, listSelfTasks, parseTaskQuery } from '#app/domain/tasks/tasks.server.ts';
import tasksStyles from '#app/styles/tasks.css?url';
import { getPreferences, serializePageSize } from '#app/utils/preferences.server.ts';
import { pageSizes, parsePageSize } from '#app/utils/preferences.ts';
import { parseDateTimeLocal, requestTimeZone, toDateTimeLocal } from '#app/utils/time.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';

export const handle = { i18n: ['common', 'tasks'] };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: tasksStyles }];

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Tasks' }];

/** Seed 001 §9: the start defaults to the start of today in the user's zone; the end is open. */
function startOfToday(timeZone: string, now = Date.now()): number {
  const today = toDateTimeLocal(Math.floor(now / 1000), timeZone).slice(0, 10);
  return parseDateTimeLocal(`${today}T00:00`, timeZone) ?? 0;
}

/**
 * A time field: the form's datetime-local value ('' clears it; text that is no time is passed on so the query
 * is refused), else the API's unix seconds, else the default.
 */
function timeParam(url: URL, field: string, apiField: string, fallback: number, timeZone: string): unknown {
  const local = url.searchParams.get(field);
  if (local !== null) return local.trim() === '' ? 0 : (parseDateTimeLocal(local, timeZone) ?? local);
  return url.searchParams.get(apiField) ?? fallback;
}

/**
 * GET /task?channel_id&task_id&start&end&p&page_size: the async-task table (seed 001 §2.12). Admins see every
 * user's tasks with the channel filter and column; anyone else their own.
 */
/** A refused filter (a time that is no time, a huge channel id) is a 400 page with the message, not a 500. */
function pageQuery(ctx: Parameters<typeof parseTaskQuery>[0], raw: Record<string, unknown>) {
  try {
    return parseTaskQuery(ctx, raw);
  } catch (error) {
    if (isDomainError(error)) throw data({ message: error.message }, { status: error.status });
    throw error;
  }
}

export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await domainPageCtx(request, context, {});
  const admin = ctx.actor.role >= Role.Admin;
  const url = new URL(request.url);
  const chosen = parsePageSize(url.searchParams.get('page_size'));
  const prefs = await getPreferences(request);
  const pageSize = chosen ?? prefs.pageSize;
  const timeZone = requestTimeZone(request);
  const q = pageQuery(ctx, {
    p: url.searchParams.get('p') ?? '',
    page_size: String(pageSize),
    task_id: url.searchParams.get('task_id') ?? '',
    channel_id: admin ? (url.searchParams.get('channel_id') ?? '') : '',
    start_timestamp: timeParam(url, 'start', 'start_timestamp', startOfToday(timeZone), timeZone),
    end_timestamp: timeParam(url, 'end', 'end_timestamp', 0, timeZone),
  });
  const result = admin ? await listAllTasks(ctx, q) : await listSelfTasks(ctx, q);
  const headers = new Headers({ 'Cache-Control': 'no-store' });
  if (chosen && chosen !== prefs.pageSize) headers.append('Set-Cookie', await serializePageSize(chosen));
  return data(
    {
      title: ctx.t('tasks:title'),
      admin,
      result,
      pageSize,
      filters: {
        channel_id: q.channel_id ? String(q.channel_id) : '',
        task_id: q.task_id,
        start: toDateTimeLocal(q.start_timestamp, timeZone),
        end: toDateTimeLocal(q.end_timestamp, timeZone),
      },
    },
    { headers },
  );
}

type Filters = ReturnType<typeof useLoaderData<typeof loader>>['filters'];

function FilterForm({ filters, admin, pageSize }: { filters: Filters; admin: boolean; pageSize: number }) {
  const { t } = useTranslation('tasks');
  const zone = useTimeZone();
  const navigation = useNavigation();
  return (
    <Form method="get" role="search" aria-label={t('filters.label')} className="logs-filters">
      {admin ? (
        <label className="logs-field">
          {t('filters.channel')}
          <input name="channel_id" inputMode="numeric" pattern="\d*" defaultValue={filters.channel_id} />
        </label>
      ) : null}
      <label className="logs-field">
        {t('filters.taskId')}
        <input name="task_id" defaultValue={filters.task_id} autoComplete="off" />
      </label>
      <label className="logs-field">
        {t('filters.start', { zone })}
        <input type="datetime-local" name="start" defaultValue={filters.start} />
      </label>
      <label className="logs-field">
        {t('filters.end', { zone })}
        <input type="datetime-local" name="end" defaultValue={filters.end} />
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
        <a href="/task" className="btn btn-ghost">
          {t('filters.reset')}
        </a>
      </div>
    </Form>
  );
}

export default function TasksPage() {
  const { admin, result, filters, pageSize } = useLoaderData<typeof loader>();
  const { t } = useTranslation('tasks');
  const pages = Math.max(1, Math.ceil(result.total / result.page_size));
  return (
    <div className="page logs-page tasks-page">
      <h1>{t('title')}</h1>
      <FilterForm filters={filters} admin={admin} pageSize={pageSize} />
      <DataTable
        className="tasks-table"
        columns={[
          t('columns.submitTime'),
          t('columns.finishTime'),
          t('columns.progress'),
          t('columns.duration'),
          admin ? t('columns.channel') : null,
          t('columns.platform'),
          t('columns.action'),
          t('columns.taskId'),
          t('columns.status'),
          t('columns.failReason'),
        ]}
        isEmpty={result.items.length === 0}
        empty={t('empty')}
      >
        {result.items.map((task) => (
          <TaskRow key={task.id} task={task} admin={admin} />
        ))}
      </DataTable>
      <Pagination page={result.page} pages={pages} total={result.total} />
    </div>
  );
}

export function ErrorBoundary() {
  return <ListErrorBoundary ns="tasks" />;
}
