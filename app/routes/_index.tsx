import type { LoaderFunctionArgs, MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { AdminContent } from '#app/components/admin-content.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { topNavItems } from '#app/domain/navigation/menu.ts';
import { getContent, getPublicStatus } from '#app/domain/status/status.server.ts';
import { getServices } from '#app/services.server.ts';

export const handle = { i18n: 'common' };

export async function loader({ context, request }: LoaderFunctionArgs) {
  const services = getServices(context);
  const status = getPublicStatus(services);
  return {
    homePageContent: getContent(services, 'HomePageContent'),
    notice: getContent(services, 'Notice'),
    systemName: status.system_name,
    apiBase: status.server_address || new URL(request.url).origin,
    consoleTo: topNavItems(status).find((i) => i.key === 'console')?.to ?? '/token',
  };
}

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.systemName ?? 'Switchyard' }];

export default function Home() {
  const { homePageContent, notice, systemName, apiBase, consoleTo } = useLoaderData<typeof loader>();
  const { t } = useTranslation();
  return (
    <div className="page home">
      {notice ? (
        <section className="notice" aria-label={t('home.notice')}>
          <AdminContent content={notice} title={t('home.notice')} />
        </section>
      ) : null}
      {homePageContent ? (
        <AdminContent content={homePageContent} title={t('home.title')} />
      ) : (
        <section className="hero">
          <h1>{t('home.welcome', { name: systemName })}</h1>
          <p>{t('home.intro', { name: systemName })}</p>
          <p>
            {t('home.apiBase')} <code>{apiBase}</code>
          </p>
          <p>
            <Link to={consoleTo} className="btn btn-primary">
              {t('home.start')}
            </Link>
          </p>
        </section>
      )}
    </div>
  );
}
