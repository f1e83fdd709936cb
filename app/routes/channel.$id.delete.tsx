import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { ChannelsErrorBoundary } from '#app/domain/channels/channel-ui.tsx';
import { deleteChannel, getChannel } from '#app/domain/channels/channels.server.ts';
import { channelsPageCtx, parseId } from '#app/domain/channels/http.server.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { safeRedirectTo } from '#app/utils/preferences.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'channels'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Channel' }];

/** GET /channel/{id}/delete: the confirmation step of "delete" without JavaScript. */
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
    title: ctx.t('channels:confirm.deleteTitle'),
    channel: { id: row.id, name: row.name },
    redirectTo: safeRedirectTo(new URL(request.url).searchParams.get('redirectTo'), '/channel'),
  };
}

/** POST /channel/{id}/delete: deleteChannel (with its abilities), then back to the list with a toast. */
export async function action({ request, context, params }: ActionFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  const form = await request.formData();
  const back = safeRedirectTo(form.get('redirectTo'), '/channel');
  try {
    await deleteChannel(ctx, parseId(params.id));
  } catch (error) {
    if (isDomainError(error)) return redirectWithToast(back, { type: 'error', message: error.message });
    throw error;
  }
  return redirectWithToast(back, { type: 'success', message: ctx.t('channels:toast.deleted') });
}

export default function DeleteChannelPage() {
  const { channel, redirectTo } = useLoaderData<typeof loader>();
  const { t } = useTranslation('channels');
  return (
    <div className="page channels-page channel-form-page">
      <h1>{t('confirm.deleteTitle')}</h1>
      <p>{t('confirm.deleteBody', { name: channel.name, id: channel.id })}</p>
      <Form method="post" className="channel-dialog-actions">
        <input type="hidden" name="redirectTo" value={redirectTo} />
        <Link to={redirectTo} className="btn btn-secondary">
          {t('actions.cancel')}
        </Link>
        <Button type="submit" variant="primary">
          {t('actions.confirmDelete')}
        </Button>
      </Form>
    </div>
  );
}

export { ChannelsErrorBoundary as ErrorBoundary };
