import { data, type LinksFunction, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { CodeBlock, CopyButton } from '#app/components/code-block.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { guideView } from '#app/domain/content/pages.server.ts';
import { pricingCtx } from '#app/domain/pricing/http.server.ts';
import { getServices } from '#app/services.server.ts';
import contentStyles from '#app/styles/content.css?url';

export const handle = { i18n: ['common', 'content'] };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: contentStyles }];

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Guide' }];

/**
 * GET /guide (public): the beginner guide, generated from this site: its API address, how to get a token, and a
 * first call with curl, Python and JavaScript using a model the site serves (the data of GET /api/pricing).
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await pricingCtx(request, context, false);
  const guide = await guideView(getServices(context), ctx, request.url);
  return data(
    { title: ctx.t?.('content:guide.title') ?? 'Guide', guide },
    { headers: { 'Cache-Control': 'no-store' } },
  );
}

export default function GuidePage() {
  const { guide } = useLoaderData<typeof loader>();
  const { t } = useTranslation('content');
  const s = guide.snippets;
  return (
    <article className="page doc-page guide-page">
      <h1>{t('guide.title')}</h1>
      <p>{t('guide.intro', { name: guide.systemName })}</p>

      <section aria-labelledby="guide-step1">
        <h2 id="guide-step1">{t('guide.step1')}</h2>
        <p>{t('guide.step1Body')}</p>
        <p className="inline-address">
          <span>{t('home.apiAddress')}:</span>
          <code data-testid="guide-address">{guide.address}</code>
          <CopyButton text={guide.address} what={t('home.apiAddress')} />
        </p>
        <p className="inline-address">
          <span>{t('home.baseUrl')}:</span>
          <code data-testid="guide-base-url">{guide.baseUrl}</code>
          <CopyButton text={guide.baseUrl} what={t('home.baseUrl')} />
        </p>
      </section>

      <section aria-labelledby="guide-step2">
        <h2 id="guide-step2">{t('guide.step2')}</h2>
        <p>{t('guide.step2Body')}</p>
        {guide.signedIn ? (
          <p>{t('guide.step2Signed', { count: guide.enabledTokens ?? 0 })}</p>
        ) : (
          <p>
            {t('guide.step2Visitor')} <Link to="/login?redirectTo=%2Ftoken">{t('home.cta.login')}</Link>
          </p>
        )}
        <p>
          <Link to="/token" className="btn btn-primary">
            {t('guide.createToken')}
          </Link>
        </p>
      </section>

      <section aria-labelledby="guide-step3">
        <h2 id="guide-step3">{t('guide.step3')}</h2>
        <p data-testid="guide-model-note">
          {guide.model
            ? t('guide.step3Body', { model: guide.model })
            : t('guide.step3NoModel', { model: guide.exampleModel })}
        </p>
        <CodeBlock title={t('guide.env')} code={s.env} />
        <CodeBlock title={t('guide.curl')} code={s.curl} testId="snippet-curl" />
        <CodeBlock title={t('guide.python')} code={s.python} testId="snippet-python" />
        <CodeBlock title={t('guide.javascript')} code={s.javascript} testId="snippet-javascript" />
        <h3>{t('guide.stream')}</h3>
        <p>{t('guide.streamBody')}</p>
        <CodeBlock title={`${t('guide.curl')} · ${t('guide.stream')}`} code={s.stream} />
        <h3>{t('guide.listModels')}</h3>
        <CodeBlock title={`${t('guide.curl')} · /v1/models`} code={s.listModels} />
      </section>

      {guide.modelCount > 0 ? (
        <section aria-labelledby="guide-models">
          <h2 id="guide-models">{t('guide.more')}</h2>
          <p>{t('guide.moreBody', { count: guide.modelCount })}</p>
          <ul className="doc-models">
            {guide.models.map((m) => (
              <li key={m}>
                <code>{m}</code>
              </li>
            ))}
          </ul>
          <p>
            <Link to="/pricing">{t('guide.pricing')}</Link>
          </p>
        </section>
      ) : null}

      <p>
        {t('guide.next')} <Link to="/usebook">{t('guide.usebook')}</Link>
      </p>
    </article>
  );
}
