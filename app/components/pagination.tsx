import { Link, useLocation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';

/** The current list URL with page `p` (search and page size kept), for server-side pagination links. */
export function pageHref(pathname: string, search: string, p: number): string {
  const params = new URLSearchParams(search);
  params.set('p', String(p));
  return `${pathname}?${params}`;
}

/** Previous / "page N of M, T in total" / next, as plain links so it works without JavaScript. */
export function Pagination({ page, pages, total }: { page: number; pages: number; total: number }) {
  const { t } = useTranslation('common');
  const { pathname, search } = useLocation();
  return (
    <nav
      aria-label={t('pagination.label')}
      style={{ display: 'flex', gap: '0.75rem', alignItems: 'center', marginTop: '1rem' }}
    >
      {page > 1 ? (
        <Link to={pageHref(pathname, search, page - 1)} className="btn btn-ghost">
          {t('pagination.previous')}
        </Link>
      ) : null}
      <span>{t('pagination.page', { page, pages, total })}</span>
      {page < pages ? (
        <Link to={pageHref(pathname, search, page + 1)} className="btn btn-ghost">
          {t('pagination.next')}
        </Link>
      ) : null}
    </nav>
  );
}
