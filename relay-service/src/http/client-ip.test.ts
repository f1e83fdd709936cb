import { describe, expect, it } from 'vitest';
import { parseRelayConfig } from '../config.ts';
import {
  createClientIpResolver,
  FORWARDED_CLIENT_HEADER,
  parseTrustProxy,
  resolveClientIp,
  signClientIp,
  verifyClientIp,
} from './client-ip.ts';

const S = 'client-ip-internal-secret-0123456789abcdef';

describe('TRUST_PROXY', () => {
  it('parses false, true, a hop count and a list; refuses anything else', () => {
    expect(parseTrustProxy('false')).toBe(false);
    expect(parseTrustProxy('')).toBe(false);
    expect(parseTrustProxy('true')).toBe(true);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('10.0.0.0/8, 127.0.0.1,loopback')).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      'loopback',
    ]);
    expect(() => parseTrustProxy('yes')).toThrow(/"yes"/);
    expect(() => parseTrustProxy('10.0.0.0/99')).toThrow();
    expect(parseRelayConfig({ INTERNAL_API_SECRET: S, TRUST_PROXY: '1' }).TRUST_PROXY).toBe(1);
    expect(parseRelayConfig({ INTERNAL_API_SECRET: S }).TRUST_PROXY).toBe(false);
    // startRelay parses again what main.ts parsed.
    expect(
      parseRelayConfig(parseRelayConfig({ INTERNAL_API_SECRET: S, TRUST_PROXY: 'private' })).TRUST_PROXY,
    ).toEqual(['private']);
    expect(() => parseRelayConfig({ INTERNAL_API_SECRET: S, TRUST_PROXY: 'maybe' })).toThrow(/TRUST_PROXY/);
  });
});

describe('resolveClientIp', () => {
  const xff = '6.6.6.6, 10.9.9.9, 203.0.113.7';

  it('false: the socket address, whatever X-Forwarded-For says (also from loopback)', () => {
    expect(resolveClientIp('127.0.0.1', xff, false)).toBe('127.0.0.1');
    expect(resolveClientIp('::ffff:127.0.0.1', '10.9.9.9', false)).toBe('127.0.0.1');
  });

  it('a hop count takes the right-most untrusted hop, never the left-most one the client wrote', () => {
    expect(resolveClientIp('10.0.0.2', xff, true)).toBe('203.0.113.7');
    expect(resolveClientIp('10.0.0.2', xff, 2)).toBe('10.9.9.9');
    // More trusted hops than the header has: the left-most is all there is.
    expect(resolveClientIp('10.0.0.2', '203.0.113.7', 5)).toBe('203.0.113.7');
    expect(resolveClientIp('10.0.0.2', undefined, true)).toBe('10.0.0.2');
  });

  it('a list trusts those proxies only, walking from the socket', () => {
    const trust = parseTrustProxy('10.0.0.0/8');
    // The peer is not a proxy: its header means nothing.
    expect(resolveClientIp('198.51.100.1', xff, trust)).toBe('198.51.100.1');
    // 203.0.113.7 is the first hop that is not a proxy (10.9.9.9 beyond it was written by the client).
    expect(resolveClientIp('10.0.0.2', xff, trust)).toBe('203.0.113.7');
    expect(resolveClientIp('10.0.0.2', '6.6.6.6, 10.1.1.1', trust)).toBe('6.6.6.6');
    expect(resolveClientIp('127.0.0.1', '6.6.6.6', parseTrustProxy('loopback'))).toBe('6.6.6.6');
  });

  it('a hop that is not an address ends at the proxy that reported it', () => {
    expect(resolveClientIp('10.0.0.2', 'not-an-ip', true)).toBe('10.0.0.2');
    expect(resolveClientIp('10.0.0.2', '1.2.3.4, garbage', 2)).toBe('10.0.0.2');
  });
});

describe("the console's keyed address", () => {
  it('verifies only with the same secret and the same address', () => {
    const value = signClientIp('s3cret', '10.9.9.9');
    expect(verifyClientIp('s3cret', value)).toBe('10.9.9.9');
    expect(verifyClientIp('other', value)).toBeNull();
    expect(verifyClientIp('s3cret', value.replace('10.9.9.9', '10.9.9.8'))).toBeNull();
    expect(verifyClientIp('', value)).toBeNull();
    expect(verifyClientIp('s3cret', '10.9.9.9;')).toBeNull();
  });

  it('the relay believes it from any peer, and nothing else from a peer that is not a proxy', () => {
    const resolve = createClientIpResolver({ trustProxy: false, secret: 's3cret' });
    const headers = (h: Record<string, string>) => new Headers(h);
    expect(
      resolve('127.0.0.1', headers({ [FORWARDED_CLIENT_HEADER]: signClientIp('s3cret', '10.9.9.9') })),
    ).toBe('10.9.9.9');
    expect(
      resolve('127.0.0.1', headers({ [FORWARDED_CLIENT_HEADER]: signClientIp('nope', '10.9.9.9') })),
    ).toBe('127.0.0.1');
    expect(resolve('127.0.0.1', headers({ 'x-forwarded-for': '10.9.9.9' }))).toBe('127.0.0.1');
    const noSecret = createClientIpResolver({ trustProxy: false, secret: '' });
    expect(noSecret('127.0.0.1', headers({ [FORWARDED_CLIENT_HEADER]: signClientIp('', '10.9.9.9') }))).toBe(
      '127.0.0.1',
    );
  });
});
