import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useDeleteTexts } from '#app/components/list/confirm-action.tsx';
import { ConfirmPage } from '#app/components/list/confirm-page.tsx';
import { ChannelsErrorBoundary } from '#app/domain/channels/channel-ui.tsx';
import { deleteChannel, getChannel } from '#app/domain/channels/channels.server.ts';
import { channelsPageCtx, parseId } from '#app/domain/channels/http.server.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
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
    redirectTo: safeRedirect(new URL(request.url).searchParams.get('redirectTo'), '/channel'),
  };
}

/** POST /channel/{id}/delete: deleteChannel (with its abilities), then back to the list with a toast. */
export async function action({ request, context, params }: ActionFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  const form = await request.formData();
  const back = safeRedirect(form.get('redirectTo'), '/channel');
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
  return (
    <ConfirmPage
      className="channels-page channel-form-page"
      redirectTo={redirectTo}
      {...useDeleteTexts('channels', { name: channel.name, id: channel.id })}
    />
  );
}

export { ChannelsErrorBoundary as ErrorBoundary };
