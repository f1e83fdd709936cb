import { testRedisPrefix } from '@switchyard/db/testing.ts';
import { createClient } from 'redis';
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

  it('fails fast on store operations while Redis is unreachable', async () => {
    const store = track(new RedisStore({ url: 'redis://127.0.0.1:1', keyPrefix, log: silentLogger }));
    expect(await store.waitUntilReady(200)).toBe(false);
    const started = Date.now();
    await expect(
      store.reserve({ requestId: 'r', userId: 1, tokenId: null, amount: 1, holdTtlMs: 1_000, now: 0 }),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(100);
  });

  it('keeps its keys under the prefix, with the outbox as a stream', async () => {
    const prefix = `${testRedisPrefix()}store-layout:${crypto.randomUUID()}:`;
    const admin = createClient({ url: redisUrl });
    await admin.connect();
    try {
      const store = track(new RedisStore({ url: redisUrl, keyPrefix: prefix, log: silentLogger }));
      expect(await store.waitUntilReady(3_000)).toBe(true);
      const user = { kind: 'user', id: 1 } as const;
      expect(await store.loadBalance(user, 0, 1_000, 60_000)).toBe(true);
      expect(
        await store.reserve({
          requestId: 'r',
          userId: 1,
          tokenId: null,
          amount: 5,
          holdTtlMs: 1_000,
          now: 1,
        }),
      ).toEqual({ ok: true });
      const keys: string[] = [];
      for await (const batch of admin.scanIterator({ MATCH: `${prefix}*` })) keys.push(...batch);
      expect(keys.map((k) => k.slice(prefix.length)).sort()).toEqual([
        'bal:u:1',
        'hold:r',
        'holds',
        'pend:u:1',
      ]);
      await store.settle({
        requestId: 'r',
        userId: 1,
        tokenId: null,
        amount: 5,
        success: true,
        payload: '{}',
        now: 2,
      });
      expect(await admin.type(`${prefix}outbox`)).toBe('stream');
      expect(await admin.exists(`${prefix}hold:r`)).toBe(0);
      const ttl = await admin.pTTL(`${prefix}settled:r`);
      expect(ttl).toBeGreaterThan(23 * 3_600_000);
    } finally {
      const keys: string[] = [];
      for await (const batch of admin.scanIterator({ MATCH: `${prefix}*` })) keys.push(...batch);
      if (keys.length) await admin.del(keys);
      await admin.close();
    }
  });

  it('re-sends a script Redis no longer knows (NOSCRIPT after a restart or SCRIPT FLUSH)', async () => {
    const prefix = `${testRedisPrefix()}store-noscript:${crypto.randomUUID()}:`;
    const admin = createClient({ url: redisUrl });
    await admin.connect();
    try {
      const store = track(new RedisStore({ url: redisUrl, keyPrefix: prefix, log: silentLogger }));
      expect(await store.waitUntilReady(3_000)).toBe(true);
      const token = { kind: 'token', id: 3 } as const;
      await store.invalidateBalance(token);
      // Only this store sends scripts by SHA; everything else in the repo uses EVAL, so a flush is harmless.
      await admin.scriptFlush();
      await store.invalidateBalance(token);
      expect(await store.balanceGeneration(token)).toBe(2);
    } finally {
      const keys: string[] = [];
      for await (const batch of admin.scanIterator({ MATCH: `${prefix}*` })) keys.push(...batch);
      if (keys.length) await admin.del(keys);
      await admin.close();
    }
  });
});
