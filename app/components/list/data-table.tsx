import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

/**
 * A horizontally scrollable box for a wide table: on narrow screens a visible hint says it scrolls and shadows
 * mark the edges with more columns; it takes keyboard focus so arrow keys scroll it. The page itself never
 * scrolls sideways.
 */
export function TableScroll({ children }: { children: ReactNode }) {
  const { t } = useTranslation('common');
  return (
    <>
      <p className="scroll-hint" aria-hidden="true">
        {t('table.scrollHint')}
      </p>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard */}
      <section className="list-table-wrap" tabIndex={0} aria-label={t('table.scrollRegion')}>
        {children}
      </section>
    </>
  );
}

/**
 * An admin list table: column headers, an "empty" row when there are no rows, then the rows (`children`).
 * `className` names the area's table (e.g. `users-table`, which the tests and the area's styles use).
 * With `rowGroups`, `children` are <tbody> elements (one per record, e.g. a row and its details row).
 */
export function DataTable({
  className,
  columns,
  isEmpty,
  empty,
  rowGroups,
  children,
}: {
  className: string;
  columns: readonly ReactNode[];
  isEmpty: boolean;
  empty: ReactNode;
  rowGroups?: boolean;
  children: ReactNode;
}) {
  const count = columns.filter((c) => c !== null && c !== false).length;
  const emptyRow = isEmpty ? (
    <tr>
      <td colSpan={count}>{empty}</td>
    </tr>
  ) : null;
  return (
    <TableScroll>
      <table className={`table list-table ${className}`}>
        <thead>
          <tr>
            {columns.map((c, i) =>
              c === null || c === false ? null : (
                <th key={i} scope="col">
                  {c}
                </th>
              ),
            )}
          </tr>
        </thead>
        {rowGroups ? (
          <>
            {emptyRow ? <tbody>{emptyRow}</tbody> : null}
            {children}
          </>
        ) : (
          <tbody>
            {emptyRow}
            {children}
          </tbody>
        )}
      </table>
    </TableScroll>
  );
}
