import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { ChannelsErrorBoundary } from '#app/domain/channels/channel-ui.tsx';
import { getChannel, splitList } from '#app/domain/channels/channels.server.ts';
import { channelsPageCtx, parseId } from '#app/domain/channels/http.server.ts';
import { testChannel } from '#app/domain/channels/relay-ops.server.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'channels'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Channel' }];

/**
 * GET /channel/{id}/test: the model picker of a channel test without JavaScript. (The file name escapes `test`:
 * remix.config ignores route files matching `*.test.*`.)
 */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  let row: Awaited<ReturnType<typeof getChannel>>;
  try {
    row = await getChannel(ctx, parseId(params.id));
  } catch (error) {
    if (isDomainError(error) && error.status === 404) throw data(null, { status: 404 });
    throw error;
  }
  return {
    title: ctx.t('channels:test.pickTitle', { name: row.name }),
    channel: { id: row.id, name: row.name, testModel: row.test_model, models: splitList(row.models) },
    redirectTo: safeRedirect(new URL(request.url).searchParams.get('redirectTo'), '/channel'),
  };
}

/** POST /channel/{id}/test {model}: the relay tests the channel; back to the list with the result as a toast. */
export async function action({ request, context, params }: ActionFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  const form = await request.formData();
  const back = safeRedirect(form.get('redirectTo'), '/channel');
  const id = parseId(params.id);
  try {
    const { name } = await getChannel(ctx, id);
    const r = await testChannel(ctx, id, String(form.get('model') ?? '').trim());
    return redirectWithToast(
      back,
      r.success
        ? { type: 'success', message: ctx.t('channels:test.result', { name, time: r.time.toFixed(2) }) }
        : { type: 'error', message: ctx.t('channels:test.failed', { name, message: r.message }) },
    );
  } catch (error) {
    if (isDomainError(error)) return redirectWithToast(back, { type: 'error', message: error.message });
    throw error;
  }
}

export default function TestChannelPage() {
  const { channel, redirectTo } = useLoaderData<typeof loader>();
  const { t } = useTranslation('channels');
  return (
    <div className="page channels-page channel-form-page">
      <h1>{t('test.pickTitle', { name: channel.name })}</h1>
      <Form method="post">
        <input type="hidden" name="redirectTo" value={redirectTo} />
        <div className="channel-field">
          <label htmlFor="test-model">{t('test.model')}</label>
          <select id="test-model" name="model" defaultValue="" className="channel-input">
            <option value="">
              {t('test.defaultModel', { model: channel.testModel || channel.models[0] || '' })}
            </option>
            {channel.models.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </div>
        <div className="channel-dialog-actions">
          <Link to={redirectTo} className="btn btn-secondary">
            {t('actions.cancel')}
          </Link>
          <Button type="submit" variant="primary">
            {t('actions.test')}
          </Button>
        </div>
      </Form>
    </div>
  );
}

export { ChannelsErrorBoundary as ErrorBoundary };
