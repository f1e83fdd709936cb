/**
 * Issue 15 "done when": no dead ends. As a visitor, a user and root, with JavaScript on and off, the crawl starts
 * from / and the console pages and follows every same-origin link (GET only; not /logout, file downloads or the
 * JSON API), up to MAX_PAGES per pass. It fails on any 404 or 5xx answer and on any translation key rendered raw
 * (a word.word text, or attribute a reader gets: aria-label, title, placeholder, alt, that is a key of the
 * locale files).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Role } from '@switchyard/db/entities/user.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resources } from '#app/i18n/resources.ts';
import { seedConsoleRows } from './console-rows.ts';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode } from './harness.ts';

/** Each pass visits at most this many distinct pages (path + query parameter names). */
const MAX_PAGES = 70;

const START_PAGES = [
  '/',
  '/pricing',
  '/about',
  '/login',
  '/register',
  '/reset',
  '/token',
  '/topup',
  '/log',
  '/task',
  '/setting',
  '/channel',
  '/redemption',
  '/user',
  '/version',
  '/download',
];

/** Every key of every namespace, bare and as ns:key (a raw key is one of these shown as text). */
function localeKeys(): Set<string> {
  const keys = new Set<string>();
  const walk = (ns: string, value: unknown, prefix: string) => {
    if (typeof value !== 'object' || value === null) {
      keys.add(prefix);
      keys.add(`${ns}:${prefix}`);
      keys.add(prefix.replace(/_(?:zero|one|two|few|many|other)$/, ''));
      return;
    }
    for (const [k, v] of Object.entries(value)) walk(ns, v, prefix ? `${prefix}.${k}` : k);
  };
  for (const [ns, tree] of Object.entries(resources.zh)) walk(ns, tree, '');
  // only dotted keys can be told apart from ordinary words
  return new Set([...keys].filter((k) => k.includes('.')));
}
const KEYS = localeKeys();

/** Raw keys in a page's visible text and reader-facing attributes. */
export function rawKeysIn(texts: string[]): string[] {
  const found = new Set<string>();
  for (const text of texts) {
    for (const m of text.matchAll(/(?:[a-z][A-Za-z0-9]*:)?[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+/g)) {
      if (KEYS.has(m[0])) found.add(m[0]);
    }
  }
  return [...found];
}

function skip(url: URL): boolean {
  const p = url.pathname;
  return (
    p === '/logout' ||
    p.startsWith('/api/') ||
    p.startsWith('/oauth/start/') ||
    p.startsWith('/assets/') ||
    (p !== '/download' && p.endsWith('/download')) ||
    /\.(?:csv|txt|json|zip|png|svg|ico|js|css)$/.test(p)
  );
}

/**
 * One page per shape: path with its numeric ids as one (/token/5/edit and /token/6/edit) and the set of query
 * parameter names (page 2 and page 3 of a list).
 */
function shape(url: URL): string {
  const names = [...new Set([...url.searchParams.keys()])].sort().join(',');
  return `${url.pathname.replace(/\/\d+(?=\/|$)/g, '/:id')}?${names}`;
}

type Finding = { url: string; from: string; problem: string };

async function crawl(
  page: Page,
  base: string,
  mode: Mode,
): Promise<{ visited: number; findings: Finding[] }> {
  const queue: { url: string; from: string }[] = START_PAGES.map((p) => ({
    url: `${base}${p}`,
    from: '(start)',
  }));
  const seen = new Set<string>(queue.map((q) => shape(new URL(q.url))));
  const findings: Finding[] = [];
  let visited = 0;
  while (queue.length && visited < MAX_PAGES) {
    const { url, from } = queue.shift() as { url: string; from: string };
    visited++;
    const res = await page.goto(url, { waitUntil: 'load' });
    const status = res?.status() ?? 0;
    if (status === 404 || status >= 500) {
      findings.push({ url, from, problem: `HTTP ${status}` });
      continue;
    }
    // with JavaScript, read the page as hydrated (client-rendered text and links included)
    if (mode === 'js') {
      const hydrated = await page
        .waitForSelector('html[data-hydrated="true"]', { state: 'attached', timeout: 10_000 })
        .then(() => true)
        .catch(() => false);
      if (!hydrated) findings.push({ url: page.url(), from, problem: 'did not hydrate' });
    }
    const { texts, links } = await page.evaluate(() => {
      const attrs = ['aria-label', 'title', 'placeholder', 'alt', 'aria-description'];
      // biome-ignore lint/performance/useDomNodeTextContent: the rendered text a reader sees, not script data
      const texts = [document.title, document.body.innerText];
      for (const el of document.querySelectorAll('*')) {
        for (const a of attrs) {
          const v = el.getAttribute(a);
          if (v) texts.push(v);
        }
      }
      const links = [...document.querySelectorAll<HTMLAnchorElement>('a[href]')]
        .filter((a) => !a.hasAttribute('download') && (a.target === '' || a.target === '_self'))
        .map((a) => a.href);
      return { texts, links };
    });
    const raw = rawKeysIn(texts);
    if (raw.length)
      findings.push({ url: page.url(), from, problem: `raw translation keys: ${raw.join(', ')}` });
    for (const href of links) {
      const next = new URL(href);
      next.hash = '';
      if (next.origin !== new URL(base).origin || skip(next)) continue;
      const key = shape(next);
      if (seen.has(key)) continue;
      seen.add(key);
      queue.push({ url: next.toString(), from: page.url() });
    }
  }
  return { visited, findings };
}

let h: Harness;
let orm: MikroORM;
const who: Record<'user' | 'root', E2eUser | null> = { user: null, root: null };

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
  const run = Date.now().toString(36).slice(-5);
  who.user = await createE2eUser(orm, `crawl_u_${run}`, { role: Role.User, quota: 500_000 } as never);
  who.root = await createE2eUser(orm, `crawl_r_${run}`, { role: Role.Root } as never);
  // Rows behind the lists, so their links (edit, delete, key, user logs...) are crawled too.
  await seedConsoleRows(orm, who.user, who.root, inject('openaiURL'));
});

afterAll(async () => {
  await h?.close();
  await orm?.close();
});

describe('the raw-key detector', () => {
  it('finds locale keys shown as text and ignores ordinary dotted words', () => {
    expect(rawKeysIn(['每页 pagination.pageSize 条', 'tokens:key.title', 'api.openai.com v1.2.3'])).toEqual([
      'pagination.pageSize',
      'tokens:key.title',
    ]);
    expect(rawKeysIn(['preferences.pageSize'])).toEqual(['preferences.pageSize']);
  });
});

describe.each(MODES)('crawl with JavaScript %s', (mode: Mode) => {
  it.each(['visitor', 'user', 'root'] as const)(
    'as %s: every link leads to a page (no 404/500) with no raw translation key',
    async (role) => {
      const page = await h.page(mode);
      const account = role === 'visitor' ? null : who[role];
      if (account) await signIn(h, mode, account);
      const started = Date.now();
      const { visited, findings } = await crawl(page, h.baseURL, mode);
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      console.log(`crawl ${mode} ${role}: ${visited} pages in ${seconds}s`);
      expect(findings).toEqual([]);
      // with JavaScript the row actions are drawers, not links: fewer pages are reachable by link
      expect(visited).toBeGreaterThan(role === 'root' ? (mode === 'js' ? 20 : 35) : 15);
    },
    60_000,
  );
});
