import { describe, expect, it } from 'vitest';
import {
  clearStateCookies,
  isFresh,
  issueOAuthState,
  readStateBinding,
  STATE_TTL_SECONDS,
} from './state.server.ts';

const cookieOf = (setCookie: string) => setCookie.split(';')[0] ?? '';
const req = (cookie = '') =>
  new Request('http://localhost/oauth/github', { headers: cookie ? { Cookie: cookie } : {} });

describe('OAuth state cookie', () => {
  it('binds the state and the invite code to the browser', () => {
    const { state, setCookie } = issueOAuthState(req(), 'INV1te');
    const binding = readStateBinding(req(`theme=dark; ${cookieOf(setCookie)}`), state);
    expect(binding?.aff).toBe('INV1te');
    expect(binding && isFresh(binding)).toBe(true);
    const forged = `${state.slice(0, -1)}${state.endsWith('x') ? 'y' : 'x'}`;
    expect(readStateBinding(req(cookieOf(setCookie)), forged)).toBeNull();
    expect(readStateBinding(req(), state)).toBeNull();
  });

  it('keeps several tabs apart and ignores a malformed invite code', () => {
    const a = issueOAuthState(req(), 'bad code!');
    const b = issueOAuthState(req());
    const both = req(`${cookieOf(a.setCookie)}; ${cookieOf(b.setCookie)}`);
    expect(readStateBinding(both, a.state)?.aff).toBe('');
    expect(readStateBinding(both, b.state)).not.toBeNull();
    expect(clearStateCookies(both)).toHaveLength(2);
    expect(clearStateCookies(both).every((c) => c.includes('Max-Age=0'))).toBe(true);
  });

  it('expires with its lifetime', () => {
    const issuedAt = Math.floor(Date.now() / 1000);
    expect(isFresh({ issuedAt, aff: '' })).toBe(true);
    expect(isFresh({ issuedAt: issuedAt - STATE_TTL_SECONDS - 1, aff: '' })).toBe(false);
    expect(isFresh({ issuedAt: issuedAt + 3600, aff: '' })).toBe(false);
  });

  it('marks the cookie Secure on https', () => {
    expect(issueOAuthState(new Request('https://x/')).setCookie).toContain('Secure');
  });
});
