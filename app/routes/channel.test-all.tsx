import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from '@remix-run/node';
import { Form, useActionData, useLoaderData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { ChannelsErrorBoundary, TestResults } from '#app/domain/channels/channel-ui.tsx';
import { listTestableChannels } from '#app/domain/channels/channels.server.ts';
import { channelsPageCtx } from '#app/domain/channels/http.server.ts';
import { testChannel } from '#app/domain/channels/relay-ops.server.ts';
import { isDomainError } from '#app/domain/errors.ts';

export const handle = { i18n: ['common', 'channels'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Channel' }];

/** GET /channel/test-all: the channels a test-all covers (the JavaScript dialog loads this too). */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  return { title: ctx.t('channels:test.allTitle'), channels: await listTestableChannels(ctx) };
}

/**
 * POST /channel/test-all (without JavaScript): tests every channel in turn through the relay and answers the
 * result page once all are done (with JavaScript the dialog calls GET /api/channel/test/{id} one by one).
 */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  const results: { id: number; name: string; ok: boolean; time: number; message: string }[] = [];
  for (const c of await listTestableChannels(ctx)) {
    try {
      const r = await testChannel(ctx, c.id, '');
      results.push({ id: c.id, name: c.name, ok: r.success, time: r.time, message: r.message });
    } catch (error) {
      if (!isDomainError(error)) throw error;
      results.push({ id: c.id, name: c.name, ok: false, time: 0, message: error.message });
    }
  }
  return { results };
}

export default function TestAllPage() {
  const { channels } = useLoaderData<typeof loader>();
  const reply = useActionData<typeof action>();
  const navigation = useNavigation();
  const { t } = useTranslation('channels');
  const ok = reply?.results.filter((r) => r.ok).length ?? 0;
  return (
    <div className="page channels-page channel-form-page">
      <p>
        <Link to="/channel">{t('actions.back')}</Link>
      </p>
      <h1>{t('test.allTitle')}</h1>
      {reply ? (
        <>
          <p role="status" data-testid="test-all-progress">
            {t('test.done', { ok, failed: reply.results.length - ok })}
          </p>
          <TestResults results={reply.results} />
        </>
      ) : channels.length === 0 ? (
        <p>{t('test.none')}</p>
      ) : (
        <>
          <p>{t('test.allIntro')}</p>
          <p>{t('test.progress', { done: 0, total: channels.length })}</p>
          <Form method="post">
            <Button type="submit" variant="primary" isDisabled={navigation.state === 'submitting'}>
              {navigation.state === 'submitting' ? t('test.running') : t('actions.start')}
            </Button>
          </Form>
        </>
      )}
    </div>
  );
}

export { ChannelsErrorBoundary as ErrorBoundary };
