import { data, type LinksFunction, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, Link, useLoaderData, useLocation } from '@remix-run/react';
import { Role } from '@switchyard/db/entities/user.ts';
import { useTranslation } from 'react-i18next';
import { ListErrorBoundary } from '#app/components/list/error-boundary.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { formatQuota } from '#app/domain/account/quota-format.ts';
import {
  ChartFrame,
  chartModels,
  LineChart,
  ShareChart,
  StackedBars,
} from '#app/domain/dashboard/charts.tsx';
import { type DashboardSeries, METRICS, type Metric } from '#app/domain/dashboard/constants.ts';
import { checkedTimeZone, dashboardSeries } from '#app/domain/dashboard/dashboard.server.ts';
import {
  bucketStart,
  GRANULARITIES,
  type Granularity,
  isGranularity,
  parseLocalInput,
  toLocalInput,
} from '#app/domain/dashboard/time.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { domainPageCtx } from '#app/domain/http.server.ts';
import { quotaDisplay } from '#app/domain/logs/logs.server.ts';
import styles from '#app/styles/dashboard.css?url';
import { requestTimeZone } from '#app/utils/time.ts';

export const handle = { i18n: ['common', 'dashboard'] };
export const links: LinksFunction = () => [{ rel: 'stylesheet', href: styles }];
export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Dashboard' }];

/** The default range: from the start of the day six days ago (the last 7 days) to the end of this hour. */
function defaultRange(nowSec: number, tz: string) {
  return { start: bucketStart(nowSec - 6 * 86_400, 'day', tz), end: bucketStart(nowSec, 'hour', tz) + 3599 };
}

/**
 * GET /detail?start&end&granularity&username&metric: the data dashboard (new-api's 数据看板). Times are the
 * user's wall-clock time in the time-zone cookie's zone (UTC until known); admins see every user or one username.
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await domainPageCtx(request, context, {});
  const admin = ctx.actor.role >= Role.Admin;
  const url = new URL(request.url);
  const tz = await checkedTimeZone(ctx, requestTimeZone(request));
  const title = ctx.t('dashboard:title');
  const headers = { 'Cache-Control': 'no-store' };
  if (!ctx.options.get('DataExportEnabled')) return data({ title, enabled: false as const }, { headers });

  const now = Math.floor(Date.now() / 1000);
  const win = defaultRange(now, tz);
  const rawGranularity = url.searchParams.get('granularity');
  const fallback = ctx.options.get('DataExportDefaultTime');
  const granularity: Granularity = isGranularity(rawGranularity)
    ? rawGranularity
    : isGranularity(fallback)
      ? fallback
      : 'hour';
  const rawMetric = url.searchParams.get('metric');
  const metric: Metric = METRICS.includes(rawMetric as Metric) ? (rawMetric as Metric) : 'quota';
  const username = admin ? (url.searchParams.get('username') ?? '').trim().slice(0, 64) : '';
  const startText = url.searchParams.get('start');
  const endText = url.searchParams.get('end');
  const start = startText ? parseLocalInput(startText, tz) : win.start;
  // A minute-precision end covers its whole minute.
  const endParsed = endText ? parseLocalInput(endText, tz) : win.end;
  const end = endText && endParsed !== null ? endParsed + 59 : endParsed;
  const filters = {
    start: startText ?? toLocalInput(win.start, tz),
    end: endText ?? toLocalInput(win.end, tz),
    granularity,
    username,
    metric,
  };
  const display = quotaDisplay(ctx.options);
  const base = { title, enabled: true as const, admin, tz, filters, display };
  if (start === null || end === null) {
    return data(
      { ...base, series: null, error: ctx.t('dashboard:errors.badTime') },
      { status: 400, headers },
    );
  }
  try {
    const series = await dashboardSeries(ctx, { start, end, granularity, timeZone: tz, username }, display);
    return data({ ...base, series, error: null }, { headers });
  } catch (error) {
    if (!isDomainError(error) || error.status !== 400) throw error;
    return data({ ...base, series: null, error: error.message }, { status: 400, headers });
  }
}

type Loaded = Extract<ReturnType<typeof useLoaderData<typeof loader>>, { enabled: true }>;

const numbers = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });
/** Axis ticks: short (1.2K, 3M) so that they fit the margin. */
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

function Filters({ filters, admin, tz }: Pick<Loaded, 'filters' | 'admin' | 'tz'>) {
  const { t } = useTranslation('dashboard');
  return (
    <Form method="get" role="search" aria-label={t('filters.label')} className="dash-filters">
      <label className="dash-field">
        {t('filters.start')}
        <input type="datetime-local" name="start" defaultValue={filters.start} required />
      </label>
      <label className="dash-field">
        {t('filters.end')}
        <input type="datetime-local" name="end" defaultValue={filters.end} required />
      </label>
      <label className="dash-field">
        {t('filters.granularity')}
        <select name="granularity" defaultValue={filters.granularity}>
          {GRANULARITIES.map((g) => (
            <option key={g} value={g}>
              {t(`granularity.${g}`)}
            </option>
          ))}
        </select>
      </label>
      {admin ? (
        <label className="dash-field">
          {t('filters.username')}
          <input
            name="username"
            defaultValue={filters.username}
            placeholder={t('filters.usernameHint')}
            autoComplete="off"
            maxLength={64}
          />
        </label>
      ) : null}
      <input type="hidden" name="metric" value={filters.metric} />
      <div className="dash-actions">
        <Button type="submit" variant="primary">
          {t('filters.submit')}
        </Button>
        <a href="/detail" className="btn btn-ghost">
          {t('filters.reset')}
        </a>
      </div>
      <p className="dash-tz">{t('filters.timeZone', { tz })}</p>
    </Form>
  );
}

function MetricLinks({ current }: { current: Metric }) {
  const { t } = useTranslation('dashboard');
  const location = useLocation();
  const href = (m: Metric) => {
    const p = new URLSearchParams(location.search);
    p.set('metric', m);
    return `?${p}`;
  };
  return (
    <nav aria-label={t('metric.label')} className="dash-metrics">
      {METRICS.map((m) => (
        <Link
          key={m}
          to={href(m)}
          aria-current={m === current ? 'true' : undefined}
          className="dash-metric"
          preventScrollReset
        >
          {t(`metric.${m}`)}
        </Link>
      ))}
    </nav>
  );
}

function Dashboard({
  series,
  metric,
  display,
}: {
  series: DashboardSeries;
  metric: Metric;
  display: Loaded['display'];
}) {
  const { t } = useTranslation('dashboard');
  const fmt = (m: Metric) => (v: number) => (m === 'quota' ? formatQuota(v, display) : numbers.format(v));
  const axis = (m: Metric) => (v: number) => (m === 'quota' ? formatQuota(v, display) : compact.format(v));
  const labels = series.buckets.map((b) => b.label);
  const models = chartModels(series.models, series.cells, t('charts.other'));
  const metricName = t(`metric.${metric}`);
  const range = { from: labels[0] ?? '', to: labels.at(-1) ?? '' };
  const empty = series.totals.count === 0 && series.models.length === 0;
  return (
    <>
      <ul className="dash-summary" aria-label={t('summary.label')}>
        <li data-testid="sum-quota">
          <span>{t('summary.quota')}</span>
          <strong>{series.quotaText}</strong>
        </li>
        <li data-testid="sum-tokens">
          <span>{t('summary.tokens')}</span>
          <strong>{numbers.format(series.totals.tokens)}</strong>
        </li>
        <li data-testid="sum-count">
          <span>{t('summary.count')}</span>
          <strong>{numbers.format(series.totals.count)}</strong>
        </li>
        <li data-testid="sum-rpm">
          <span>{t('summary.rpm')}</span>
          <strong>{numbers.format(series.rpm)}</strong>
        </li>
        <li data-testid="sum-tpm">
          <span>{t('summary.tpm')}</span>
          <strong>{numbers.format(series.tpm)}</strong>
        </li>
      </ul>
      <MetricLinks current={metric} />
      {empty ? (
        <p className="dash-empty">{t('charts.empty')}</p>
      ) : (
        // remounted per query: the arrow keys move the tab stop in the DOM, a new chart starts at its first mark
        <div
          className="dash-grid-charts"
          key={`${series.start}:${series.end}:${series.granularity}:${metric}`}
        >
          <ChartFrame title={t('charts.byModel', { metric: metricName })}>
            <StackedBars
              wide
              labels={labels}
              models={models}
              metric={metric}
              format={axis(metric)}
              ariaLabel={t('charts.chartLabel', {
                title: t('charts.byModel', { metric: metricName }),
                ...range,
              })}
              describe={(b) =>
                [
                  t('charts.point', {
                    bucket: labels[b],
                    value: fmt(metric)(series.bucketTotals[b]?.[metric] ?? 0),
                  }),
                  ...models
                    .filter((m) => (m.cells[b]?.[metric] ?? 0) > 0)
                    .map((m) => `${m.name}: ${fmt(metric)(m.cells[b]?.[metric] ?? 0)}`),
                ].join('; ')
              }
            />
            <ul className="dash-legend dash-legend-inline" aria-hidden="true">
              {models.map((m) => (
                <li key={m.name}>
                  <span className="dash-swatch" style={{ background: m.color }} />
                  {m.name}
                </li>
              ))}
            </ul>
          </ChartFrame>
          <ChartFrame title={t('charts.calls')}>
            <LineChart
              labels={labels}
              values={series.bucketTotals.map((c) => c.count)}
              format={axis('count')}
              ariaLabel={t('charts.chartLabel', { title: t('charts.calls'), ...range })}
              describe={(b) =>
                t('charts.point', {
                  bucket: labels[b],
                  value: numbers.format(series.bucketTotals[b]?.count ?? 0),
                })
              }
            />
          </ChartFrame>
          <ChartFrame title={t(metric === 'count' ? 'charts.shareByCount' : 'charts.share')}>
            <ShareChart
              metric={metric === 'count' ? 'count' : 'quota'}
              models={models.map((m, i) => ({
                name: m.name,
                color: m.color,
                value:
                  i < series.models.length && m.name === series.models[i]?.name
                    ? (series.models[i]?.total[metric === 'count' ? 'count' : 'quota'] ?? 0)
                    : m.cells.reduce((a, c) => a + c[metric === 'count' ? 'count' : 'quota'], 0),
              }))}
              format={fmt(metric === 'count' ? 'count' : 'quota')}
              ariaLabel={t(metric === 'count' ? 'charts.shareByCount' : 'charts.share')}
              sliceText={(s) =>
                t('charts.slice', {
                  model: s.name,
                  value: fmt(metric === 'count' ? 'count' : 'quota')(s.value),
                  percent: s.percent,
                })
              }
            />
          </ChartFrame>
        </div>
      )}
      <DataTable series={series} format={fmt('quota')} />
    </>
  );
}

/** The screen-reader (and copy-paste) alternative of the charts: every non-empty bucket x model. */
function DataTable({ series, format }: { series: DashboardSeries; format: (v: number) => string }) {
  const { t } = useTranslation('dashboard');
  const rows = series.buckets.flatMap((b, bi) =>
    series.models
      .map((m, mi) => ({
        key: `${b.start}:${m.name}`,
        label: b.label,
        model: m.name,
        cell: series.cells[mi]?.[bi],
      }))
      .filter((r) => r.cell && (r.cell.count > 0 || r.cell.quota > 0 || r.cell.tokens > 0)),
  );
  return (
    <details className="dash-table" open={rows.length > 0 && rows.length <= 12}>
      <summary>{t('table.showTable')}</summary>
      <section className="dash-scroll" aria-label={t('table.caption')}>
        <table>
          <caption>{t('table.caption')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('table.time')}</th>
              <th scope="col">{t('table.model')}</th>
              <th scope="col">{t('table.quota')}</th>
              <th scope="col">{t('table.tokens')}</th>
              <th scope="col">{t('table.count')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.length === 0 ? (
              <tr>
                <td colSpan={5}>{t('charts.empty')}</td>
              </tr>
            ) : (
              rows.map((r) => (
                <tr key={r.key} data-testid="dash-row">
                  <th scope="row">{r.label}</th>
                  <td>{r.model}</td>
                  <td data-quota={r.cell?.quota}>{format(r.cell?.quota ?? 0)}</td>
                  <td>{numbers.format(r.cell?.tokens ?? 0)}</td>
                  <td>{numbers.format(r.cell?.count ?? 0)}</td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </section>
    </details>
  );
}

export default function DetailPage() {
  const loaded = useLoaderData<typeof loader>();
  const { t } = useTranslation('dashboard');
  if (!loaded.enabled) {
    return (
      <div className="page dash-page">
        <h1>{t('title')}</h1>
        <p role="status">{t('disabled')}</p>
      </div>
    );
  }
  return (
    <div className="page dash-page">
      <h1>{t('title')}</h1>
      <p className="dash-intro">{t('intro')}</p>
      <Filters filters={loaded.filters} admin={loaded.admin} tz={loaded.tz} />
      {loaded.error ? (
        <p role="alert" className="dash-error">
          {loaded.error}
        </p>
      ) : null}
      {loaded.series ? (
        <Dashboard series={loaded.series} metric={loaded.filters.metric} display={loaded.display} />
      ) : null}
    </div>
  );
}

export function ErrorBoundary() {
  return <ListErrorBoundary ns="dashboard" />;
}
