/**
 * Every piece of HTML an administrator writes (Footer, Notice, HomePageContent, About, a version's remark) and
 * the HTML that Markdown turns into goes through this module before it reaches a page or an API answer
 * (ADR 032). It runs on the server only, when the value is rendered or answered, so values stored before this
 * module existed are covered too; no sanitizer ships to the browser, which receives only the cleaned string.
 *
 * The work is done by `sanitize-html` (a maintained allow-list sanitizer: it parses with htmlparser2, keeps only
 * the listed tags, attributes, URL schemes and CSS properties, and serializes again with every text escaped).
 * This file only states the policy:
 * - ordinary formatting, lists, tables, headings, quotes, images and links;
 * - links: http, https, mailto, tel or relative URLs (the library reads an href as the browser will: entities
 *   decoded and control characters removed, so `jav&#x09;ascript:` is refused too); a link whose URL is refused
 *   loses its tag and keeps its text; `target` only as `_blank`, which always gets rel="noopener noreferrer";
 * - images: http, https or relative src only;
 * - no event attributes, no `id`/`name` (DOM clobbering); `class` stays (footers use the site's classes);
 *   `style` only with a short list of properties whose values are matched in full (no `url(...)`, no
 *   `expression(...)`, no positioning);
 * - script, style, svg, math, iframe, object, form, meta, base and the rest are dropped, the raw-text and
 *   embedding ones together with their content.
 * The Content-Security-Policy (app/utils/csp.server.ts) stands behind it: a miss here still cannot run script.
 */
import sanitizeHtml from 'sanitize-html';

/** Elements removed together with everything inside them (the rest of the refused ones keep their text). */
const DROP_WITH_CONTENT = [
  'script',
  'style',
  'textarea',
  'option',
  'select',
  'noscript',
  'noembed',
  'noframes',
  'template',
  'title',
  'xmp',
  'plaintext',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'svg',
  'math',
  'head',
];

const LENGTH = /^(?:0|\d{1,4}(?:\.\d{1,3})?(?:px|em|rem|%|pt))$/;
const LENGTHS = /^(?:(?:0|\d{1,4}(?:\.\d{1,3})?(?:px|em|rem|%|pt)|auto)\s*){1,4}$/;
const COLOR = [
  /^#[0-9a-f]{3,8}$/i,
  /^rgba?\(\s*\d{1,3}%?\s*,\s*\d{1,3}%?\s*,\s*\d{1,3}%?\s*(?:,\s*(?:0|1|0?\.\d{1,3})\s*)?\)$/i,
  /^[a-z]{3,20}$/i,
];

/** The CSS properties a `style` attribute may keep, each value matched as a whole. */
const ALLOWED_STYLES: Record<string, RegExp[]> = {
  color: COLOR,
  'background-color': COLOR,
  'text-align': [/^(?:left|right|center|justify|start|end)$/],
  'font-weight': [/^(?:normal|bold|bolder|lighter|[1-9]00)$/],
  'font-style': [/^(?:normal|italic|oblique)$/],
  'font-size': [LENGTH, /^(?:x{0,2}-small|small|medium|large|x{0,2}-large|smaller|larger)$/],
  'text-decoration': [/^(?:none|underline|overline|line-through)$/],
  'line-height': [/^(?:normal|\d{1,2}(?:\.\d{1,3})?)$/, LENGTH],
  margin: [LENGTHS],
  padding: [LENGTHS],
  width: [LENGTH],
  'max-width': [LENGTH],
  'vertical-align': [/^(?:baseline|top|middle|bottom|sub|super|text-top|text-bottom)$/],
};

function linkAttributes(_tag: string, attribs: sanitizeHtml.Attributes): sanitizeHtml.Tag {
  const { target, rel: _rel, ...rest } = attribs;
  return {
    tagName: 'a',
    attribs: target === '_blank' ? { ...rest, target: '_blank', rel: 'noopener noreferrer' } : rest,
  };
}

/** A link whose URL was refused (or that had none) loses its tag, its text stays. */
function unwrapLinkWithoutHref(frame: sanitizeHtml.IFrame): boolean | 'excludeTag' {
  return frame.tag === 'a' && !frame.attribs.href ? 'excludeTag' : false;
}

const ADMIN_HTML: sanitizeHtml.IOptions = {
  allowedTags: [
    ...sanitizeHtml.defaults.allowedTags.filter((t) => t !== 'main' && t !== 'nav'),
    'img',
    'del',
    'ins',
    'details',
    'summary',
    'center',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'target', 'rel'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    td: ['colspan', 'rowspan', 'align'],
    th: ['colspan', 'rowspan', 'align', 'scope'],
    ol: ['start', 'type'],
    '*': ['class', 'style', 'title', 'lang', 'dir'],
  },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
  allowProtocolRelative: true,
  allowedStyles: { '*': ALLOWED_STYLES },
  nonTextTags: DROP_WITH_CONTENT,
  disallowedTagsMode: 'discard',
  transformTags: { a: linkAttributes },
  exclusiveFilter: unwrapLinkWithoutHref,
};

/**
 * The version remark (ADR 032 keeps the old hand-written rules): a few formatting tags without attributes and
 * http(s) links that open in a new tab with rel="noopener noreferrer nofollow".
 */
const REMARK_HTML: sanitizeHtml.IOptions = {
  allowedTags: [
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
  ],
  allowedAttributes: { a: ['href', 'rel', 'target'] },
  allowedSchemes: ['http', 'https'],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  nonTextTags: DROP_WITH_CONTENT,
  disallowedTagsMode: 'discard',
  transformTags: {
    a: (_tag, attribs) => ({
      tagName: 'a',
      attribs: {
        ...(attribs.href === undefined ? {} : { href: attribs.href }),
        rel: 'noopener noreferrer nofollow',
        target: '_blank',
      },
    }),
  },
  exclusiveFilter: (frame) => {
    // relative links are refused here: only absolute http(s) URLs stay
    if (frame.tag !== 'a') return false;
    return /^https?:\/\//i.test(frame.attribs.href ?? '') ? false : 'excludeTag';
  },
};

/**
 * The same option values are rendered on every page view: the last few results are kept, keyed by the input,
 * so a busy footer costs one sanitizer pass per change, not one per request.
 */
const MEMO_SIZE = 64;
/** Longer inputs are not remembered (they are rare and would hold memory). */
const MEMO_MAX_INPUT = 64 * 1024;

function memoized(options: sanitizeHtml.IOptions) {
  const memo = new Map<string, string>();
  return (html: string | null | undefined): string => {
    const input = typeof html === 'string' ? html : '';
    if (input === '') return '';
    const hit = memo.get(input);
    if (hit !== undefined) {
      memo.delete(input);
      memo.set(input, hit);
      return hit;
    }
    const out = sanitizeHtml(input, options);
    if (input.length <= MEMO_MAX_INPUT) {
      memo.set(input, out);
      if (memo.size > MEMO_SIZE) memo.delete(memo.keys().next().value as string);
    }
    return out;
  };
}

/** Admin-authored HTML (and Markdown's output) made safe to insert into any page. */
export const sanitizeAdminHtml = memoized(ADMIN_HTML);

/** A version's remark made safe to insert (the narrower remark rules). */
export const sanitizeRemark = memoized(REMARK_HTML);
