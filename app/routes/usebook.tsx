import { data, type LinksFunction, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Link } from '#app/components/ui/link.tsx';
import { usebookView } from '#app/domain/content/pages.server.ts';
import { pricingCtx } from '#app/domain/pricing/http.server.ts';
import { getServices } from '#app/services.server.ts';
import contentStyles from '#app/styles/content.css?url';

export const handle = { i18n: ['common', 'content'] };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: contentStyles }];

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Manual' }];

/**
 * GET /usebook (public): the user manual, generated from the current settings: quota unit and top-up options,
 * tokens, the viewer's groups and ratios with a priced example, logs, playground and chats, common errors
 * (with the site's own rate limit when one is set).
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await pricingCtx(request, context, false);
  const book = await usebookView(getServices(context), ctx);
  return data(
    { title: ctx.t?.('content:usebook.title') ?? 'Manual', book },
    { headers: { 'Cache-Control': 'no-store' } },
  );
}

const SECTIONS = ['account', 'quota', 'tokens', 'groups', 'logs', 'tools', 'errors'] as const;

/** Up to 6 decimals, trailing zeros dropped, as /pricing shows prices. */
const usd = (value: number) => `$${Number(value.toFixed(6))}`;

export default function UsebookPage() {
  const { book } = useLoaderData<typeof loader>();
  const { t } = useTranslation('content');
  const st = book.status;
  return (
    <article className="page doc-page usebook-page">
      <h1>{t('usebook.title')}</h1>
      <p>{t('usebook.intro', { name: book.systemName })}</p>
      <nav aria-labelledby="usebook-toc">
        <h2 id="usebook-toc">{t('usebook.toc')}</h2>
        <ol>
          {SECTIONS.map((id) => (
            <li key={id}>
              <a href={`#${id}`}>{t(`usebook.${id}.title`)}</a>
            </li>
          ))}
        </ol>
      </nav>

      <section id="account" aria-labelledby="account-h">
        <h2 id="account-h">{t('usebook.account.title')}</h2>
        <p>{t('usebook.account.body')}</p>
        {st.self_use_mode_enabled ? (
          <p>{t('usebook.account.selfUse')}</p>
        ) : book.signedIn ? null : (
          <p>
            <Link to="/register">{t('usebook.account.register')}</Link>
          </p>
        )}
      </section>

      <section id="quota" aria-labelledby="quota-h">
        <h2 id="quota-h">{t('usebook.quota.title')}</h2>
        <p data-testid="usebook-unit">
          {t('usebook.quota.unit', { perUnit: st.quota_per_unit.toLocaleString('en-US') })}{' '}
          {st.display_in_currency ? t('usebook.quota.currency') : t('usebook.quota.raw')}
        </p>
        <p>{t('usebook.quota.redeem')}</p>
        {st.top_up_link ? (
          <p>
            {t('usebook.quota.buyCodes')}{' '}
            <a href={st.top_up_link} target="_blank" rel="noreferrer noopener">
              {st.top_up_link}
            </a>
          </p>
        ) : null}
        <p>
          {st.enable_online_topup
            ? t('usebook.quota.online', { min: st.min_topup })
            : t('usebook.quota.noOnline')}
        </p>
        <p>
          <Link to="/topup">{t('usebook.quota.wallet')}</Link>
        </p>
      </section>

      <section id="tokens" aria-labelledby="tokens-h">
        <h2 id="tokens-h">{t('usebook.tokens.title')}</h2>
        <p>{t('usebook.tokens.body')}</p>
        <ul>
          {(['quota', 'expiry', 'models', 'ips', 'group'] as const).map((f) => (
            <li key={f}>{t(`usebook.tokens.fields.${f}`)}</li>
          ))}
        </ul>
        <p>{t('usebook.tokens.statuses')}</p>
        <p>
          <Link to="/token">{t('usebook.tokens.manage')}</Link>
        </p>
      </section>

      <section id="groups" aria-labelledby="groups-h">
        <h2 id="groups-h">{t('usebook.groups.title')}</h2>
        <p>{t('usebook.groups.body')}</p>
        {book.groups.length > 0 ? (
          <div style={{ overflowX: 'auto' }}>
            <table className="doc-table" data-testid="usebook-groups">
              <thead>
                <tr>
                  <th scope="col">{t('usebook.groups.group')}</th>
                  <th scope="col">{t('usebook.groups.description')}</th>
                  <th scope="col">{t('usebook.groups.ratio')}</th>
                </tr>
              </thead>
              <tbody>
                {book.groups.map((g) => (
                  <tr key={g.name}>
                    <td>{g.name}</td>
                    <td>{g.desc}</td>
                    <td>{g.ratio}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        {book.example ? (
          <p data-testid="usebook-example">
            {book.example.quotaType === 1
              ? t('usebook.groups.exampleCall', {
                  model: book.example.model,
                  group: book.example.group,
                  price: usd(book.example.callUsd),
                })
              : t('usebook.groups.example', {
                  model: book.example.model,
                  group: book.example.group,
                  input: usd(book.example.inputUsd),
                  output: usd(book.example.outputUsd),
                })}
          </p>
        ) : null}
        <p>
          <Link to="/pricing">{t('usebook.groups.pricing')}</Link>
        </p>
      </section>

      <section id="logs" aria-labelledby="logs-h">
        <h2 id="logs-h">{t('usebook.logs.title')}</h2>
        <p>{t('usebook.logs.body')}</p>
        {st.enable_data_export ? <p>{t('usebook.logs.dashboard')}</p> : null}
        <p className="home-actions">
          <Link to="/log">{t('usebook.logs.logs')}</Link>
          {st.enable_data_export ? <Link to="/detail">{t('usebook.logs.detail')}</Link> : null}
        </p>
      </section>

      <section id="tools" aria-labelledby="tools-h">
        <h2 id="tools-h">{t('usebook.tools.title')}</h2>
        <p>
          {t('usebook.tools.playground')} <Link to="/playground">{t('usebook.tools.openPlayground')}</Link>
        </p>
        {book.chats.length > 0 ? (
          <>
            <p>{t('usebook.tools.chats')}</p>
            <ul>
              {book.chats.map((c) => (
                <li key={c.id}>
                  <Link to={`/chat/${c.id}`}>{c.name}</Link>
                </li>
              ))}
            </ul>
          </>
        ) : null}
      </section>

      <section id="errors" aria-labelledby="errors-h">
        <h2 id="errors-h">{t('usebook.errors.title')}</h2>
        <ul>
          <li>{t('usebook.errors.unauthorized')}</li>
          <li>{t('usebook.errors.quota')}</li>
          <li>{t('usebook.errors.model')}</li>
          <li data-testid="usebook-ratelimit">
            {book.rateLimit
              ? t('usebook.errors.rateLimit', book.rateLimit)
              : t('usebook.errors.rateLimitGeneric')}
          </li>
        </ul>
      </section>
    </article>
  );
}
