import type { LinksFunction, LoaderFunctionArgs, MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { AdminContent } from '#app/components/admin-content.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { adminContentView } from '#app/domain/content/admin-content.ts';
import { getContent, getPublicStatus } from '#app/domain/status/status.server.ts';
import { getServices } from '#app/services.server.ts';
import contentStyles from '#app/styles/content.css?url';

export const handle = { i18n: ['common', 'content'] };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: contentStyles }];

/** GET /about (public): the About option (an https URL in a frame, HTML, or Markdown), else a short default. */
export async function loader({ context }: LoaderFunctionArgs) {
  const services = getServices(context);
  const status = getPublicStatus(services);
  return {
    about: adminContentView(getContent(services, 'About')),
    systemName: status.system_name,
    version: status.version,
  };
}

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.systemName ?? 'Switchyard' }];

export default function About() {
  const { about, systemName, version } = useLoaderData<typeof loader>();
  const { t } = useTranslation('content');
  if (about?.kind === 'url') {
    return (
      <div className="page about">
        <h1 className="sr-only">{t('about.title')}</h1>
        <AdminContent view={about} title={t('about.title')} />
      </div>
    );
  }
  return (
    <div className="page doc-page about">
      <h1>{t('about.title')}</h1>
      {about ? (
        <AdminContent view={about} title={t('about.title')} />
      ) : (
        <div data-testid="about-default">
          <p>{t('about.defaultIntro', { name: systemName })}</p>
          <p>
            {t('about.defaultHelp')} <Link to="/guide">{t('guide.title')}</Link> ·{' '}
            <Link to="/usebook">{t('usebook.title')}</Link>
          </p>
          <p>{t('about.version', { version })}</p>
        </div>
      )}
    </div>
  );
}
