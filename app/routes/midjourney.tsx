import { data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useLoaderData } from '@remix-run/react';
import { Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { DataTable } from '#app/components/list/data-table.tsx';
import { ListErrorBoundary } from '#app/components/list/error-boundary.tsx';
import { Pagination } from '#app/components/pagination.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { InputError } from '#app/domain/errors.ts';
import { domainPageCtx } from '#app/domain/http.server.ts';
import {
  listAllMidjourney,
  listSelfMidjourney,
  type MidjourneyWire,
  parseMidjourneyQuery,
} from '#app/domain/midjourney/midjourney.server.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import { formatTimestamp, parseDateTimeLocal, requestTimeZone, toDateTimeLocal } from '#app/utils/time.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';

export const handle = { i18n: ['common', 'midjourney'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Drawing' }];

/** Seed 001 §9 drawing default: the last 30 days to one hour ahead (unix ms). */
function defaultWindow(now = Date.now()): { start: number; end: number } {
  return { start: now - 30 * 86_400_000, end: now + 3_600_000 };
}

/** A time field: the form's datetime-local value (in the user's zone), else the API's unix ms, else the default. */
function timeParam(url: URL, field: string, apiField: string, fallback: number, zone: string): unknown {
  const local = url.searchParams.get(field);
  if (local !== null) {
    if (local.trim() === '') return 0;
    const s = parseDateTimeLocal(local, zone);
    return s === null ? 'invalid' : s * 1000;
  }
  return url.searchParams.get(apiField) ?? fallback;
}

/**
 * GET /midjourney?channel_id&mj_id&start&end&p&page_size: the drawing-task table (seed 001 §2.11). Admins see
 * every user's tasks with the channel filter and column; anyone else their own.
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await domainPageCtx(request, context, {});
  const admin = ctx.actor.role >= 10;
  const url = new URL(request.url);
  const zone = requestTimeZone(request);
  const win = defaultWindow();
  let q: ReturnType<typeof parseMidjourneyQuery>;
  try {
    q = parseMidjourneyQuery(ctx, {
      ...Object.fromEntries(url.searchParams),
      channel_id: admin ? (url.searchParams.get('channel_id') ?? '') : '',
      start_timestamp: timeParam(url, 'start', 'start_timestamp', win.start, zone),
      end_timestamp: timeParam(url, 'end', 'end_timestamp', win.end, zone),
    });
  } catch (e) {
    if (e instanceof InputError) throw data({ message: e.message }, { status: 400 });
    throw e;
  }
  const result = admin ? await listAllMidjourney(ctx, q) : await listSelfMidjourney(ctx, q);
  return data(
    {
      title: ctx.t('midjourney:title'),
      admin,
      notifyOff: admin && !ctx.options.get('MjNotifyEnabled'),
      result,
      filters: {
        channel_id: q.channel_id ? String(q.channel_id) : '',
        mj_id: q.mj_id,
        start: toDateTimeLocal(Math.floor(q.start_timestamp / 1000), zone),
        end: toDateTimeLocal(Math.floor(q.end_timestamp / 1000), zone),
      },
    },
    { headers: { 'Cache-Control': 'no-store' } },
  );
}

type Filters = ReturnType<typeof useLoaderData<typeof loader>>['filters'];

function FilterForm({ filters, admin }: { filters: Filters; admin: boolean }) {
  const { t } = useTranslation('midjourney');
  const zone = useTimeZone();
  return (
    <Form method="get" role="search" aria-label={t('filters.label')} className="logs-filters">
      {admin ? (
        <label className="logs-field">
          {t('filters.channel')}
          <input name="channel_id" inputMode="numeric" pattern="\d*" defaultValue={filters.channel_id} />
        </label>
      ) : null}
      <label className="logs-field">
        {t('filters.mjId')}
        <input name="mj_id" defaultValue={filters.mj_id} autoComplete="off" />
      </label>
      <label className="logs-field">
        {t('filters.start', { zone })}
        <input type="datetime-local" name="start" defaultValue={filters.start} />
      </label>
      <label className="logs-field">
        {t('filters.end', { zone })}
        <input type="datetime-local" name="end" defaultValue={filters.end} />
      </label>
      <div className="logs-filter-actions">
        <Button type="submit">{t('filters.submit')}</Button>
        <Link to="/midjourney" className="btn btn-ghost">
          {t('filters.reset')}
        </Link>
      </div>
    </Form>
  );
}

function codeKey(code: number): string {
  if (code === 1) return 'submitted';
  if (code === 21) return 'waiting';
  if (code === 22) return 'duplicate';
  return 'notSubmitted';
}

const STATUSES = ['SUCCESS', 'NOT_START', 'SUBMITTED', 'IN_PROGRESS', 'FAILURE', 'MODAL'];
const ACTIONS = [
  'IMAGINE',
  'UPSCALE',
  'VARIATION',
  'HIGH_VARIATION',
  'LOW_VARIATION',
  'PAN',
  'DESCRIBE',
  'BLEND',
  'UPLOAD',
  'SHORTEN',
  'REROLL',
  'INPAINT',
  'ZOOM',
  'CUSTOM_ZOOM',
  'MODAL',
  'SWAP_FACE',
];

/** The progress text ("45%") as a number 0..100. */
function percent(progress: string): number {
  const n = Number.parseFloat(progress);
  return Number.isFinite(n) ? Math.min(100, Math.max(0, n)) : 0;
}

/** Seconds from submit to finish (or now while running), one decimal; null without a submit time. */
function durationSeconds(task: MidjourneyWire): number | null {
  if (!task.submit_time) return null;
  const end = task.finish_time || task.start_time || 0;
  if (!end || end < task.submit_time) return null;
  return Math.round((end - task.submit_time) / 100) / 10;
}

/** A long text: a react-aria dialog with JavaScript, a details disclosure without. */
function TextCell({ text, label, testId }: { text: string; label: string; testId: string }) {
  const { t } = useTranslation('midjourney');
  const hydrated = useHydrated();
  if (!text) return <span>{t('none')}</span>;
  const short = text.length > 30 ? `${text.slice(0, 30)}…` : text;
  if (!hydrated)
    return (
      <details className="mj-text" data-testid={testId}>
        <summary>{short}</summary>
        <p>{text}</p>
      </details>
    );
  return (
    <DialogTrigger>
      <Button
        variant="ghost"
        className="mj-text-button"
        data-testid={testId}
        aria-label={`${label}: ${short}`}
      >
        {short}
      </Button>
      <ModalOverlay isDismissable className="list-overlay">
        <Modal className="list-dialog">
          <Dialog data-testid={`${testId}-dialog`}>
            {({ close }) => (
              <>
                <Heading slot="title">{label}</Heading>
                <p className="mj-text-full">{text}</p>
                <Button onPress={close}>{t('close')}</Button>
              </>
            )}
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

/** The result image: a link to the image with a thumbnail; with JavaScript a viewer dialog. */
function ImageCell({ task }: { task: MidjourneyWire }) {
  const { t } = useTranslation('midjourney');
  const hydrated = useHydrated();
  if (!task.image_url) return <span>{t('none')}</span>;
  const alt = t('imageAlt', { id: task.mj_id });
  const thumb = (
    <img src={task.image_url} alt={alt} className="mj-thumb" loading="lazy" width={64} height={64} />
  );
  if (!hydrated)
    return (
      <a href={task.image_url} target="_blank" rel="noreferrer noopener" data-testid="mj-image">
        {thumb}
        <span className="sr-only">{t('viewImage')}</span>
      </a>
    );
  return (
    <DialogTrigger>
      <Button variant="ghost" className="mj-image-button" data-testid="mj-image" aria-label={t('viewImage')}>
        {thumb}
      </Button>
      <ModalOverlay isDismissable className="list-overlay">
        <Modal className="list-dialog mj-image-dialog">
          <Dialog data-testid="mj-image-dialog">
            {({ close }) => (
              <>
                <Heading slot="title">{t('viewImage')}</Heading>
                <img src={task.image_url} alt={alt} className="mj-image-full" />
                <p>
                  <a href={task.image_url} target="_blank" rel="noreferrer noopener">
                    {task.image_url}
                  </a>
                </p>
                <Button onPress={close}>{t('close')}</Button>
              </>
            )}
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

function TaskRow({ task, admin }: { task: MidjourneyWire; admin: boolean }) {
  const { t } = useTranslation('midjourney');
  const zone = useTimeZone();
  const seconds = durationSeconds(task);
  const pct = percent(task.progress);
  return (
    <tr data-testid="mj-row" data-mj-id={task.mj_id}>
      <td>{formatTimestamp(Math.floor(task.submit_time / 1000), zone)}</td>
      <td data-testid="mj-duration" className={seconds !== null && seconds > 60 ? 'mj-slow' : undefined}>
        {seconds === null ? t('none') : t('duration', { seconds })}
      </td>
      {admin ? <td data-testid="mj-channel">{task.channel_id}</td> : null}
      <td>{ACTIONS.includes(task.action) ? t(`action.${task.action}`) : task.action || t('none')}</td>
      <td data-testid="mj-id">{task.mj_id}</td>
      <td data-testid="mj-code">
        <span className="badge">{t(`code.${codeKey(task.code)}`)}</span>
      </td>
      <td data-testid="mj-status">
        <span className="badge" data-status={task.status}>
          {t(`status.${STATUSES.includes(task.status) ? task.status : 'unknown'}`)}
        </span>
      </td>
      <td>
        <progress data-testid="mj-progress" max={100} value={pct} aria-label={t('columns.progress')}>
          {task.progress}
        </progress>{' '}
        <span>{task.progress || '0%'}</span>
      </td>
      <td>
        <ImageCell task={task} />
      </td>
      <td>
        <TextCell text={task.prompt} label={t('columns.prompt')} testId="mj-prompt" />
      </td>
      <td>
        <TextCell text={task.prompt_en} label={t('columns.promptEn')} testId="mj-prompt-en" />
      </td>
      <td>
        <TextCell text={task.fail_reason} label={t('columns.failReason')} testId="mj-fail" />
      </td>
    </tr>
  );
}

export default function MidjourneyPage() {
  const { admin, notifyOff, result, filters } = useLoaderData<typeof loader>();
  const { t } = useTranslation('midjourney');
  const pages = Math.max(1, Math.ceil(result.total / result.page_size));
  return (
    <div className="page logs-page mj-page">
      <h1>{t('title')}</h1>
      {notifyOff ? (
        <p className="notice" role="note" data-testid="mj-notify-off">
          {t('notifyOff')}
        </p>
      ) : null}
      <FilterForm filters={filters} admin={admin} />
      <DataTable
        className="mj-table"
        columns={[
          t('columns.submitTime'),
          t('columns.duration'),
          admin ? t('columns.channel') : null,
          t('columns.type'),
          t('columns.mjId'),
          t('columns.code'),
          t('columns.status'),
          t('columns.progress'),
          t('columns.image'),
          t('columns.prompt'),
          t('columns.promptEn'),
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
  return <ListErrorBoundary ns="common" />;
}
