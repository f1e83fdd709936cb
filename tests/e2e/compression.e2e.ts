/**
 * The built product serves its pages, JavaScript and CSS compressed (issue 15: about 590 KB of JavaScript went
 * out uncompressed), with Vary: Accept-Encoding; the middleware's stream rules are covered by
 * server/compression.test.ts.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { baseURL } from './harness.ts';

type Raw = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: number;
  text: string;
};

/** A GET whose body is not decoded (node:http), so the sizes are those on the wire. */
function rawGet(path: string, acceptEncoding?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = acceptEncoding ? { 'Accept-Encoding': acceptEncoding } : {};
    request(`${baseURL()}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          bytes: body.length,
          text: body.toString(),
        });
      });
    })
      .on('error', reject)
      .end();
  });
}

describe('compression of the built product', () => {
  it('serves every JS and CSS asset of the home page br/gzip-encoded, much smaller than plain', async () => {
    const plainHome = await rawGet('/');
    expect(plainHome.status).toBe(200);
    expect(plainHome.headers['content-encoding']).toBeUndefined();
    const assets = [...plainHome.text.matchAll(/(?:href|src)="(\/assets\/[^"]+\.(?:js|css))"/g)].map(
      (m) => m[1] ?? '',
    );
    expect(assets.length).toBeGreaterThan(3);
    let plain = 0;
    let compressed = 0;
    for (const asset of new Set(assets)) {
      const p = await rawGet(asset);
      const br = await rawGet(asset, 'gzip, deflate, br');
      const gz = await rawGet(asset, 'gzip');
      expect(p.status, asset).toBe(200);
      if (p.bytes < 1024) continue;
      expect(br.headers['content-encoding'], asset).toBe('br');
      expect(gz.headers['content-encoding'], asset).toBe('gzip');
      expect(br.headers.vary, asset).toContain('Accept-Encoding');
      expect(br.headers['cache-control'], asset).toContain('immutable');
      plain += p.bytes;
      compressed += br.bytes;
    }
    expect(compressed).toBeLessThan(plain / 2.5);
  });

  it.each([
    ['/', 'gzip'],
    ['/', 'br'],
    ['/pricing', 'br'],
    ['/login', 'gzip'],
  ])('serves the page %s %s-encoded', async (page, enc) => {
    const res = await rawGet(page, enc);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.headers['content-encoding']).toBe(enc);
    expect(res.headers.vary).toContain('Accept-Encoding');
  });

  it('answers the JSON API compressed when asked', async () => {
    const res = await rawGet('/api/status', 'gzip');
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.headers['content-encoding']).toBe('gzip');
  });
});
