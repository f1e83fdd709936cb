import {
  data,
  type LinksFunction,
  type LoaderFunctionArgs,
  type MetaFunction,
  redirect,
} from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { ChatError, NoTokenNotice } from '#app/components/chat-view.tsx';
import { chat2link } from '#app/domain/content/chat.server.ts';
import { serverAddress } from '#app/domain/content/chat-links.ts';
import { domainPageCtx } from '#app/domain/http.server.ts';
import { getPublicStatus } from '#app/domain/status/status.server.ts';
import { getServices } from '#app/services.server.ts';
import contentStyles from '#app/styles/content.css?url';

export const handle = { i18n: ['common', 'content'] };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: contentStyles }];

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Chat' }];

/**
 * GET /chat2link (login, seed 001 §2.15): 302 to the first configured chat link filled with the user's first
 * enabled token. Without a token or a usable link the page says why (and sends a token-less user to /token).
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await domainPageCtx(request, context, {});
  const status = getPublicStatus(getServices(context));
  const result = await chat2link(ctx, {
    chats: status.chats,
    address: serverAddress(status.server_address, request.url),
  });
  if (result.state === 'redirect')
    throw redirect(result.url, { status: 302, headers: { 'Cache-Control': 'no-store' } });
  return data({ title: ctx.t('content:chat.title'), result }, { headers: { 'Cache-Control': 'no-store' } });
}

export default function Chat2Link() {
  const { result } = useLoaderData<typeof loader>();
  const { t } = useTranslation('content');
  return (
    <div className="page chat-page">
      <h1>{t('chat.title')}</h1>
      {result.state === 'no-token' ? (
        <NoTokenNotice redirectTo={result.redirectTo} delayMs={result.delayMs} />
      ) : (
        <ChatError kind={result.state === 'unconfigured' ? 'unconfigured' : 'config-error'} />
      )}
    </div>
  );
}
