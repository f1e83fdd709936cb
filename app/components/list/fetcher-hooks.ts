import { useFetcher } from '@remix-run/react';
import { useEffect, useRef } from 'react';

/**
 * Loads `url` (a no-JavaScript page's loader) through a fetcher once, when a drawer or dialog first renders: the
 * JavaScript forms reuse the pages' data instead of a second endpoint.
 */
export function useLoadOnce<T>(url: string) {
  const fetcher = useFetcher<T>();
  const requested = useRef(false);
  useEffect(() => {
    if (requested.current) return;
    requested.current = true;
    fetcher.load(url);
  }, [url, fetcher]);
  return fetcher;
}

/** Closes a drawer once its fetcher's submission succeeded (the reply carries ok: true). */
export function useCloseOnSuccess(
  fetcher: { state: string; data?: { ok?: boolean } | null },
  close: () => void,
) {
  useEffect(() => {
    if (fetcher.state === 'idle' && fetcher.data?.ok) close();
  }, [fetcher.state, fetcher.data, close]);
}
