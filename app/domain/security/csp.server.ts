/**
 * The security headers of every HTML page (ADR 032): a strict Content-Security-Policy with a fresh nonce per
 * response, so that script runs only when the page itself put it there; even HTML that got past the sanitizer
 * (app/domain/security/sanitize-html.server.ts) cannot run script. Also nosniff and a referrer policy.
 */
import { randomBytes } from 'node:crypto';
import { providerEndpoints } from '#app/domain/oauth/oauth2.server.ts';

/** 128 random bits, base64: a fresh nonce for one response. */
export function createNonce(): string {
  return randomBytes(16).toString('base64');
}

function originOf(url: string): string | null {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * Where a form on our pages may lead. The login form's third-party buttons post to the console, which answers
 * with a redirect to the provider's authorize page; browsers check that redirect against form-action, so the
 * providers' authorize origins (OAUTH_*_AUTHORIZE_URL may point elsewhere) are listed next to 'self'.
 */
function formActionSources(env: Env): string[] {
  const origins = new Set<string>();
  for (const provider of ['github', 'linuxdo'] as const) {
    const origin = originOf(providerEndpoints(provider, env as NodeJS.ProcessEnv).authorize);
    if (origin) origins.add(origin);
  }
  return ["'self'", ...origins];
}

type Env = Record<string, string | undefined>;

export type CspOptions = {
  /** Vite's dev server (HMR over a WebSocket, modules from memory); never set in production. */
  dev?: boolean;
  /** where OAUTH_*_AUTHORIZE_URL are read (process.env) */
  env?: Env;
};

/**
 * The policy:
 * - script-src: only scripts carrying this response's nonce, and what they load ('strict-dynamic': Remix's
 *   module imports, the Turnstile and Telegram widgets the pages add); no host list, no 'unsafe-inline';
 * - style-src 'self' 'unsafe-inline': react-aria positions overlays with style attributes and a few pages have
 *   a <style> element; style cannot run script, and admin HTML keeps only a short list of plain properties;
 * - img-src: this site, data: (inline icons) and any http(s) image (logo, admin content, QR codes);
 * - frame-src: the URL-frame feature (HomePageContent/About), chat pages, Turnstile and Telegram frames;
 * - object-src 'none', base-uri 'none', frame-ancestors 'self', form-action 'self' (+ OAuth authorize origins).
 */
export function contentSecurityPolicy(nonce: string, options: CspOptions = {}): string {
  const env: Env = options.env ?? process.env;
  const directives: [string, ...string[]][] = [
    ['default-src', "'self'"],
    ['script-src', `'nonce-${nonce}'`, "'strict-dynamic'"],
    ['style-src', "'self'", "'unsafe-inline'"],
    ['img-src', "'self'", 'data:', 'blob:', 'https:', 'http:'],
    ['font-src', "'self'", 'data:'],
    ['connect-src', "'self'", ...(options.dev ? ['ws:', 'wss:'] : [])],
    ['frame-src', "'self'", 'https:', 'http:'],
    ['object-src', "'none'"],
    ['base-uri', "'none'"],
    ['frame-ancestors', "'self'"],
    ['form-action', ...formActionSources(env)],
  ];
  return directives.map((d) => d.join(' ')).join('; ');
}

/** Sets the page headers on a document response. */
export function setPageSecurityHeaders(headers: Headers, nonce: string, options: CspOptions = {}): void {
  headers.set('Content-Security-Policy', contentSecurityPolicy(nonce, options));
  headers.set('X-Content-Type-Options', 'nosniff');
  if (!headers.has('Referrer-Policy')) headers.set('Referrer-Policy', 'strict-origin-when-cross-origin');
}
