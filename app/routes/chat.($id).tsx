import { data, type LinksFunction, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { ChatBody, ChatError, ChatTabs, NoTokenNotice } from '#app/components/chat-view.tsx';
import { chatPage } from '#app/domain/content/chat.server.ts';
import { serverAddress } from '#app/domain/content/chat-links.ts';
import { domainPageCtx } from '#app/domain/http.server.ts';
import { getPublicStatus } from '#app/domain/status/status.server.ts';
import { getServices } from '#app/services.server.ts';
import contentStyles from '#app/styles/content.css?url';

export const handle = { i18n: ['common', 'content'] };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: contentStyles }];

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Chat' }];

/**
 * GET /chat/{id?} (seed 001 §2.15): the configured chats as tabs, the selected one (default 0) in a frame filled
 * with the user's first enabled token and the server address. The chat needs a token, so a visitor signs in
 * first (new-api sends a visitor's token request to /login too). A bad index is a 404 with the configuration
 * message; the other states are pages of their own.
 */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const ctx = await domainPageCtx(request, context, {});
  const status = getPublicStatus(getServices(context));
  const view = await chatPage(ctx, {
    chats: status.chats,
    address: serverAddress(status.server_address, request.url),
    id: params.id,
  });
  const notFound = view.state === 'config-error' && view.badIndex;
  return data(
    { title: ctx.t('content:chat.title'), view },
    { status: notFound ? 404 : 200, headers: { 'Cache-Control': 'no-store' } },
  );
}

export default function ChatPage() {
  const { view } = useLoaderData<typeof loader>();
  const { t } = useTranslation('content');
  return (
    <div className="page chat-page">
      <h1 className="sr-only">{t('chat.title')}</h1>
      {view.state === 'unconfigured' ? <ChatError kind="unconfigured" /> : null}
      {view.state === 'no-token' ? (
        <NoTokenNotice redirectTo={view.redirectTo} delayMs={view.delayMs} />
      ) : null}
      {view.state === 'config-error' ? (
        <ChatTabs tabs={view.tabs} selected={view.selected}>
          <ChatError kind="config-error" />
        </ChatTabs>
      ) : null}
      {view.state === 'ready' ? (
        <ChatTabs tabs={view.tabs} selected={view.selected}>
          <ChatBody name={view.tabs[Number(view.selected)]?.name ?? ''} link={view.link} />
        </ChatTabs>
      ) : null}
    </div>
  );
}
