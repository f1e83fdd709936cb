import type { LoaderFunctionArgs, MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { AdminContent } from '#app/components/admin-content.tsx';
import { getContent, getPublicStatus } from '#app/domain/status/status.server.ts';
import { getServices } from '#app/services.server.ts';

export const handle = { i18n: 'common' };

export async function loader({ context }: LoaderFunctionArgs) {
  const services = getServices(context);
  return { about: getContent(services, 'About'), systemName: getPublicStatus(services).system_name };
}

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.systemName ?? 'Switchyard' }];

export default function About() {
  const { about } = useLoaderData<typeof loader>();
  const { t } = useTranslation();
  return (
    <div className="page about">
      <h1>{t('about.title')}</h1>
      {about ? <AdminContent content={about} title={t('about.title')} /> : <p>{t('about.empty')}</p>}
    </div>
  );
}
