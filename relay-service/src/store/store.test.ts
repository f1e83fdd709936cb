import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../log.ts';
import { createStore } from './index.ts';
import { MemoryStore } from './memory.ts';
import { RedisStore } from './redis.ts';
import type { RelayStore } from './types.ts';

const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `test:${process.pid}:`;
const open: RelayStore[] = [];
const track = <T extends RelayStore>(s: T) => {
  open.push(s);
  return s;
};

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

describe('MemoryStore', () => {
  it('answers ping until closed', async () => {
    const store = new MemoryStore();
    expect(store.mode).toBe('memory');
    await expect(store.ping()).resolves.toBeUndefined();
    await store.close();
    await expect(store.ping()).rejects.toThrow(/closed/);
  });

  it('is what createStore returns without REDIS_URL, logging the single-instance limit once', async () => {
    const lines: string[] = [];
    const store = track(await createStore({ log: { ...silentLogger, info: (m) => lines.push(m) } }));
    expect(store.mode).toBe('memory');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/single relay instance/);
  });
});

describe('RedisStore', () => {
  it('pings a reachable Redis and rejects after close', async () => {
    const store = track(await createStore({ redisUrl, keyPrefix, log: silentLogger }));
    expect(store.mode).toBe('redis');
    await expect(store.ping()).resolves.toBeUndefined();
    await store.close();
    await expect(store.ping()).rejects.toThrow(/closed/);
    await store.close(); // idempotent
  });

  it('fails fast while Redis is unreachable instead of queueing', async () => {
    const warnings: string[] = [];
    const store = track(
      new RedisStore({
        url: 'redis://127.0.0.1:1',
        keyPrefix,
        log: { ...silentLogger, warn: (m) => warnings.push(m) },
      }),
    );
    expect(await store.waitUntilReady(300)).toBe(false);
    const started = Date.now();
    await expect(store.ping()).rejects.toThrow(/not connected/);
    expect(Date.now() - started).toBeLessThan(100);
    expect(warnings.length).toBe(1);
  });
});
