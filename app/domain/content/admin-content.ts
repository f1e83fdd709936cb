/**
 * Admin-authored page content (HomePageContent, About, Notice), prepared on the server so no Markdown renderer
 * ships to the browser. As in new-api:
 * - an https URL is shown in a frame;
 * - HTML (the text starts with a tag) goes through the admin HTML sanitizer (ADR 032): formatting, links and
 *   images stay, nothing that runs script does;
 * - anything else is Markdown, rendered with `marked`: raw HTML inside the Markdown is shown as text (except a
 *   few formatting tags without attributes), and the result goes through the same sanitizer, which drops links
 *   and images whose URL is not http(s), mailto, tel or relative.
 * Sanitizing here, when the page is rendered, covers values stored before the sanitizer existed.
 */
import { Marked, type Tokens } from 'marked';
import { sanitizeAdminHtml } from '#app/domain/security/sanitize-html.server.ts';

export type AdminContentView =
  | { kind: 'url'; src: string }
  | { kind: 'html'; html: string }
  | { kind: 'markdown'; html: string };

/** Inline tags allowed through inside Markdown, exactly as written (no attributes). */
const INLINE_TAG = /^<\/?(?:br|b|i|em|strong|u|s|del|sub|sup|kbd|mark|small|code)\s*\/?>$/i;

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

const markdown = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return INLINE_TAG.test(text.trim()) ? text.trim() : escapeHtml(text);
    },
  },
});

/** Markdown to HTML that is safe to insert (see the module comment). */
export function renderMarkdown(source: string): string {
  return sanitizeAdminHtml(markdown.parse(source, { async: false }));
}

/** How to show an admin content option; null when it is empty. */
export function adminContentView(content: string): AdminContentView | null {
  const text = content.trim();
  if (text === '') return null;
  if (/^https:\/\/\S+$/.test(text)) return { kind: 'url', src: text };
  if (text.startsWith('<')) return { kind: 'html', html: sanitizeAdminHtml(text) };
  return { kind: 'markdown', html: renderMarkdown(text) };
}
