import { useTranslation } from 'react-i18next';
import type { PublicStatus } from '#app/domain/status/status.server.ts';

/**
 * Footer from the `Footer` option (admin-authored HTML, rendered as in new-api); a default line otherwise.
 * The status is rendered on the server, so new-api's post-load polling of the footer is not needed.
 */
export function Footer({
  status,
}: {
  status: Pick<PublicStatus, 'footer_html' | 'system_name' | 'version'>;
}) {
  const { t } = useTranslation();
  return (
    <footer className="footer">
      {status.footer_html ? (
        <div className="footer-html" dangerouslySetInnerHTML={{ __html: status.footer_html }} />
      ) : (
        <p>{t('footer.default', { name: status.system_name, version: status.version })}</p>
      )}
    </footer>
  );
}
