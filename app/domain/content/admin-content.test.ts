import { describe, expect, it } from 'vitest';
import { adminContentView, renderMarkdown } from './admin-content.ts';

/** What a browser would make of an attribute value: character references decoded, URL-stripped characters gone. */
function decoded(value: string): string {
  return (
    value
      .replace(/&#x([0-9a-f]+);?/gi, (_, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
      .replace(/&#(\d+);?/g, (_, d: string) => String.fromCodePoint(Number.parseInt(d, 10)))
      .replace(/&colon;/gi, ':')
      .replace(/&tab;|&newline;/gi, '')
      .replace(/&amp;/g, '&')
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the URL parser drops exactly these
      .replace(/[\u0000-\u0020]/g, '')
  );
}

const ALLOWED_TAGS = new Set(
  'p br b i em strong u s del sub sup kbd mark small code pre blockquote ul ol li a img h1 h2 h3 h4 h5 h6 hr table thead tbody tr th td input'.split(
    ' ',
  ),
);
const ALLOWED_ATTRS = new Set([
  'href',
  'src',
  'alt',
  'title',
  'class',
  'start',
  'align',
  'type',
  'checked',
  'disabled',
]);

/** Every tag is a formatting tag with harmless attributes, and every URL is http(s), mailto, tel or relative. */
function expectSafe(html: string) {
  for (const [, tag = '', attrs = ''] of html.matchAll(/<\/?([a-zA-Z][\w-]*)([^>]*)>/g)) {
    expect(ALLOWED_TAGS.has(tag.toLowerCase()), `tag <${tag}> in ${html}`).toBe(true);
    for (const [, name = '', , value = ''] of attrs.matchAll(/([^\s=/]+)(="([^"]*)")?/g)) {
      expect(ALLOWED_ATTRS.has(name.toLowerCase()), `attribute ${name} in ${html}`).toBe(true);
      if (name === 'href' || name === 'src') {
        const url = decoded(value);
        expect(/^(https?:|mailto:|tel:|[^:]*$|[^:]*[/?#])/i.test(url), `url ${url} in ${html}`).toBe(true);
        expect(/^(javascript|data|vbscript):/i.test(url), `url ${url}`).toBe(false);
      }
    }
  }
}

describe('renderMarkdown', () => {
  it('renders Markdown (headings, emphasis, lists, links, code, tables)', () => {
    const html = renderMarkdown(
      '# Title\n\n**bold** and *it* [docs](https://example.com/a?b=1&c=2)\n\n- one\n- two\n\n`x`\n\n| a | b |\n|---|---|\n| 1 | 2 |',
    );
    expect(html).toContain('<h1>Title</h1>');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('<a href="https://example.com/a?b=1&amp;c=2">docs</a>');
    expect(html).toContain('<li>one</li>');
    expect(html).toContain('<code>x</code>');
    expect(html).toContain('<table>');
    expectSafe(html);
  });

  it.each([
    '<script>alert(1)</script>',
    'hi <img src=x onerror=alert(1)> there',
    '<a href="javascript:alert(1)">x</a>',
    '[x](javascript:alert(1))',
    '[x](JaVaScRiPt:alert(1))',
    '[x](java&#x09;script:alert(1))',
    '[x](java&#9;script:alert(1))',
    '[x](javascript&colon;alert(1))',
    '[x]( javascript:alert(1))',
    '<javascript:alert(1)>',
    '![x](javascript:alert(1))',
    '![x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
    '[x](vbscript:msgbox(1))',
    '<iframe src="https://evil.example"></iframe>',
    '<div onclick="alert(1)">x</div>',
    '<style>body{display:none}</style>',
    '[ref]\n\n[ref]: javascript:alert(1)',
    '<svg onload=alert(1)>',
  ])('keeps %j from running script', (source) => {
    const html = renderMarkdown(source);
    expectSafe(html);
    expect(html).not.toMatch(/<(script|iframe|svg|style)|<[^>]*\son\w+=/i);
  });

  it('shows raw HTML inside Markdown as text, but keeps simple formatting tags', () => {
    expect(renderMarkdown('a <script>x</script> b')).toContain('&lt;script&gt;');
    expect(renderMarkdown('line<br>next <b>bold</b>')).toContain('<br />');
    expect(renderMarkdown('line<br>next <b>bold</b>')).toContain('<b>bold</b>');
    expect(renderMarkdown('<b onclick="x">no</b>')).toContain('&lt;b onclick=');
  });
});

describe('renderMarkdown links and images', () => {
  it('keeps http(s), mailto, tel and relative URLs', () => {
    for (const url of ['https://a.b/c', 'http://a', 'mailto:a@b.c', 'tel:+123', '/token', '#x', '?a=1'])
      expect(renderMarkdown(`[x](${url})`), url).toContain(`href="${url}"`);
  });
  it('drops other schemes, however written', () => {
    for (const url of [
      'javascript:x',
      'JAVASCRIPT:x',
      'java&#x0A;script:x',
      'java&#x09;script:x',
      'data:x',
      'vbscript:x',
      'javascript&colon;x',
    ]) {
      const html = renderMarkdown(`[x](${url}) ![y](${url})`);
      expect(html, url).not.toMatch(/href=|src=/);
      expectSafe(html);
    }
  });
});

describe('adminContentView', () => {
  it('is null for empty content', () => {
    expect(adminContentView('  \n')).toBeNull();
  });
  it('frames an https URL (as new-api)', () => {
    expect(adminContentView(' https://example.com/home ')).toEqual({
      kind: 'url',
      src: 'https://example.com/home',
    });
    expect(adminContentView('http://example.com')?.kind).toBe('markdown');
  });
  it('sanitizes admin HTML: formatting stays, script does not', () => {
    const html =
      '<div class="hero" onclick="x()"><h1>Hi</h1><script>window.x=1</script><a href="javascript:x()">a</a></div>';
    expect(adminContentView(html)).toEqual({ kind: 'html', html: '<div class="hero"><h1>Hi</h1>a</div>' });
  });
  it('renders anything else as safe Markdown', () => {
    const view = adminContentView('# Welcome\n\n<script>alert(1)</script>');
    expect(view?.kind).toBe('markdown');
    expect(view && 'html' in view ? view.html : '').toContain('<h1>Welcome</h1>');
    expect(view && 'html' in view ? view.html : '').not.toContain('<script>');
  });
});
