import { describe, expect, it } from 'vitest';
import { CLIENT_IP_HEADER, clientIp } from '#app/domain/security/rate-limit.server.ts';
import { withClientIp } from './console.ts';

describe('withClientIp', () => {
  it('replaces a client-sent address header with the socket address', () => {
    const forged = new Request('http://localhost/api/user/login', {
      method: 'POST',
      headers: { [CLIENT_IP_HEADER]: '6.6.6.6', 'X-Forwarded-For': '7.7.7.7' },
      body: '{}',
    });
    const request = withClientIp(forged, '::ffff:127.0.0.5');
    expect(request.headers.get(CLIENT_IP_HEADER)).toBe('127.0.0.5');
    expect(clientIp(request)).toBe('127.0.0.5');
    const none = withClientIp(
      new Request('http://localhost/', { headers: { [CLIENT_IP_HEADER]: '6.6.6.6' } }),
      undefined,
    );
    expect(none.headers.get(CLIENT_IP_HEADER)).toBeNull();
  });
});
