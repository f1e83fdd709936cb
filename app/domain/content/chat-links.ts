/**
 * Chat links (seed 001 §2.15; seed 000 §3 `Chats`): each configured chat is `{ name: template }` where the
 * template holds `{key}` and `{address}`. They are filled as new-api fills them: `{address}` becomes the server
 * address URL-encoded (encodeURIComponent), `{key}` becomes the token key with its `sk-` prefix.
 */
import type { ChatEntry } from '#app/domain/status/status.server.ts';

export type ChatTab = { id: string; name: string };

/**
 * A filled link: `frame` (http/https, shown in an embedded frame) or `app` (a custom scheme such as ama:// or
 * opencat://, which only the user's own app can open, so it is offered as a link).
 */
export type ChatLink = { url: string; kind: 'frame' | 'app' };

/** The server address as `{address}` and the guides use it: ServerAddress, else this site's origin, no trailing slash. */
export function serverAddress(configured: string, requestUrl: string): string {
  const address = configured.trim() || new URL(requestUrl).origin;
  return address.replace(/\/+$/, '');
}

export function chatTabs(chats: readonly ChatEntry[]): ChatTab[] {
  return chats.map((chat, i) => ({ id: String(i), name: Object.keys(chat)[0] ?? `#${i}` }));
}

/** The chat index of a `/chat/{id}` path: absent is 0; anything but an index of the list is null. */
export function chatIndex(param: string | undefined, count: number): number | null {
  if (param === undefined || param === '') return count > 0 ? 0 : null;
  if (!/^\d{1,6}$/.test(param)) return null;
  const index = Number(param);
  return index < count ? index : null;
}

/** Schemes that must never be opened from a chat link (they run code or read local data). */
const FORBIDDEN_SCHEMES = new Set(['javascript', 'data', 'vbscript', 'file', 'blob', 'about']);

/** Fills a template; null when the result is not a usable link (a configuration error). */
export function fillChatLink(template: string, key: string, address: string): ChatLink | null {
  const url = template
    .trim()
    .replaceAll('{address}', encodeURIComponent(address))
    .replaceAll('{key}', `sk-${key}`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a link with control characters is malformed
  if (url === '' || /[\u0000-\u001f\u007f]/.test(url)) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const scheme = parsed.protocol.slice(0, -1).toLowerCase();
  if (FORBIDDEN_SCHEMES.has(scheme)) return null;
  if (scheme === 'http' || scheme === 'https') return parsed.host ? { url, kind: 'frame' } : null;
  return { url, kind: 'app' };
}

/** The template of the chat at `index` (the first value of its single-entry object). */
export function chatTemplate(chats: readonly ChatEntry[], index: number): string | null {
  const chat = chats[index];
  if (!chat) return null;
  const value = Object.values(chat)[0];
  return typeof value === 'string' ? value : null;
}
