import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy, createNonce, setPageSecurityHeaders } from './csp.server.ts';

function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp.split(';').map((d) => {
      const [name = '', ...values] = d.trim().split(/\s+/);
      return [name, values];
    }),
  );
}

describe('contentSecurityPolicy', () => {
  it('lets only scripts with this response nonce run (and what they load), nothing inline or from a host list', () => {
    const csp = directives(contentSecurityPolicy('abc123', { env: {} }));
    expect(csp.get('script-src')).toEqual(["'nonce-abc123'", "'strict-dynamic'"]);
    expect(csp.get('object-src')).toEqual(["'none'"]);
    expect(csp.get('base-uri')).toEqual(["'none'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'self'"]);
    expect(csp.get('default-src')).toEqual(["'self'"]);
    expect(csp.get('connect-src')).toEqual(["'self'"]);
  });

  it("lets forms lead to this site and the OAuth providers' authorize pages (the login buttons post, then redirect)", () => {
    expect(directives(contentSecurityPolicy('n', { env: {} })).get('form-action')).toEqual([
      "'self'",
      'https://github.com',
      'https://connect.linux.do',
    ]);
    const env = {
      OAUTH_GITHUB_AUTHORIZE_URL: 'http://127.0.0.1:4100/authorize',
      OAUTH_LINUXDO_AUTHORIZE_URL: 'junk',
    };
    expect(directives(contentSecurityPolicy('n', { env })).get('form-action')).toEqual([
      "'self'",
      'http://127.0.0.1:4100',
    ]);
  });

  it("allows Vite's HMR WebSocket only in dev", () => {
    expect(directives(contentSecurityPolicy('n', { dev: true, env: {} })).get('connect-src')).toEqual([
      "'self'",
      'ws:',
      'wss:',
    ]);
  });
});

describe('createNonce and setPageSecurityHeaders', () => {
  it('makes a fresh 128-bit nonce each time', () => {
    const nonces = new Set(Array.from({ length: 100 }, () => createNonce()));
    expect(nonces.size).toBe(100);
    for (const n of nonces) expect(Buffer.from(n, 'base64')).toHaveLength(16);
  });

  it('sets CSP, nosniff and a referrer policy (one a route set is kept)', () => {
    const headers = new Headers();
    setPageSecurityHeaders(headers, 'n1', { env: {} });
    expect(headers.get('content-security-policy')).toContain("'nonce-n1'");
    expect(headers.get('x-content-type-options')).toBe('nosniff');
    expect(headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin');
    const own = new Headers({ 'Referrer-Policy': 'no-referrer' });
    setPageSecurityHeaders(own, 'n2', { env: {} });
    expect(own.get('referrer-policy')).toBe('no-referrer');
  });
});
