import { data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useLoaderData, useLocation } from '@remix-run/react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { TableScroll } from '#app/components/list/data-table.tsx';
import { Pagination } from '#app/components/pagination.tsx';
import { useToast } from '#app/components/toaster.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { formatQuota } from '#app/domain/account/quota-format.ts';
import { PRICING_SORTS } from '#app/domain/pricing/constants.ts';
import { pricingCtx } from '#app/domain/pricing/http.server.ts';
import { type PricingPage, type PricingRow, pricingPage } from '#app/domain/pricing/pricing.server.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import { parsePageSize } from '#app/utils/preferences.ts';

export const handle = { i18n: ['common', 'pricing'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Pricing' }];

/**
 * GET /pricing?q&group&sort&p&page_size (public, seed 001 §2.13): every model the viewer's groups can reach, with
 * the prices the relay bills for the viewed group. Visitors see the default group.
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await pricingCtx(request, context, false);
  const url = new URL(request.url);
  const page = await pricingPage(ctx, {
    q: url.searchParams.get('q') ?? '',
    group: url.searchParams.get('group') ?? undefined,
    sort: url.searchParams.get('sort') ?? undefined,
    page: Math.max(1, Number.parseInt(url.searchParams.get('p') ?? '1', 10) || 1),
    pageSize: parsePageSize(url.searchParams.get('page_size')) ?? 10,
  });
  return data(
    { title: ctx.t?.('pricing:title') ?? 'Pricing', page },
    { headers: { 'Cache-Control': 'no-store' } },
  );
}

/** Group ratio tag colours (seed 001 §9): over 5 red, over 3 orange, over 1 blue, else green. */
function ratioTone(ratio: number): string {
  if (ratio > 5) return 'red';
  if (ratio > 3) return 'orange';
  if (ratio > 1) return 'blue';
  return 'green';
}

/** Up to 6 decimals, trailing zeros dropped: $0.3, $0.000002. */
function usd(value: number): string {
  return `$${Number(value.toFixed(6))}`;
}

function withQuery(search: string, changes: Record<string, string | null>): string {
  const params = new URLSearchParams(search);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null) params.delete(k);
    else params.set(k, v);
  }
  params.delete('p');
  return `/pricing?${params}`;
}

function useCopy() {
  const { notify } = useToast();
  const { t } = useTranslation('pricing');
  return async (text: string) => {
    try {
      await navigator.clipboard.writeText(text);
      notify({ type: 'success', message: t('copied', { text }) });
    } catch {
      notify({ type: 'error', message: `${t('copyFailed')}: ${text}` });
    }
  };
}

export default function PricingRoute() {
  const { page } = useLoaderData<typeof loader>();
  const { t } = useTranslation('pricing');
  const hydrated = useHydrated();
  const copy = useCopy();
  const [selected, setSelected] = useState<string[]>([]);
  const toggle = (model: string, on: boolean) =>
    setSelected((s) => (on ? [...new Set([...s, model])] : s.filter((m) => m !== model)));
  return (
    <div className="page pricing-page">
      <h1>{t('title')}</h1>
      <Banner page={page} />
      <PricingFilters page={page} />
      {hydrated ? (
        <div className="pricing-toolbar">
          <Button isDisabled={selected.length === 0} onPress={() => void copy(selected.join(','))}>
            {t('copy')}
          </Button>
        </div>
      ) : null}
      {page.rows.length === 0 ? (
        <p className="notice" role="status">
          {t('empty')}
        </p>
      ) : (
        <TableScroll>
          <table className="pricing-table">
            <caption className="sr-only">{t('title')}</caption>
            <thead>
              <tr>
                {hydrated ? (
                  <th scope="col">
                    <span className="sr-only">{t('copy')}</span>
                  </th>
                ) : null}
                <th scope="col">{t('columns.available')}</th>
                <th scope="col">{t('columns.model')}</th>
                <th scope="col">{t('columns.type')}</th>
                <th scope="col">{t('columns.groups')}</th>
                <th scope="col">{t('columns.ratio')}</th>
                <th scope="col">{t('columns.price')}</th>
              </tr>
            </thead>
            <tbody>
              {page.rows.map((row) => (
                <PricingTableRow
                  key={row.model_name}
                  row={row}
                  page={page}
                  selected={selected.includes(row.model_name)}
                  onSelect={hydrated ? (on) => toggle(row.model_name, on) : null}
                  onCopy={hydrated ? () => void copy(row.model_name) : null}
                />
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <Pagination page={page.page} pages={page.pages} total={page.total} />
      <RatioFigure />
    </div>
  );
}

function Banner({ page }: { page: PricingPage }) {
  const { t } = useTranslation('pricing');
  const own = page.groups.find((g) => g.name === page.ownGroup);
  return (
    <div className="pricing-banners">
      <p className="notice" data-testid="pricing-banner">
        {page.signedIn
          ? t('banner.user', { group: page.ownGroup, ratio: own?.ratio ?? page.groupRatio })
          : t('banner.visitor', { ratio: own?.ratio ?? page.groupRatio })}
        {page.group !== page.ownGroup ? (
          <>
            {' · '}
            {t('banner.viewing', { group: page.group, ratio: page.groupRatio })}
          </>
        ) : null}
      </p>
      <p className="notice pricing-formula">{t('banner.formula')}</p>
    </div>
  );
}

function PricingFilters({ page }: { page: PricingPage }) {
  const { t } = useTranslation('pricing');
  return (
    <Form method="get" className="pricing-filters" role="search" aria-label={t('search.label')}>
      <label>
        {t('search.keyword')}
        <input type="search" name="q" defaultValue={page.q} placeholder={t('search.placeholder')} />
      </label>
      <label>
        {t('search.group')}
        <select name="group" defaultValue={page.group}>
          {page.groups.map((g) => (
            <option key={g.name} value={g.name}>
              {g.name} ({g.ratio})
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('search.sort')}
        <select name="sort" defaultValue={page.sort}>
          {PRICING_SORTS.map((s) => (
            <option key={s} value={s}>
              {t(`sorts.${s}`)}
            </option>
          ))}
        </select>
      </label>
      <input type="hidden" name="page_size" value={page.pageSize} />
      <Button type="submit" variant="primary">
        {t('search.submit')}
      </Button>
    </Form>
  );
}

function PriceCell({ row, page }: { row: PricingRow; page: PricingPage }) {
  const { t } = useTranslation('pricing');
  if (!row.priced) return <span className="pricing-muted">{t('unpriced')}</span>;
  // The quota figure is what a wallet in quota units (DisplayInCurrencyEnabled off) is charged.
  const quota = (n: number) =>
    page.display.displayInCurrency ? '' : t('quotaSuffix', { quota: formatQuota(n, page.display) });
  if (row.quota_type === 1)
    return (
      <span data-price="call">{t('callPrice', { price: usd(row.callUsd) }) + quota(row.callQuota)}</span>
    );
  return (
    <>
      <span data-price="input">{t('inputPrice', { price: usd(row.inputUsd) }) + quota(row.inputQuota)}</span>
      <br />
      <span data-price="output">
        {t('outputPrice', { price: usd(row.outputUsd) }) + quota(row.outputQuota)}
      </span>
    </>
  );
}

function PricingTableRow({
  row,
  page,
  selected,
  onSelect,
  onCopy,
}: {
  row: PricingRow;
  page: PricingPage;
  selected: boolean;
  onSelect: ((on: boolean) => void) | null;
  onCopy: (() => void) | null;
}) {
  const { t } = useTranslation('pricing');
  const { search } = useLocation();
  return (
    <tr data-model={row.model_name}>
      {onSelect ? (
        <td>
          <input
            type="checkbox"
            checked={selected}
            aria-label={t('select', { model: row.model_name })}
            onChange={(e) => onSelect(e.target.checked)}
          />
        </td>
      ) : null}
      <td>
        <span
          className={row.available ? 'pricing-yes' : 'pricing-no'}
          title={row.available ? t('available') : t('unavailable')}
          data-available={row.available}
        >
          <span aria-hidden="true">{row.available ? '✓' : '✗'}</span>
          <span className="sr-only">{row.available ? t('available') : t('unavailable')}</span>
        </span>
      </td>
      <th scope="row">
        {onCopy ? (
          <button type="button" className="pricing-copy" onClick={onCopy}>
            {row.model_name}
          </button>
        ) : (
          row.model_name
        )}
      </th>
      <td>
        <span className={`pricing-tag ${row.quota_type === 1 ? 'pricing-tag-call' : 'pricing-tag-usage'}`}>
          {row.quota_type === 1 ? t('type.call') : t('type.usage')}
        </span>
      </td>
      <td>
        <ul className="pricing-groups">
          {row.enable_groups.map((g) => {
            const ratio = page.groups.find((x) => x.name === g)?.ratio ?? 1;
            return (
              <li key={g}>
                <Link
                  to={withQuery(search, { group: g })}
                  current={g === page.group}
                  className={`pricing-tag pricing-ratio-${ratioTone(ratio)}`}
                >
                  {g}
                </Link>
              </li>
            );
          })}
        </ul>
      </td>
      <td data-ratio>
        {row.quota_type === 0 && row.priced ? (
          <>
            {t('modelRatio', { value: row.model_ratio })}
            <br />
            {t('completionRatio', { value: row.completion_ratio })}
            <br />
          </>
        ) : null}
        {t('groupRatio', { value: page.groupRatio })}
      </td>
      <td>
        <PriceCell row={row} page={page} />
      </td>
    </tr>
  );
}

/** The ratio explanation (seed 001 §2.13 "a ratio-explanation image"), drawn inline so it needs no asset. */
function RatioFigure() {
  const { t } = useTranslation('pricing');
  return (
    <figure className="pricing-figure">
      <svg viewBox="0 0 420 60" role="img" aria-label={t('ratioImageAlt')}>
        <title>{t('ratioImageAlt')}</title>
        <g fontSize="13" textAnchor="middle">
          <rect x="2" y="10" width="110" height="36" rx="6" className="pricing-figure-box" />
          <text x="57" y="33">
            {t('figure.model')}
          </text>
          <text x="128" y="33">
            ×
          </text>
          <rect x="144" y="10" width="130" height="36" rx="6" className="pricing-figure-box" />
          <text x="209" y="33">
            {t('figure.completion')}
          </text>
          <text x="290" y="33">
            ×
          </text>
          <rect x="306" y="10" width="110" height="36" rx="6" className="pricing-figure-box" />
          <text x="361" y="33">
            {t('figure.group')}
          </text>
        </g>
      </svg>
      <figcaption>{t('ratioImageAlt')}</figcaption>
    </figure>
  );
}
