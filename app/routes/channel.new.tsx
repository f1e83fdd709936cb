import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useActionData, useLoaderData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import {
  ChannelFields,
  ChannelsErrorBoundary,
  EMPTY_CHANNEL_FORM,
  FormError,
  valuesFromInput,
} from '#app/domain/channels/channel-ui.tsx';
import {
  channelFormInput,
  createChannelSchema,
  createChannels,
  groupOptions,
  listChannelModels,
  parseInput,
} from '#app/domain/channels/channels.server.ts';
import { channelsPageCtx } from '#app/domain/channels/http.server.ts';
import { fetchModelsForForm } from '#app/domain/channels/relay-ops.server.ts';
import { channelTypeChoice } from '#app/domain/channels/served-types.server.ts';
import { InputError, isDomainError } from '#app/domain/errors.ts';
import type { SaveReply } from '#app/routes/channel.$id.edit.tsx';
import { createToastHeader, redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'channels'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Channel' }];

/** GET /channel/new: the create form (the page behind the create drawer, used without JavaScript). */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  return {
    title: ctx.t('channels:form.addTitle'),
    values: EMPTY_CHANNEL_FORM,
    groups: await groupOptions(ctx),
    models: await listChannelModels(ctx),
    types: await channelTypeChoice(ctx),
  };
}

/** POST /channel/new: the same createChannels as POST /api/channel/ (mode=batch: one channel per key line). */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  const formData = await request.formData();
  const input = channelFormInput(formData);
  const values = valuesFromInput(input);
  // Without JavaScript the form's "fetch model list" button posts here: the form comes back with the upstream's
  // models filled in (the key is never echoed, so it has to be typed again before saving).
  if (formData.get('intent') === 'fetch_models') return fetchModelsReply(ctx, input, values);
  let ids: number[];
  try {
    ids = await createChannels(ctx, parseInput(ctx, createChannelSchema, input));
  } catch (error) {
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
  const toast = { type: 'success' as const, message: ctx.t('channels:toast.created', { count: ids.length }) };
  if (formData.get('_fetcher') === '1')
    return data<SaveReply>(
      { ok: true, error: null, values, fieldErrors: {} },
      { headers: { 'Set-Cookie': await createToastHeader(toast) } },
    );
  return redirectWithToast('/channel', toast);
}

type FetchReply = SaveReply & { notice?: string };

async function fetchModelsReply(
  ctx: Awaited<ReturnType<typeof channelsPageCtx>>,
  input: Record<string, unknown>,
  values: SaveReply['values'],
) {
  const key = String(input.key ?? '')
    .split('\n')[0]
    ?.trim();
  const refuse = (error: string) =>
    data<FetchReply>({ ok: false, error, values, fieldErrors: {} }, { status: 400 });
  if (!key) return refuse(ctx.t('channels:errors.keyRequiredForFetch'));
  try {
    const models = await fetchModelsForForm(ctx, { ...input, key });
    return data<FetchReply>({
      ok: false,
      error: null,
      values: { ...values, models },
      fieldErrors: {},
      notice: ctx.t('channels:form.modelsLoaded', { count: models.length }),
    });
  } catch (error) {
    if (!isDomainError(error)) throw error;
    return refuse(`${ctx.t('channels:errors.fetchModelsFailed')}: ${error.message}`);
  }
}

export default function NewChannelPage() {
  const loaded = useLoaderData<typeof loader>();
  const reply = useActionData<typeof action>() as FetchReply | undefined;
  const { t } = useTranslation('channels');
  const navigation = useNavigation();
  return (
    <div className="page channels-page channel-form-page">
      <p>
        <Link to="/channel">{t('actions.back')}</Link>
      </p>
      <h1>{t('form.addTitle')}</h1>
      <Form method="post">
        {/* Enter in a field submits with the first submit button: make that "save", not "fetch models". */}
        <button type="submit" className="sr-only" tabIndex={-1} aria-hidden="true" />
        <ChannelFields
          // a fetch answered in place (JavaScript on this page) must show the fetched models: remount
          key={reply?.notice ?? 'form'}
          mode="create"
          values={reply?.values ?? loaded.values}
          groupOptions={loaded.groups}
          modelOptions={loaded.models}
          types={loaded.types.options}
          typesSource={loaded.types.source}
          fieldErrors={reply?.fieldErrors}
          fetchModelsSubmit
          notice={reply?.notice}
        />
        <FormError message={reply?.error} />
        <div className="channel-dialog-actions">
          <Link to="/channel" className="btn btn-secondary">
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
