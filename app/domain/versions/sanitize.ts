/**
 * A small allow-list HTML sanitiser for the version remark (rich text, stored as given, rendered sanitised).
 * Pure string processing, identical on the server and in the browser:
 * - kept tags: b, i, em, strong, p, br, ul, ol, li, a, code, pre, h1-h4 (no attributes, except a[href] with an
 *   http:// or https:// URL, rendered with rel="noopener noreferrer nofollow" target="_blank"; a link without
 *   such an href is dropped, its text kept);
 * - script, style (and a few other raw-text / embedding elements) are dropped WITH their content;
 * - every other tag is dropped, its text kept; all text is re-escaped, comments and doctypes removed;
 * - open tags are closed at the end, stray closing tags are dropped, so the output is well nested.
 */

const ALLOWED = new Set([
  'b',
  'i',
  'em',
  'strong',
  'p',
  'br',
  'ul',
  'ol',
  'li',
  'a',
  'code',
  'pre',
  'h1',
  'h2',
  'h3',
  'h4',
]);
const VOID = new Set(['br']);
/** Elements whose whole content is dropped. */
const DROP_CONTENT = new Set([
  'script',
  'style',
  'iframe',
  'object',
  'embed',
  'template',
  'noscript',
  'textarea',
  'title',
  'xmp',
  'svg',
  'math',
]);

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);?/gi, (match, body: string) => {
    if (body[0] === '#') {
      const code =
        body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
    }
    return ENTITIES[body.toLowerCase()] ?? match;
  });
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** An http(s) URL after entity decoding and removal of control/space characters (javascript: etc. refused). */
export function safeHref(raw: string): string | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is being removed
  const value = decodeEntities(raw).replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  if (!/^https?:\/\//i.test(value)) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

function hrefOf(attrs: string): string | null {
  const re = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
  for (let m = re.exec(attrs); m; m = re.exec(attrs)) {
    if (m[1]?.toLowerCase() === 'href') return safeHref(m[2] ?? m[3] ?? m[4] ?? '');
  }
  return null;
}

const TOKEN =
  /<!--[\s\S]*?(?:-->|$)|<![^>]*>?|<\?[^>]*>?|<\/?([a-zA-Z][a-zA-Z0-9-]*)((?:"[^"]*"|'[^']*'|[^'">])*)>?/g;

export function sanitizeRemark(html: string): string {
  const input = String(html ?? '');
  TOKEN.lastIndex = 0;
  let out = '';
  const open: string[] = [];
  let skipUntil: string | null = null;
  let last = 0;
  for (let m = TOKEN.exec(input); m; m = TOKEN.exec(input)) {
    const text = input.slice(last, m.index);
    last = TOKEN.lastIndex;
    if (!skipUntil && text) out += escapeHtml(decodeEntities(text));
    const name = m[1]?.toLowerCase();
    if (!name) continue; // comment, doctype, processing instruction
    const closing = m[0][1] === '/';
    if (skipUntil) {
      if (closing && name === skipUntil) skipUntil = null;
      continue;
    }
    if (DROP_CONTENT.has(name)) {
      if (!closing && !/\/\s*>$/.test(m[0])) skipUntil = name;
      continue;
    }
    if (!ALLOWED.has(name)) continue;
    if (VOID.has(name)) {
      if (!closing) out += `<${name}>`;
      continue;
    }
    if (closing) {
      const at = open.lastIndexOf(name);
      if (at === -1) continue;
      while (open.length > at) out += `</${open.pop()}>`;
      continue;
    }
    if (name === 'a') {
      // a link without a safe http(s) href is dropped (its text kept)
      const href = hrefOf(m[2] ?? '');
      if (!href) continue;
      out += `<a href="${escapeHtml(href)}" rel="noopener noreferrer nofollow" target="_blank">`;
    } else {
      out += `<${name}>`;
    }
    open.push(name);
  }
  if (!skipUntil) out += escapeHtml(decodeEntities(input.slice(last)));
  while (open.length) out += `</${open.pop()}>`;
  TOKEN.lastIndex = 0;
  return out;
}
