/** Preferences the seeds "store locally"; kept in cookies so the server renders them without JavaScript. */
export const themes = ['light', 'dark'] as const;
export type Theme = (typeof themes)[number];

export const pageSizes = [10, 20, 50, 100] as const;
export type PageSize = (typeof pageSizes)[number];
export const defaultPageSize: PageSize = 10;

export type Preferences = {
  theme: Theme;
  /** null: not chosen yet, the status default (DefaultCollapseSidebar) applies */
  sidebarCollapsed: boolean | null;
  pageSize: PageSize;
};

export function isTheme(value: unknown): value is Theme {
  return value === 'light' || value === 'dark';
}

export function parsePageSize(value: unknown): PageSize | null {
  const n = Number(value);
  return (pageSizes as readonly number[]).includes(n) ? (n as PageSize) : null;
}
