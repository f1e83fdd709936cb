import { type ActionFunctionArgs, data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { Form, useActionData, useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { ChannelsErrorBoundary, FormError, TagFields } from '#app/domain/channels/channel-ui.tsx';
import { editTag, parseInput, tagEditSchema } from '#app/domain/channels/channels.server.ts';
import { channelsPageCtx } from '#app/domain/channels/http.server.ts';
import { isDomainError } from '#app/domain/errors.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { createToastHeader, redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'channels'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Channel' }];

/** GET /channel/tag?tag=: the tag edit form without JavaScript (the dialog's fields with it). */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  const url = new URL(request.url);
  const tag = (url.searchParams.get('tag') ?? '').trim();
  if (!tag) throw data(null, { status: 404 });
  return {
    title: ctx.t('channels:tagForm.title', { tag }),
    tag,
    redirectTo: safeRedirect(url.searchParams.get('redirectTo'), '/channel'),
  };
}

export type TagReply = { ok: boolean; error: string | null; values: Record<string, string> };

/** POST /channel/tag: the same editTag as PUT /api/channel/tag (blank = unchanged; '' new tag dissolves). */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  const formData = await request.formData();
  const values = Object.fromEntries(
    [...formData.entries()].filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  let count: number;
  try {
    count = await editTag(ctx, parseInput(ctx, tagEditSchema, values));
  } catch (error) {
    if (isDomainError(error) && error.status < 500)
      return data<TagReply>({ ok: false, error: error.message, values }, { status: 400 });
    throw error;
  }
  const toast = { type: 'success' as const, message: ctx.t('channels:toast.tagEdited', { count }) };
  if (values._fetcher === '1')
    return data<TagReply>(
      { ok: true, error: null, values },
      { headers: { 'Set-Cookie': await createToastHeader(toast) } },
    );
  return redirectWithToast(safeRedirect(values.redirectTo, '/channel'), toast);
}

export default function TagEditPage() {
  const { tag, redirectTo } = useLoaderData<typeof loader>();
  const reply = useActionData<typeof action>();
  const { t } = useTranslation('channels');
  return (
    <div className="page channels-page channel-form-page">
      <p>
        <Link to={redirectTo}>{t('actions.back')}</Link>
      </p>
      <h1>{t('tagForm.title', { tag })}</h1>
      <Form method="post">
        <input type="hidden" name="redirectTo" value={redirectTo} />
        <TagFields tag={tag} values={reply?.values} />
        <FormError message={reply?.error} />
        <div className="channel-dialog-actions">
          <Link to={redirectTo} className="btn btn-secondary">
            {t('actions.cancel')}
          </Link>
          <Button type="submit" variant="primary">
            {t('actions.save')}
          </Button>
        </div>
      </Form>
    </div>
  );
}

export { ChannelsErrorBoundary as ErrorBoundary };
