import { describe, expect, it } from 'vitest';
import { runtime, serveHttp } from './runtime.ts';

describe('runtime', () => {
  it('detects Node', () => {
    expect(runtime).toEqual({ name: 'node', version: process.versions.node });
  });

  it('serveHttp drains in-flight requests on close and then refuses new ones', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const listener = await serveHttp(
      async (req) => {
        if (new URL(req.url).pathname === '/slow') await gate;
        return new Response('done');
      },
      { port: 0, hostname: '127.0.0.1' },
    );
    const url = `http://127.0.0.1:${listener.port}`;
    expect(await (await fetch(`${url}/fast`)).text()).toBe('done');

    const slow = fetch(`${url}/slow`);
    await new Promise((r) => setTimeout(r, 50));
    const closed = listener.close(5_000);
    setTimeout(release, 100);
    expect(await (await slow).text()).toBe('done');
    await closed;
    await expect(fetch(`${url}/fast`)).rejects.toThrow();
  });

  it('serveHttp closes hanging requests after the drain timeout', async () => {
    const listener = await serveHttp(() => new Promise<Response>(() => {}), {
      port: 0,
      hostname: '127.0.0.1',
    });
    const hanging = fetch(`http://127.0.0.1:${listener.port}/`).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await listener.close(200);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await hanging).toBeInstanceOf(Error);
  });
});
