/**
 * Admin-authored page content (HomePageContent, About, Notice), prepared on the server so no Markdown renderer
 * ships to the browser. As in new-api:
 * - an https URL is shown in a frame;
 * - HTML (the text starts with a tag) is rendered as given: only administrators can set these options, and
 *   new-api renders their HTML unchanged;
 * - anything else is Markdown, rendered with `marked`, and made safe: raw HTML inside the Markdown is shown as
 *   text (except a few formatting tags without attributes) and links or images whose URL is not http(s),
 *   mailto, tel or relative lose their URL. So a string that reaches these options never runs script through
 *   the Markdown path.
 */
import { Marked, type Tokens } from 'marked';

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

const NAMED: Record<string, string> = { colon: ':', tab: '\t', newline: '\n', amp: '&', sol: '/' };

/** What a browser makes of an attribute value: character references decoded. */
function decodeReferences(value: string): string {
  return value
    .replace(/&#x([0-9a-f]+);?/gi, (_, hex: string) =>
      String.fromCodePoint(Number.parseInt(hex, 16) % 0x110000),
    )
    .replace(/&#(\d+);?/g, (_, dec: string) => String.fromCodePoint(Number.parseInt(dec, 10) % 0x110000))
    .replace(/&([a-z]+);/gi, (m, name: string) => NAMED[name.toLowerCase()] ?? m);
}

/**
 * A URL a Markdown link or image may carry: http, https, mailto, tel, or relative (no scheme). The check reads
 * the URL as the browser will (references decoded, tabs, newlines and controls removed, as the URL parser does).
 */
export function isSafeUrl(url: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the URL parser drops exactly these
  const plain = decodeReferences(url).replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  const scheme = /^([^/?#]*?):/.exec(plain);
  if (!scheme) return true;
  return /^(?:https?|mailto|tel)$/i.test(scheme[1] ?? '');
}

const markdown = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return INLINE_TAG.test(text.trim()) ? text.trim() : escapeHtml(text);
    },
    link(token: Tokens.Link): string | false {
      if (isSafeUrl(token.href)) return false;
      return this.parser.parseInline(token.tokens);
    },
    image(token: Tokens.Image): string | false {
      if (isSafeUrl(token.href)) return false;
      return escapeHtml(token.text);
    },
  },
});

/** Markdown to HTML that is safe to insert (see the module comment). */
export function renderMarkdown(source: string): string {
  return markdown.parse(source, { async: false });
}

/** How to show an admin content option; null when it is empty. */
export function adminContentView(content: string): AdminContentView | null {
  const text = content.trim();
  if (text === '') return null;
  if (/^https:\/\/\S+$/.test(text)) return { kind: 'url', src: text };
  if (text.startsWith('<')) return { kind: 'html', html: text };
  return { kind: 'markdown', html: renderMarkdown(text) };
}
