import {
  type ActionFunctionArgs,
  data,
  type LinksFunction,
  type LoaderFunctionArgs,
  type MetaFunction,
  redirect,
} from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { AdminContent } from '#app/components/admin-content.tsx';
import { CopyButton } from '#app/components/code-block.tsx';
import { DISMISS_NOTICE_INTENT, NoticeDialog } from '#app/components/notice-dialog.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { adminContentView } from '#app/domain/content/admin-content.ts';
import { dismissNoticeCookie, noticeDismissed, noticeHash } from '#app/domain/content/notice.server.ts';
import { homeView } from '#app/domain/content/pages.server.ts';
import { topNavItems } from '#app/domain/navigation/menu.ts';
import { pricingCtx } from '#app/domain/pricing/http.server.ts';
import { getContent, getPublicStatus } from '#app/domain/status/status.server.ts';
import { getServices } from '#app/services.server.ts';
import contentStyles from '#app/styles/content.css?url';

export const handle = { i18n: ['common', 'content'] };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: contentStyles }];

/**
 * GET / (public): HomePageContent (an https URL in a frame, HTML, or Markdown) or the default home: what the
 * gateway offers, its API address and a call to action. The Notice option shows as a dialog until closed.
 */
export async function loader({ context, request }: LoaderFunctionArgs) {
  const services = getServices(context);
  const status = getPublicStatus(services);
  const content = adminContentView(getContent(services, 'HomePageContent'));
  const noticeText = getContent(services, 'Notice');
  const notice =
    noticeText && !noticeDismissed(request, noticeText)
      ? { view: adminContentView(noticeText), hash: noticeHash(noticeText) }
      : null;
  const home = content
    ? null
    : await homeView(services, await pricingCtx(request, context, false), request.url);
  return {
    systemName: status.system_name,
    content,
    notice: notice?.view ? { view: notice.view, hash: notice.hash } : null,
    home,
    consoleTo: topNavItems(status).find((i) => i.key === 'console')?.to ?? '/token',
  };
}

/** POST / intent=dismiss-notice&hash: remember the closed notice (a cookie), then back to the home page. */
export async function action({ request }: ActionFunctionArgs) {
  const form = await request.formData();
  const cookie =
    form.get('intent') === DISMISS_NOTICE_INTENT
      ? dismissNoticeCookie(request, String(form.get('hash') ?? ''))
      : null;
  if (!cookie) return data({ ok: false }, { status: 400 });
  return redirect('/', { headers: { 'Set-Cookie': cookie } });
}

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.systemName ?? 'Switchyard' }];

function formatStart(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

export default function Home() {
  const { systemName, content, notice, home, consoleTo } = useLoaderData<typeof loader>();
  const { t } = useTranslation('content');
  return (
    <div className="page home">
      {notice ? <NoticeDialog view={notice.view} hash={notice.hash} /> : null}
      {content ? (
        <div className="home-content" data-testid="home-content">
          <AdminContent view={content} title={systemName} />
        </div>
      ) : null}
      {home ? (
        <div className="home-hero" data-testid="home-default">
          <section className="home-card" aria-labelledby="home-title">
            <h1 id="home-title">{t('home.welcome', { name: home.systemName })}</h1>
            <p>{t('home.intro', { name: home.systemName })}</p>
            <p className="inline-address">
              <span>{t('home.apiAddress')}:</span>
              <code data-testid="home-address">{home.address}</code>
              <CopyButton text={home.address} what={t('home.apiAddress')} />
            </p>
            <p className="home-actions">
              {home.signedIn ? (
                <Link to={consoleTo} className="btn btn-primary">
                  {t('home.cta.console')}
                </Link>
              ) : (
                <>
                  <Link to="/login" className="btn btn-primary">
                    {t('home.cta.login')}
                  </Link>
                  {home.selfUse ? null : (
                    <Link to="/register" className="btn btn-secondary">
                      {t('home.cta.register')}
                    </Link>
                  )}
                </>
              )}
              <Link to="/guide" className="btn btn-ghost">
                {t('home.cta.guide')}
              </Link>
              <Link to="/pricing" className="btn btn-ghost">
                {t('home.cta.pricing')}
              </Link>
            </p>
          </section>
          <section className="home-card" aria-labelledby="home-offers">
            <h2 id="home-offers">{t('home.offersTitle')}</h2>
            <ul className="home-offers">
              <li>{t('home.offers.api')}</li>
              <li>
                {home.modelCount > 0
                  ? t('home.offers.models', { count: home.modelCount })
                  : t('home.offers.modelsNone')}
              </li>
              <li>{t('home.offers.tokens')}</li>
              <li>{t('home.offers.billing')}</li>
            </ul>
          </section>
          <section className="home-card" aria-labelledby="home-info">
            <h2 id="home-info">{t('home.infoTitle')}</h2>
            <dl className="home-info">
              <dt>{t('home.baseUrl')}</dt>
              <dd>
                <code>{home.baseUrl}</code>
              </dd>
              <dt>{t('home.version')}</dt>
              <dd>{home.version}</dd>
              <dt>{t('home.since')}</dt>
              <dd>{formatStart(home.startTime)}</dd>
            </dl>
          </section>
        </div>
      ) : null}
    </div>
  );
}
