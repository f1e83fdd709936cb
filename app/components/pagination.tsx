import { Form, useLocation } from '@remix-run/react';
import { ChevronLeft, ChevronRight, ChevronsLeft, ChevronsRight } from 'lucide-react';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from '#app/components/ui/link.tsx';

/** The current list URL with page `p` (search and page size kept), for server-side pagination links. */
export function pageHref(pathname: string, search: string, p: number): string {
  const params = new URLSearchParams(search);
  params.set('p', String(p));
  return `${pathname}?${params}`;
}

/**
 * The page numbers to show: always the first and the last, `siblings` either side of the current page, and
 * 'gap' where numbers are left out (a gap of one number shows the number instead).
 */
export function pageItems(page: number, pages: number, siblings = 2): Array<number | 'gap'> {
  if (pages <= 0) return [];
  const current = Math.min(Math.max(1, page), pages);
  let from = Math.max(2, current - siblings);
  let to = Math.min(pages - 1, current + siblings);
  if (from === 3) from = 2;
  if (to === pages - 2) to = pages - 1;
  const out: Array<number | 'gap'> = [1];
  if (from > 2) out.push('gap');
  for (let n = from; n <= to; n++) out.push(n);
  if (to < pages - 1) out.push('gap');
  if (pages > 1) out.push(pages);
  return out;
}

/** The search parameters a page-jump form carries along (everything but the page itself). */
export function carriedParams(search: string): Array<[string, string]> {
  return [...new URLSearchParams(search)].filter(([k]) => k !== 'p');
}

/**
 * Numbered pagination: first / previous / page numbers / next / last as plain links, the position, and a GET
 * form to jump to a page (the other filters and the page size travel as hidden fields), so it all works without
 * JavaScript (the number field's min and max keep the jump in range).
 */
export function Pagination({ page, pages, total }: { page: number; pages: number; total: number }) {
  const { t } = useTranslation('common');
  const { pathname, search } = useLocation();
  const jumpId = useId();
  const last = Math.max(1, pages);
  const href = (p: number) => pageHref(pathname, search, p);
  const edge = (p: number, enabled: boolean, label: string, icon: React.ReactNode, rel?: string) =>
    enabled ? (
      <Link to={href(p)} className="btn btn-ghost icon-btn page-link" aria-label={label} rel={rel}>
        {icon}
      </Link>
    ) : (
      <span className="btn btn-ghost icon-btn page-link" data-disabled="true" aria-hidden="true">
        {icon}
      </span>
    );
  const iconProps = { 'aria-hidden': true, focusable: 'false', size: 16 } as const;
  return (
    <nav aria-label={t('pagination.label')} className="pagination" data-testid="pagination">
      <ul className="pagination-list">
        <li>{edge(1, page > 1, t('pagination.first'), <ChevronsLeft {...iconProps} />)}</li>
        <li>{edge(page - 1, page > 1, t('pagination.previous'), <ChevronLeft {...iconProps} />, 'prev')}</li>
        {pageItems(page, last).map((item, i) =>
          item === 'gap' ? (
            <li key={`gap-${i}`} className="page-gap" aria-hidden="true">
              …
            </li>
          ) : (
            <li key={item}>
              <Link
                to={href(item)}
                current={item === page}
                className="btn btn-ghost page-link"
                aria-label={t('pagination.goTo', { page: item })}
              >
                {item}
              </Link>
            </li>
          ),
        )}
        <li>{edge(page + 1, page < last, t('pagination.next'), <ChevronRight {...iconProps} />, 'next')}</li>
        <li>{edge(last, page < last, t('pagination.last'), <ChevronsRight {...iconProps} />)}</li>
      </ul>
      <span className="pagination-status">{t('pagination.page', { page, pages: last, total })}</span>
      {last > 1 ? (
        <Form method="get" action={pathname} className="pagination-jump">
          {carriedParams(search).map(([k, v], i) => (
            <input key={`${k}-${i}`} type="hidden" name={k} value={v} />
          ))}
          <label htmlFor={jumpId}>{t('pagination.jump')}</label>
          <input
            id={jumpId}
            type="number"
            name="p"
            min={1}
            max={last}
            step={1}
            required
            defaultValue={page}
            className="pagination-input"
            inputMode="numeric"
          />
          <button type="submit" className="btn btn-secondary">
            {t('pagination.go')}
          </button>
        </Form>
      ) : null}
    </nav>
  );
}
