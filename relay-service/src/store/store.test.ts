import { type AddressInfo, createServer } from 'node:net';
import { testRedisPrefix } from '@switchyard/db/testing.ts';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../log.ts';
import { createStore } from './index.ts';
import { MemoryStore } from './memory.ts';
import { RedisStore, RedisTimeoutError } from './redis.ts';
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

  it('fails a command that Redis accepted but never answers, after commandTimeoutMs', async () => {
    // A RESP peer that answers the client's connection handshake, then goes silent (a hung Redis).
    let answering = true;
    const sockets = new Set<import('node:net').Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      let buf = '';
      socket.on('data', (chunk) => {
        buf += chunk.toString('latin1');
        for (let parsed = takeCommand(buf); parsed; parsed = takeCommand(buf)) {
          buf = buf.slice(parsed.length);
          if (answering) socket.write(parsed.name === 'PING' ? '+PONG\r\n' : '+OK\r\n');
        }
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const store = track(
        new RedisStore({
          url: `redis://127.0.0.1:${port}`,
          keyPrefix,
          log: silentLogger,
          commandTimeoutMs: 200,
        }),
      );
      expect(await store.waitUntilReady(2_000)).toBe(true);
      await expect(store.ping()).resolves.toBeUndefined();
      answering = false;
      const started = Date.now();
      await expect(store.ping()).rejects.toBeInstanceOf(RedisTimeoutError);
      await expect(store.balance({ kind: 'user', id: 1 })).rejects.toThrow(/did not answer within 200 ms/);
      // Failed within the timeout plus one watchdog sweep (50 ms here), not left hanging.
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      await store.close().catch(() => {});
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
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
      ).toEqual({ ok: true, held: 5 });
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
      expect(ttl).toBeGreaterThan(59 * 60_000);
      expect(ttl).toBeLessThanOrEqual(60 * 60_000);
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

/** One RESP command (an array of bulk strings) from the front of `buf`: its upper-cased name and byte length. */
function takeCommand(buf: string): { name: string; length: number } | null {
  const head = /^\*(\d+)\r\n/.exec(buf);
  if (!head) return null;
  let at = head[0].length;
  let name = '';
  for (let i = 0; i < Number(head[1]); i++) {
    const len = /^\$(\d+)\r\n/.exec(buf.slice(at));
    if (!len) return null;
    const start = at + len[0].length;
    const end = start + Number(len[1]);
    if (buf.length < end + 2) return null;
    if (i === 0) name = buf.slice(start, end).toUpperCase();
    at = end + 2;
  }
  return { name, length: at };
}
