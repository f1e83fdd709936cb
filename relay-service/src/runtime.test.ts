import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { releaseStartupMemory, runtime, serveHttp } from './runtime.ts';

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

  it('releaseStartupMemory shrinks a heap grown by start-up garbage and leaves gc unexposed', async () => {
    // Objects that survive a few scavenges, like module loading makes: V8 grows the heap for them.
    let keep: object[][] = [];
    for (let round = 0; round < 40; round++) {
      keep.push(Array.from({ length: 20_000 }, (_, i) => ({ round, i })));
      if (keep.length > 10) keep.shift();
    }
    keep = [];
    const before = v8.getHeapStatistics().total_heap_size;
    await releaseStartupMemory();
    expect(v8.getHeapStatistics().total_heap_size).toBeLessThan(before);
    if (!('gc' in globalThis)) expect(vm.runInNewContext('typeof gc')).toBe('undefined');
  });
});
