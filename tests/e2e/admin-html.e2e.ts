/**
 * Issue 23 item 1: an administrator's HTML never runs script in root's browser (ADR 032).
 *
 * An admin (role 10) writes hostile Footer, Notice, HomePageContent and About values through PUT /api/option/
 * (script tags, event attributes, SVG, javascript:/data: URLs plain and obfuscated, CSS, mutation-XSS shapes,
 * frames, forms), as HTML and as Markdown. Root then opens the home page (content + notice), /about and a
 * console page (footer) in Chromium with JavaScript on, hovers and clicks everything the payloads put there,
 * and the test counts executions three ways: `top.__pwned` (each payload pushes its number), console messages
 * and dialogs, and a beacon to a loopback marker server (an image request, which the page's CSP allows, so a
 * payload that ran would be heard even if it navigated away). Expected: 0 executed, 0 CSP violations on the
 * real pages (the sanitizer leaves nothing for the CSP to block).
 *
 * Then the CSP on its own: every page carries a nonce that differs per response and is on every script the
 * page renders; and an HTML injection that bypassed the sanitizer (simulated by rewriting the real response in
 * the browser, keeping its headers) does not run.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Role } from '@switchyard/db/entities/user.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createE2eUser, type E2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, ready } from './harness.ts';

let h: Harness;
let orm: MikroORM;
let admin: E2eUser;
let root: E2eUser;
let marker: Server;
let markerUrl = '';
/** ids beaconed by payloads that ran */
const markerHits = new Set<string>();
/** attacker resources the pages loaded (scripts, stylesheets) */
const markerLoads = new Set<string>();
const run = Date.now().toString(36).slice(-6);
const CONTENT_KEYS = ['Footer', 'Notice', 'HomePageContent', 'About'] as const;
type ContentKey = (typeof CONTENT_KEYS)[number];

async function api(who: E2eUser, path: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(`${h.baseURL}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      'Content-Type': 'application/json',
      Cookie: `sy_session=${who.token}`,
      'New-Api-User': String(who.id),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const body = (await res.json()) as { success: boolean; message: string; data: unknown };
  return { status: res.status, body };
}

async function setOption(key: ContentKey, value: string) {
  const res = await api(admin, '/api/option/', { method: 'PUT', body: { key, value } });
  expect(res.status, `PUT ${key}: ${res.body.message}`).toBe(200);
  expect(res.body.success, `PUT ${key}: ${res.body.message}`).toBe(true);
}

/** Waits until the running product's footer contains `text` (option changes travel through Redis). */
async function waitForFooter(text: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const body = (await (await fetch(`${h.baseURL}/api/status`)).json()) as { data: { footer_html: string } };
    if (body.data.footer_html.includes(text)) return;
    if (Date.now() > deadline) throw new Error('the product did not pick up the Footer option');
    await new Promise((r) => setTimeout(r, 100));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Payloads. `run(id)` is the JavaScript a payload tries to run: it records the id in top.__pwned, logs it and
// beacons the marker server. Each payload has its own id; `expr` is the code safe inside a double-quoted
// attribute (no double quotes) and inside a URL.

function code(id: string): string {
  return `(top.__pwned=top.__pwned||[]).push('${id}');console.log('PWNED:${id}');new Image().src='${markerUrl}/hit?p=${id}'`;
}

type Payload = { id: string; html: (js: string) => string };

/** HTML payloads: each is tried in every content option. */
const HTML_PAYLOADS: Payload[] = [
  { id: 'script', html: (js) => `<script>${js}</script>` },
  { id: 'script-src', html: () => `<script src="${markerUrl}/evil.js"></script>` },
  { id: 'img-onerror', html: (js) => `<img src="x-missing.png" onerror="${js}">` },
  { id: 'img-onerror-case', html: (js) => `<IMG SRC=x-missing.png oNeRrOr="${js}">` },
  { id: 'img-slash', html: (js) => `<img/src="x-missing.png"/onerror="${js}">` },
  { id: 'svg-onload', html: (js) => `<svg onload="${js}"></svg>` },
  { id: 'svg-script', html: (js) => `<svg><script>${js}</script></svg>` },
  { id: 'svg-animate', html: (js) => `<svg><animate onbegin="${js}" attributeName="x" dur="1s"/></svg>` },
  {
    id: 'svg-xlink',
    html: (js) =>
      `<svg width="40" height="20"><a xlink:href="javascript:${js}"><text x="0" y="15">svgx</text></a></svg>`,
  },
  { id: 'a-js', html: (js) => `<a href="javascript:${js}">ajs</a>` },
  { id: 'a-js-case', html: (js) => `<a href="JaVaScRiPt:${js}">ajscase</a>` },
  { id: 'a-js-tab', html: (js) => `<a href="jav&#x09;ascript:${js}">ajstab</a>` },
  { id: 'a-js-entity', html: (js) => `<a href="&#106;avascript&#58;${js}">ajsent</a>` },
  { id: 'a-js-space', html: (js) => `<a href=" &#14; javascript:${js}">ajsspace</a>` },
  { id: 'a-js-newline', html: (js) => `<a href="java\nscript:${js}">ajsnl</a>` },
  { id: 'a-onclick', html: (js) => `<a href="#" onclick="${js};return false">aclick</a>` },
  { id: 'div-hover', html: (js) => `<div onmouseover="${js}">hover-zone</div>` },
  { id: 'details-toggle', html: (js) => `<details open ontoggle="${js}"><summary>s</summary>d</details>` },
  { id: 'input-focus', html: (js) => `<input autofocus onfocus="${js}">` },
  { id: 'video-source', html: (js) => `<video><source onerror="${js}"></video>` },
  { id: 'body-onload', html: (js) => `<body onload="${js}">` },
  { id: 'iframe-srcdoc', html: (js) => `<iframe srcdoc="<script>${js}</script>"></iframe>` },
  { id: 'iframe-js', html: (js) => `<iframe src="javascript:${js}"></iframe>` },
  { id: 'object-js', html: (js) => `<object data="javascript:${js}"></object>` },
  { id: 'embed-js', html: (js) => `<embed src="javascript:${js}">` },
  { id: 'form-action', html: (js) => `<form action="javascript:${js}"><button>formgo</button></form>` },
  {
    id: 'button-formaction',
    html: (js) => `<form><button formaction="javascript:${js}">fabtn</button></form>`,
  },
  {
    id: 'meta-refresh',
    html: (js) => `<meta http-equiv="refresh" content="0;url=javascript:${js}">`,
  },
  { id: 'style-import', html: () => `<style>@import url("${markerUrl}/css-import");</style>` },
  {
    id: 'style-url',
    html: (js) => `<div style="background-image:url('javascript:${js}');width:9px;height:9px">cssurl</div>`,
  },
  { id: 'css-expression', html: (js) => `<div style="width:expression(${js})">cssexpr</div>` },
  { id: 'link-style', html: () => `<link rel="stylesheet" href="${markerUrl}/link-css">` },
  {
    id: 'mxss-math',
    html: (js) => `<math><mtext><table><mglyph><style><img src=x-missing.png onerror="${js}">`,
  },
  {
    id: 'mxss-noscript',
    html: (js) =>
      `<noscript><p title="</noscript><img src=x-missing.png onerror=${js.replace(/ /g, '')}>"></noscript>`,
  },
  {
    id: 'mxss-svg-style',
    html: (js) => `<svg></p><style><a id="</style><img src=x-missing.png onerror=${js.replace(/ /g, '')}>">`,
  },
];

/** Markdown payloads (a value that does not start with '<' is Markdown). */
const MARKDOWN_PAYLOADS: Payload[] = [
  { id: 'md-link-js', html: (js) => `[mdjs](javascript:${encodeURI(js)})` },
  { id: 'md-link-tab', html: (js) => `[mdtab](jav&#x09;ascript:${encodeURI(js)})` },
  { id: 'md-image-js', html: (js) => `![mdimg](javascript:${encodeURI(js)})` },
  { id: 'md-autolink', html: (js) => `<javascript:${encodeURI(js)}>` },
  { id: 'md-ref', html: (js) => `[mdref][r]\n\n[r]: javascript:${encodeURI(js)}` },
  { id: 'md-raw-img', html: (js) => `text <img src=x-missing.png onerror="${js}"> more` },
  { id: 'md-raw-script', html: (js) => `text\n\n<script>${js}</script>` },
  { id: 'md-raw-svg', html: (js) => `text <svg onload="${js}"></svg>` },
];

type Tried = { key: ContentKey; id: string };

/** One option value per key carrying every payload, each with an id unique to (key, payload, round). */
function compose(key: ContentKey, round: 'html' | 'md', list: Payload[], tried: Tried[]): string {
  const parts = list.map((p) => {
    const id = `${key}-${round}-${p.id}`;
    tried.push({ key, id });
    return p.html(code(id));
  });
  // HTML must start with a tag to be taken as HTML; Markdown must not.
  return round === 'html'
    ? `<div>${key} ${run}</div>\n${parts.join('\n')}`
    : `${key} ${run}\n\n${parts.join('\n\n')}`;
}

type Observed = { executed: Set<string>; violations: string[]; dialogs: string[] };

/** Opens a page as root with JavaScript, pokes at every admin-content element, and gathers what ran. */
async function visit(page: Page, path: string, seen: Observed) {
  await open(page, path);
  // the footer is refreshed from /api/status after load (5 polls, 200 ms apart)
  await page.waitForTimeout(1_300);
  const zones = page.locator('footer, .admin-content, [data-testid="notice"], [data-testid="home-content"]');
  const count = await zones.count();
  for (let i = 0; i < count; i++) {
    const zone = zones.nth(i);
    const targets = zone.locator('a, button, div, details, summary, input, svg, text, img');
    const n = Math.min(await targets.count(), 120);
    for (let j = 0; j < n; j++) {
      const target = targets.nth(j);
      if (!(await target.isVisible().catch(() => false))) continue;
      await target.hover({ timeout: 1_000, force: true }).catch(() => {});
      const tag = await target.evaluate((el) => el.tagName.toLowerCase()).catch(() => '');
      if (tag === 'a' || tag === 'button' || tag === 'text') {
        const before = page.url();
        await target.click({ timeout: 1_000, force: true, noWaitAfter: true }).catch(() => {});
        await page.waitForTimeout(50);
        await collect(page, seen);
        if (page.url() !== before) await open(page, path);
      }
    }
  }
  await page.waitForTimeout(300);
  await collect(page, seen);
}

/** Opens `path`; a page whose hydration a payload broke is still examined (and its payloads counted). */
async function open(page: Page, path: string) {
  await page.goto(path);
  await ready(page, 'js').catch(() => console.log(`[admin-html] ${path} did not hydrate`));
}

async function collect(page: Page, seen: Observed) {
  const got = await page
    .evaluate(() => {
      const w = window as unknown as { __pwned?: string[]; __csp?: string[] };
      const out = { pwned: [...(w.__pwned ?? [])], csp: [...(w.__csp ?? [])] };
      w.__csp = [];
      return out;
    })
    .catch(() => ({ pwned: [] as string[], csp: [] as string[] }));
  for (const id of got.pwned) seen.executed.add(id);
  seen.violations.push(...got.csp);
}

async function rootPage(seen: Observed): Promise<Page> {
  const page = await h.page('js');
  await signIn(h, 'js', root);
  // Registered through the DevTools protocol, so it runs before the page's own scripts and is not subject to
  // the page's CSP: it records every CSP violation the page reports.
  await page.addInitScript(() => {
    const w = window as unknown as { __csp: string[] };
    w.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      w.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`);
    });
  });
  page.on('console', (msg) => {
    const m = /PWNED:(\S+)/.exec(msg.text());
    if (m?.[1]) seen.executed.add(m[1]);
  });
  page.on('dialog', async (dialog) => {
    seen.dialogs.push(dialog.message());
    await dialog.dismiss().catch(() => {});
  });
  return page;
}

beforeAll(async () => {
  marker = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://marker');
    const p = url.searchParams.get('p');
    if (p) markerHits.add(p);
    else markerLoads.add(url.pathname);
    if (url.pathname === '/evil.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript' });
      res.end(code('script-src-ran'));
      return;
    }
    res.writeHead(204);
    res.end();
  });
  await new Promise<void>((resolve) => marker.listen(0, '127.0.0.1', resolve));
  markerUrl = `http://127.0.0.1:${(marker.address() as AddressInfo).port}`;
  h = await launch();
  orm = await openProductOrm();
  admin = await createE2eUser(orm, `htmladm_${run}`, { role: Role.Admin });
  root = await createE2eUser(orm, `htmlroot_${run}`, { role: Role.Root });
});

afterAll(async () => {
  if (admin && h)
    for (const key of CONTENT_KEYS)
      await api(admin, '/api/option/', { method: 'PUT', body: { key, value: '' } });
  await h?.close();
  await orm?.close(true);
  await new Promise<void>((resolve) => (marker ? marker.close(() => resolve()) : resolve()));
});

describe('admin HTML in Footer, Notice, HomePageContent and About (issue 23 item 1)', () => {
  it.each(['html', 'md'] as const)(
    'no %s payload runs for root on home, about or a console page',
    async (round) => {
      const tried: Tried[] = [];
      for (const key of CONTENT_KEYS) {
        // the Footer is always HTML (new-api inserts it as is); the three content options are tried both ways
        const list = round === 'md' && key !== 'Footer' ? MARKDOWN_PAYLOADS : HTML_PAYLOADS;
        await setOption(key, compose(key, key === 'Footer' ? 'html' : round, list, tried));
      }
      await waitForFooter(`Footer ${run}`);
      const seen: Observed = { executed: new Set(), violations: [], dialogs: [] };
      const page = await rootPage(seen);
      for (const path of ['/', '/about', '/token']) await visit(page, path, seen);
      // what reached the marker: beacons of payloads that ran, and any script/style it was asked for
      for (const hit of markerHits) seen.executed.add(hit);
      markerHits.clear();
      const loads = [...markerLoads];
      markerLoads.clear();
      const executed = [...seen.executed];
      console.log(
        `[admin-html ${round}] payloads tried: ${tried.length}, executed: ${executed.length + seen.dialogs.length}` +
          ` (alerts: ${seen.dialogs.length}), attacker resources loaded: ${loads.length},` +
          ` CSP violations on the pages: ${seen.violations.length}`,
      );
      if (executed.length) console.log(`[admin-html ${round}] executed: ${executed.join(', ')}`);
      if (seen.violations.length)
        console.log(`[admin-html ${round}] violations:\n  ${seen.violations.join('\n  ')}`);
      expect(executed).toEqual([]);
      expect(seen.dialogs).toEqual([]);
      expect(loads).toEqual([]);
      // the sanitizer left nothing for the CSP to block, and the pages themselves run within it
      expect(seen.violations).toEqual([]);
      // the pages still work: the content and the footer are there, the page hydrated
      await page.goto('/');
      await ready(page, 'js');
      expect(await page.locator('footer').textContent()).toContain(`Footer ${run}`);
    },
    240_000,
  );

  it('/api/status answers footer_html sanitized (new-api clients insert it as HTML)', async () => {
    await setOption(
      'Footer',
      `<p class="f">ok</p><img src=x onerror="alert(1)"><script>alert(2)</script><a href="jav&#x09;ascript:alert(3)">l</a>`,
    );
    await waitForFooter('ok');
    const body = (await (await fetch(`${h.baseURL}/api/status`)).json()) as { data: { footer_html: string } };
    expect(body.data.footer_html).toBe('<p class="f">ok</p><img src="x" />l');
  });
});

/** The nonce of a CSP header (or null). */
function nonceOf(csp: string | null): string | null {
  return /'nonce-([A-Za-z0-9+/=]+)'/.exec(csp ?? '')?.[1] ?? null;
}

describe('Content-Security-Policy on every page', () => {
  it('every page has a strict CSP whose nonce is fresh per response and on every script the page renders', async () => {
    const cookie = `sy_session=${root.token}`;
    const nonces = new Set<string>();
    for (const path of [
      '/',
      '/about',
      '/login',
      '/pricing',
      '/token',
      '/topup',
      '/setting',
      '/no-such-page',
    ]) {
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${h.baseURL}${path}`, { headers: { Cookie: cookie } });
        expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
        const csp = res.headers.get('content-security-policy');
        const nonce = nonceOf(csp);
        expect(nonce, `${path}: ${csp}`).toMatch(/^[A-Za-z0-9+/]{22}==$/);
        nonces.add(nonce as string);
        const script = csp?.split(';').find((d) => d.trim().startsWith('script-src')) ?? '';
        expect(script, path).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:/);
        for (const directive of [
          "object-src 'none'",
          "base-uri 'none'",
          "frame-ancestors 'self'",
          "default-src 'self'",
        ])
          expect(csp, path).toContain(directive);
        expect(csp, path).toMatch(/form-action 'self'/);
        expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
        expect(res.headers.get('referrer-policy'), path).toBe('strict-origin-when-cross-origin');
        const html = await res.text();
        const scripts = [...html.matchAll(/<script\b[^>]*>/gi)].map((m) => m[0]);
        expect(scripts.length, path).toBeGreaterThan(0);
        for (const tag of scripts) expect(tag, path).toContain(`nonce="${nonce}"`);
        // no inline event handler anywhere in the page (the CSP would refuse it)
        expect(html, path).not.toMatch(/<[^>]+\son(?:load|error|click|mouseover|focus)=/i);
      }
    }
    // 16 responses, 16 different nonces
    expect(nonces.size).toBe(16);
  });

  it('HTML that got past the sanitizer still cannot run script: the CSP refuses it', async () => {
    const seen: Observed = { executed: new Set(), violations: [], dialogs: [] };
    const page = await rootPage(seen);
    // A sanitizer miss, simulated: the real page and its real headers, with hostile markup spliced in.
    const spliceList = [
      `<script>${code('bypass-inline')}</script>`,
      `<script src="${markerUrl}/evil.js"></script>`,
      `<img src="x-missing.png" onerror="${code('bypass-onerror')}">`,
      `<svg onload="${code('bypass-svg')}"></svg>`,
      `<iframe srcdoc="<script>${code('bypass-srcdoc')}</script>"></iframe>`,
    ];
    const injected = spliceList.join('');
    let spliced = 0;
    await page.route(
      (url) => url.pathname === '/about',
      async (route) => {
        const response = await route.fetch();
        const body = (await response.text()).replace('<body>', () => {
          spliced += 1;
          return `<body>${injected}`;
        });
        // the real headers (CSP included), less the ones that described the original body
        const headers = { ...response.headers() };
        delete headers['content-encoding'];
        delete headers['content-length'];
        await route.fulfill({ status: response.status(), headers, body });
      },
    );
    await page.goto('/about');
    await ready(page, 'js');
    expect(spliced).toBe(1);
    // Markup inserted in the browser the way the footer refresh inserts footer_html (innerHTML), and a
    // javascript: link clicked (React re-renders the document when it finds the spliced nodes, so these are
    // made after hydration).
    await page.evaluate(
      ({ html, js }) => {
        const box = document.createElement('div');
        box.innerHTML = html;
        document.body.append(box);
        const a = document.createElement('a');
        a.href = `javascript:${js}`;
        a.textContent = 'bypass';
        document.body.append(a);
        a.click();
      },
      {
        html: `<img src="x-missing.png" onerror="${code('bypass-inner-onerror')}"><svg><animate onbegin="${code('bypass-inner-svg')}" attributeName="x" dur="1s"/></svg>`,
        js: code('bypass-js-url'),
      },
    );
    await page.waitForTimeout(500);
    await collect(page, seen);
    for (const hit of markerHits) seen.executed.add(hit);
    markerHits.clear();
    for (const load of markerLoads) seen.executed.add(`load:${load}`);
    markerLoads.clear();
    console.log(
      `[csp bypass] injected: ${spliceList.length + 3}, executed: ${seen.executed.size}, CSP violations: ${seen.violations.length}`,
    );
    expect([...seen.executed]).toEqual([]);
    expect(seen.violations.length).toBeGreaterThanOrEqual(4);
    // the page itself still runs (hydrated under the same CSP)
    expect(await page.locator('html').getAttribute('data-hydrated')).toBe('true');
    await page.unrouteAll();
  });
});
