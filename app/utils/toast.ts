/** A flash message. `key` is an i18n key of the `common` namespace; `message` is literal server text. */
export type Toast = {
  id: string;
  type: 'success' | 'error' | 'info';
  key?: string;
  values?: Record<string, string | number>;
  message?: string;
};

export function isToast(value: unknown): value is Toast {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.id === 'string' &&
    (v.type === 'success' || v.type === 'error' || v.type === 'info') &&
    (typeof v.key === 'string' || typeof v.message === 'string')
  );
}
