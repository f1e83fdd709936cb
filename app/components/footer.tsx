import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { PublicStatus } from '#app/domain/status/status.server.ts';

/** Seed 001 §2.2, §9: after load the footer is refreshed by polling the status 5 times, 200 ms apart. */
export const FOOTER_POLLS = 5;
export const FOOTER_POLL_MS = 200;

/**
 * Polls GET /api/status up to `polls` times, `intervalMs` apart, until one answer carries the status; calls
 * `onStatus` with it. Returns a function that stops polling.
 */
export function pollStatus(
  onStatus: (status: Pick<PublicStatus, 'footer_html'>) => void,
  polls = FOOTER_POLLS,
  intervalMs = FOOTER_POLL_MS,
  fetchFn: typeof fetch = fetch,
): () => void {
  let left = polls;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = async () => {
    if (stopped || left <= 0) return;
    left -= 1;
    try {
      const res = await fetchFn('/api/status', { headers: { Accept: 'application/json' } });
      const body = (await res.json()) as { success?: boolean; data?: Pick<PublicStatus, 'footer_html'> };
      if (!stopped && body.success && body.data && typeof body.data.footer_html === 'string') {
        onStatus(body.data);
        return;
      }
    } catch {
      // try again on the next tick
    }
    if (!stopped && left > 0) timer = setTimeout(tick, intervalMs);
  };
  timer = setTimeout(tick, intervalMs);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

/**
 * Footer from the `Footer` option (admin-authored HTML, sanitized by the server in `footer_html`, ADR 032); a
 * default line otherwise.
 * Rendered from the server's status, then refreshed in the browser as new-api does (5 polls at 200 ms), so a
 * page restored from the cache still shows the current footer.
 */
export function Footer({
  status,
}: {
  status: Pick<PublicStatus, 'footer_html' | 'system_name' | 'version'>;
}) {
  const { t } = useTranslation();
  const [footerHtml, setFooterHtml] = useState(status.footer_html);
  useEffect(() => setFooterHtml(status.footer_html), [status.footer_html]);
  useEffect(() => pollStatus((s) => setFooterHtml(s.footer_html)), []);
  return (
    <footer className="footer" data-testid="footer">
      {footerHtml ? (
        <div className="footer-html" dangerouslySetInnerHTML={{ __html: footerHtml }} />
      ) : (
        <p>{t('footer.default', { name: status.system_name, version: status.version })}</p>
      )}
    </footer>
  );
}
