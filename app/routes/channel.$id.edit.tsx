import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useActionData, useLoaderData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import {
  ChannelFields,
  type ChannelFormValues,
  ChannelStatusTag,
  ChannelsErrorBoundary,
  FormError,
  valuesFromChannel,
  valuesFromInput,
} from '#app/domain/channels/channel-ui.tsx';
import {
  channelFormInput,
  getChannel,
  groupOptions,
  listChannelModels,
  parseInput,
  updateChannel,
  updateChannelSchema,
} from '#app/domain/channels/channels.server.ts';
import { channelsPageCtx, parseId } from '#app/domain/channels/http.server.ts';
import { channelTypeChoice } from '#app/domain/channels/served-types.server.ts';
import { InputError, isDomainError } from '#app/domain/errors.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { createToastHeader, redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'channels'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Channel' }];

export type SaveReply = {
  ok: boolean;
  error: string | null;
  values: ChannelFormValues;
  fieldErrors: Record<string, string[]>;
};

/** GET /channel/{id}/edit: the edit form (the page behind the edit drawer, used without JavaScript). */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  let channel: Awaited<ReturnType<typeof getChannel>>;
  try {
    channel = await getChannel(ctx, parseId(params.id));
  } catch (error) {
    if (isDomainError(error) && error.status === 404) throw data(null, { status: 404 });
    throw error;
  }
  return {
    title: ctx.t('channels:form.editTitle'),
    id: channel.id,
    status: channel.status,
    otherInfo: channel.other_info,
    values: valuesFromChannel(channel),
    groups: await groupOptions(ctx),
    models: await listChannelModels(ctx),
    types: await channelTypeChoice(ctx, channel.type),
    redirectTo: safeRedirect(new URL(request.url).searchParams.get('redirectTo'), '/channel'),
  };
}

/** POST /channel/{id}/edit: the same updateChannel as PUT /api/channel/ (a blank key keeps the saved one). */
export async function action({ request, context, params }: ActionFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  const formData = await request.formData();
  const input = { ...channelFormInput(formData), id: parseId(params.id) };
  const values = valuesFromInput(input);
  try {
    await updateChannel(ctx, parseInput(ctx, updateChannelSchema, input));
  } catch (error) {
    if (isDomainError(error) && error.status === 404) throw data(null, { status: 404 });
    if (isDomainError(error) && error.status < 500)
      return data<SaveReply>(
        {
          ok: false,
          error: error.message,
          values,
          fieldErrors: error instanceof InputError ? error.fieldErrors : {},
        },
        { status: 400 },
      );
    throw error;
  }
  const toast = { type: 'success' as const, message: ctx.t('channels:toast.updated') };
  if (formData.get('_fetcher') === '1')
    return data<SaveReply>(
      { ok: true, error: null, values, fieldErrors: {} },
      { headers: { 'Set-Cookie': await createToastHeader(toast) } },
    );
  return redirectWithToast(safeRedirect(formData.get('redirectTo'), '/channel'), toast);
}

export default function EditChannelPage() {
  const loaded = useLoaderData<typeof loader>();
  const reply = useActionData<typeof action>();
  const { t } = useTranslation('channels');
  const navigation = useNavigation();
  return (
    <div className="page channels-page channel-form-page">
      <p>
        <Link to={loaded.redirectTo}>{t('actions.back')}</Link>
      </p>
      <h1>{t('form.editTitle')}</h1>
      <p>
        #{loaded.id} <ChannelStatusTag status={loaded.status} otherInfo={loaded.otherInfo} />
      </p>
      <Form method="post">
        <input type="hidden" name="redirectTo" value={loaded.redirectTo} />
        <ChannelFields
          mode="edit"
          values={reply?.values ?? loaded.values}
          groupOptions={loaded.groups}
          modelOptions={loaded.models}
          types={loaded.types.options}
          typesSource={loaded.types.source}
          fieldErrors={reply?.fieldErrors}
        />
        <FormError message={reply?.error} />
        <div className="channel-dialog-actions">
          <Link to={loaded.redirectTo} className="btn btn-secondary">
            {t('actions.cancel')}
          </Link>
          <Button type="submit" variant="primary" isDisabled={navigation.state === 'submitting'}>
            {t('actions.save')}
          </Button>
        </div>
      </Form>
    </div>
  );
}

export { ChannelsErrorBoundary as ErrorBoundary };
