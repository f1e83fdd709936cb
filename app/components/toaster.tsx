import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { createApiClient } from '#app/utils/api-client.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import type { Toast } from '#app/utils/toast.ts';

type ToastApi = { notify: (toast: Omit<Toast, 'id'>) => void };
const ToastContext = createContext<ToastApi>({ notify: () => {} });

/**
 * Holds the visible toasts: the flash toast the server rendered (works without JavaScript) plus any that
 * client code raises (api-client errors). The region is an aria-live status region.
 */
export function ToastProvider({ flash, children }: { flash: Toast | null; children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>(flash ? [flash] : []);

  // A new flash (after a navigation) joins the list once.
  useEffect(() => {
    if (!flash) return;
    setToasts((list) => (list.some((t) => t.id === flash.id) ? list : [...list, flash]));
  }, [flash]);

  const notify = useCallback((toast: Omit<Toast, 'id'>) => {
    setToasts((list) => [...list, { ...toast, id: crypto.randomUUID() }]);
  }, []);
  const dismiss = useCallback((id: string) => setToasts((list) => list.filter((t) => t.id !== id)), []);
  const api = useMemo(() => ({ notify }), [notify]);

  return (
    <ToastContext.Provider value={api}>
      {children}
      <ToastRegion toasts={toasts} dismiss={dismiss} />
    </ToastContext.Provider>
  );
}

function ToastItem({ toast, dismiss }: { toast: Toast; dismiss: (id: string) => void }) {
  const { t } = useTranslation();
  const hydrated = useHydrated();
  useEffect(() => {
    const timer = setTimeout(() => dismiss(toast.id), toast.type === 'error' ? 8000 : 4000);
    return () => clearTimeout(timer);
  }, [toast, dismiss]);
  const text = toast.key ? t(toast.key, toast.values) : (toast.message ?? '');
  return (
    <li className={`toast toast-${toast.type}`} data-testid="toast">
      <span>{text}</span>
      {hydrated ? (
        <button
          type="button"
          className="toast-close"
          aria-label={t('toast.dismiss')}
          onClick={() => dismiss(toast.id)}
        >
          ×
        </button>
      ) : null}
    </li>
  );
}

function ToastRegion({ toasts, dismiss }: { toasts: Toast[]; dismiss: (id: string) => void }) {
  const { t } = useTranslation();
  return (
    <section className="toast-region" aria-label={t('toast.region')} aria-live="polite" role="status">
      <ul>
        {toasts.map((toast) => (
          <ToastItem key={toast.id} toast={toast} dismiss={dismiss} />
        ))}
      </ul>
    </section>
  );
}

export function useToast(): ToastApi {
  return useContext(ToastContext);
}

/** The shared api-client wired to i18n, the toast region and full-page navigation (401). */
export function useApiClient() {
  const { t } = useTranslation();
  const { notify } = useToast();
  return useMemo(
    () =>
      createApiClient({
        t: (key, options) => t(key, options),
        notify: (message) => notify({ type: 'error', message }),
        redirect: (url) => window.location.assign(url),
      }),
    [t, notify],
  );
}
