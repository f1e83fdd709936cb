import type { LoaderFunctionArgs, MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { osKey } from '#app/domain/versions/constants.ts';
import { publicVersionsCtx } from '#app/domain/versions/http.server.ts';
import { formatDate, Md5, Remark } from '#app/domain/versions/version-ui.tsx';
import { latestVersions, versionView } from '#app/domain/versions/versions.server.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';

export const handle = { i18n: ['common', 'versions'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Download' }];

/** GET /download (public): the newest version of each OS (Windows, Mac Intel, Mac Apple) with link and MD5. */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await publicVersionsCtx(request, context);
  const latest = (await latestVersions(ctx)).map((l) => ({
    os_type: l.os_type,
    version: l.version ? versionView(l.version) : null,
  }));
  return { title: ctx.t('versions:download.title'), latest };
}

const CSS =
  '.download-page .download-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(16rem,1fr));gap:1rem}' +
  '.download-page .download-card{border:1px solid var(--border);border-radius:8px;padding:1rem;display:flex;flex-direction:column;gap:.5rem}' +
  '.download-page .download-card h2{margin:0;font-size:1.15rem}' +
  '.download-page .version-remark{overflow-wrap:anywhere}';

export default function DownloadPage() {
  const timeZone = useTimeZone();
  const { latest } = useLoaderData<typeof loader>();
  const { t } = useTranslation('versions');
  const any = latest.some((l) => l.version);
  return (
    <div className="page download-page">
      <style>{CSS}</style>
      <h1>{t('download.title')}</h1>
      {any ? (
        <>
          <p>{t('download.intro')}</p>
          <div className="download-grid">
            {latest.map(({ os_type, version: v }) => (
              <section
                key={os_type}
                className="download-card"
                data-os-type={os_type}
                aria-labelledby={`download-os-${os_type}`}
              >
                <h2 id={`download-os-${os_type}`}>{t(`os.${osKey(os_type)}`)}</h2>
                {v ? (
                  <>
                    <p style={{ margin: 0 }} data-testid="latest-version">
                      {t('download.latest', { version: v.version })}
                    </p>
                    <p style={{ margin: 0 }}>
                      <a
                        className="btn btn-primary"
                        href={v.downurl}
                        rel="noopener noreferrer nofollow"
                        data-testid="download-link"
                      >
                        {t('actions.download')}
                      </a>
                    </p>
                    {v.filemd5 ? <Md5 value={v.filemd5} label={<span>{t('download.md5')}:</span>} /> : null}
                    {v.force === 1 ? (
                      <p style={{ margin: 0, color: 'var(--danger)' }} data-testid="forced">
                        {t('download.forced')}
                      </p>
                    ) : null}
                    {v.forceids ? (
                      <p style={{ margin: 0 }}>{t('download.forcedFrom', { versions: v.forceids })}</p>
                    ) : null}
                    <small>{t('download.releasedAt', { date: formatDate(v.last_date, timeZone) })}</small>
                    <Remark html={v.remark_html} />
                  </>
                ) : (
                  <p style={{ margin: 0 }}>{t('download.noneForOs')}</p>
                )}
              </section>
            ))}
          </div>
        </>
      ) : (
        <p data-testid="download-empty">{t('download.empty')}</p>
      )}
    </div>
  );
}
