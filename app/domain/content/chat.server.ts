/**
 * The chat pages (seed 001 §2.15): /chat/{id?} shows the configured chats as tabs, the selected one filled with
 * the user's first enabled token; /chat2link sends the user straight to the first chat link.
 *
 * Order of checks: no chat configured ('please contact admin to configure chat link') comes first, since a
 * token would not help; then the token (none enabled: the message and a redirect to /token after 1.5 s, as
 * new-api does); then the selected chat (a bad index or template: 'chat link configuration error').
 */

import type { ChatEntry } from '#app/domain/status/status.server.ts';
import { TOKEN_STATUS } from '#app/domain/tokens/constants.ts';
import { listTokens, type TokensCtx } from '#app/domain/tokens/tokens.server.ts';
import {
  type ChatLink,
  type ChatTab,
  chatIndex,
  chatTabs,
  chatTemplate,
  fillChatLink,
} from './chat-links.ts';

/** Seed 001 §9: the chat page redirects to /token 1.5 seconds after saying no token is enabled. */
export const NO_TOKEN_REDIRECT_MS = 1500;
export const NO_TOKEN_REDIRECT_TO = '/token';

/**
 * new-api reads the first 100 tokens (`/api/token/?p=0&size=100`, newest first) and takes the first enabled one.
 * Statuses are refreshed first, so an expired or exhausted token is not offered.
 */
export async function firstEnabledTokenKey(ctx: TokensCtx): Promise<string | null> {
  const page = await listTokens(ctx, { page: 1, size: 100 });
  return page.items.find((t) => t.status === TOKEN_STATUS.enabled)?.key ?? null;
}

export type ChatPageView =
  | { state: 'unconfigured'; tabs: ChatTab[]; selected: null }
  | { state: 'no-token'; tabs: ChatTab[]; selected: null; redirectTo: string; delayMs: number }
  | { state: 'config-error'; tabs: ChatTab[]; selected: string | null; badIndex: boolean }
  | { state: 'ready'; tabs: ChatTab[]; selected: string; link: ChatLink };

export async function chatPage(
  ctx: TokensCtx,
  input: { chats: readonly ChatEntry[]; address: string; id: string | undefined },
): Promise<ChatPageView> {
  const tabs = chatTabs(input.chats);
  if (tabs.length === 0) return { state: 'unconfigured', tabs, selected: null };
  const key = await firstEnabledTokenKey(ctx);
  if (key === null)
    return {
      state: 'no-token',
      tabs,
      selected: null,
      redirectTo: NO_TOKEN_REDIRECT_TO,
      delayMs: NO_TOKEN_REDIRECT_MS,
    };
  const index = chatIndex(input.id, tabs.length);
  if (index === null) return { state: 'config-error', tabs, selected: null, badIndex: true };
  const template = chatTemplate(input.chats, index);
  const link = template === null ? null : fillChatLink(template, key, input.address);
  if (!link) return { state: 'config-error', tabs, selected: String(index), badIndex: false };
  return { state: 'ready', tabs, selected: String(index), link };
}

export type Chat2LinkResult = { state: 'redirect'; url: string } | Exclude<ChatPageView, { state: 'ready' }>;

/**
 * A link as a Location header can carry it: characters beyond ASCII percent-encoded as UTF-8 (what the
 * browser's URL parser does to them anyway), everything else as configured.
 */
export function headerSafeUrl(url: string): string {
  return url.replace(/[^\x20-\x7e]+/gu, (chars) => encodeURIComponent(chars));
}

/** /chat2link: the first chat link filled with the first enabled token. */
export async function chat2link(
  ctx: TokensCtx,
  input: { chats: readonly ChatEntry[]; address: string },
): Promise<Chat2LinkResult> {
  const view = await chatPage(ctx, { ...input, id: '0' });
  return view.state === 'ready' ? { state: 'redirect', url: headerSafeUrl(view.link.url) } : view;
}
