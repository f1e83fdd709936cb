import type { LoaderFunctionArgs, MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { ConfirmPage } from '#app/components/list/confirm-page.tsx';
import { ChannelsErrorBoundary } from '#app/domain/channels/channel-ui.tsx';
import { channelsPageCtx, parseId } from '#app/domain/channels/http.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

export const handle = { i18n: ['common', 'channels'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Channel' }];

const OPS = ['fix', 'deleteDisabled', 'batchDelete', 'batchTag'] as const;
type Op = (typeof OPS)[number];

/**
 * GET /channel/confirm?op=fix|deleteDisabled|batchDelete|batchTag[&ids&tag]: the confirmation step of the list's
 * toolbar and batch actions without JavaScript; confirming posts to the list's action.
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await channelsPageCtx(request, context);
  const url = new URL(request.url);
  const back = safeRedirect(url.searchParams.get('redirectTo'), '/channel');
  const op = (url.searchParams.get('op') ?? '') as Op;
  if (!OPS.includes(op))
    return redirectWithToast(back, { type: 'error', message: ctx.t('channels:errors.invalidInput') });
  const ids = [...new Set(url.searchParams.getAll('ids').map(parseId))].filter((id) => id > 0);
  const tag = (url.searchParams.get('tag') ?? '').trim();
  if ((op === 'batchDelete' || op === 'batchTag') && ids.length === 0)
    return redirectWithToast(back, { type: 'error', message: ctx.t('channels:errors.selectFirst') });
  if (op === 'batchTag' && !tag)
    return redirectWithToast(back, { type: 'error', message: ctx.t('channels:errors.tagRequired') });
  const t = ctx.t;
  const text: Record<Op, [string, string]> = {
    fix: [t('channels:confirm.fixTitle'), t('channels:confirm.fixBody')],
    deleteDisabled: [t('channels:confirm.deleteDisabledTitle'), t('channels:confirm.deleteDisabledBody')],
    batchDelete: [
      t('channels:confirm.batchDeleteTitle'),
      t('channels:confirm.batchDeleteBody', { count: ids.length }),
    ],
    batchTag: [t('channels:tagForm.batchTitle'), `${t('channels:selected', { count: ids.length })} → ${tag}`],
  };
  return { title: text[op][0], body: text[op][1], op, ids, tag, redirectTo: back };
}

export default function ConfirmChannelsPage() {
  const { title, body, op, ids, tag, redirectTo } = useLoaderData<typeof loader>();
  const { t } = useTranslation('channels');
  return (
    <ConfirmPage
      className="channels-page channel-form-page"
      title={title}
      body={
        <>
          <p>{body}</p>
          {ids.length ? <p>{ids.map((id) => `#${id}`).join(', ')}</p> : null}
        </>
      }
      redirectTo={redirectTo}
      cancelLabel={t('actions.cancel')}
      confirmLabel={
        op === 'batchDelete' || op === 'deleteDisabled' ? t('actions.confirmDelete') : t('actions.confirm')
      }
      action="/channel?index"
      fields={{ intent: op, ...(op === 'batchTag' ? { tag } : {}), ids }}
    />
  );
}

export { ChannelsErrorBoundary as ErrorBoundary };
