/**
 * The "other" tab's update check against a local fake releases server answering GitHub's latest-release JSON:
 * the same tag is 'already latest', a later one is offered with its notes and link, and an unreachable server, an
 * error status or a body without `tag_name` is 'failed'.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkForUpdate, isNewerVersion } from '#app/domain/settings/other.server.ts';

let server: Server;
let base: string;
let answer: { status: number; body: unknown } = { status: 200, body: {} };
const seen: { url?: string; accept?: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url, accept: req.headers.accept });
    res.writeHead(answer.status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const release = (tag: string) => ({
  tag_name: tag,
  name: tag,
  html_url: `https://github.com/switchyard-gateway/switchyard/releases/tag/${tag}`,
  body: '- faster relay',
  published_at: '2026-11-20T10:00:00Z',
});

describe('checkForUpdate', () => {
  it('says already latest when the latest tag is the running version (or older)', async () => {
    answer = { status: 200, body: release('v0.1.0') };
    expect(await checkForUpdate(`${base}/repos/x/y/releases/latest`, 'v0.1.0')).toEqual({
      kind: 'latest',
      current: 'v0.1.0',
    });
    expect(seen.at(-1)).toEqual({ url: '/repos/x/y/releases/latest', accept: 'application/vnd.github+json' });
    answer = { status: 200, body: release('v0.0.9') };
    expect((await checkForUpdate(`${base}/latest`, 'v0.1.0')).kind).toBe('latest');
  });

  it('offers a newer release with its tag, link and notes', async () => {
    answer = { status: 200, body: release('v0.10.0') };
    expect(await checkForUpdate(`${base}/latest`, 'v0.9.3')).toEqual({
      kind: 'newer',
      current: 'v0.9.3',
      tag: 'v0.10.0',
      url: 'https://github.com/switchyard-gateway/switchyard/releases/tag/v0.10.0',
      notes: '- faster relay',
      publishedAt: '2026-11-20T10:00:00Z',
    });
  });

  it('fails when the server is unreachable, answers an error, or not a release', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await checkForUpdate(`http://127.0.0.1:${port}/latest`, 'v0.1.0')).toEqual({ kind: 'failed' });
    answer = { status: 403, body: { message: 'API rate limit exceeded' } };
    expect(await checkForUpdate(`${base}/latest`, 'v0.1.0')).toEqual({ kind: 'failed' });
    answer = { status: 200, body: { message: 'Not Found' } };
    expect(await checkForUpdate(`${base}/latest`, 'v0.1.0')).toEqual({ kind: 'failed' });
  });

  it('compares versions numerically', () => {
    expect(isNewerVersion('v1.10.0', 'v1.9.9')).toBe(true);
    expect(isNewerVersion('1.2', 'v1.2.0')).toBe(false);
    expect(isNewerVersion('v2.0.0-rc.1', 'v1.9.0')).toBe(true);
    expect(isNewerVersion('nightly', 'v1.0.0')).toBe(true);
  });
});
