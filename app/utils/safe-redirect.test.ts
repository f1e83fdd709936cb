import { describe, expect, it } from 'vitest';
import { HOSTILE_REDIRECTS as HOSTILE } from './hostile-redirects.testing.ts';
import { hasControlCharacter, safeRedirect } from './safe-redirect.ts';

const ORIGIN = 'https://console.example.com';

describe('safeRedirect', () => {
  it.each(HOSTILE)('never leaves our origin: %j', (target) => {
    for (const base of [undefined, ORIGIN, new Request(`${ORIGIN}/login`)]) {
      const out = safeRedirect(target, '/token', { base });
      expect(out.startsWith('/')).toBe(true);
      expect(out.startsWith('//')).toBe(false);
      expect(hasControlCharacter(out) || out.includes('\\')).toBe(false);
      // Resolved the way a browser resolves a Location header, it stays on our origin.
      expect(new URL(out, ORIGIN).origin).toBe(ORIGIN);
    }
  });

  it('covers at least 25 hostile targets', () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(25);
  });

  it('keeps same-origin paths with their query and fragment', () => {
    expect(safeRedirect('/token?p=2&size=20', '/')).toBe('/token?p=2&size=20');
    expect(safeRedirect('/log#top', '/')).toBe('/log#top');
    expect(safeRedirect('/channel/5/edit?redirectTo=%2Fchannel%3Fp%3D2', '/')).toBe(
      '/channel/5/edit?redirectTo=%2Fchannel%3Fp%3D2',
    );
    expect(safeRedirect('/setting?tab=modelTab', '/')).toBe('/setting?tab=modelTab');
  });

  it('takes an absolute URL of our own origin down to its path, and only with that origin as the base', () => {
    expect(safeRedirect(`${ORIGIN}/token?p=3`, '/', { base: ORIGIN })).toBe('/token?p=3');
    expect(safeRedirect(`${ORIGIN}/token?p=3`, '/')).toBe('/');
    expect(safeRedirect('http://console.example.com/token', '/', { base: ORIGIN })).toBe('/');
    // a scheme without slashes is judged as the browser reads it (another host), never as a path of ours
    expect(safeRedirect('https:console.example.com/token', '/', { base: ORIGIN })).toBe('/token');
    expect(safeRedirect('https:evil.example/token', '/x', { base: ORIGIN })).toBe('/x');
    expect(safeRedirect('token', '/x', { base: ORIGIN })).toBe('/x');
  });

  it('gives the fallback for what is not a string, empty, or an avoided path', () => {
    for (const value of [null, undefined, 5, {}, ['/token'], ''])
      expect(safeRedirect(value, '/token')).toBe('/token');
    const avoid = /^\/(login|register|reset)(\/|$)/;
    expect(safeRedirect('/login?redirectTo=/x', '/token', { avoid })).toBe('/token');
    expect(safeRedirect('/register', '/token', { avoid })).toBe('/token');
    expect(safeRedirect('/log', '/token', { avoid })).toBe('/log');
  });
});
