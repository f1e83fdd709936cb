import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryPubSub, createPgPubSub, createRedisPubSub, type PubSub } from './pubsub.ts';
import { createTestDatabase, type TestDatabase, testRedisUrl } from './testing.ts';

async function roundTrip(pubsub: PubSub, channel: string) {
  const got: string[] = [];
  const unsubscribe = await pubsub.subscribe(channel, (m) => got.push(m));
  await pubsub.publish(channel, 'one');
  await new Promise((r) => setTimeout(r, 100));
  await unsubscribe();
  await pubsub.publish(channel, 'two');
  await new Promise((r) => setTimeout(r, 100));
  return got;
}

describe('PubSub', () => {
  it('in-process delivers until unsubscribed', async () => {
    const pubsub = createMemoryPubSub();
    expect(await roundTrip(pubsub, 'c')).toEqual(['one']);
    await pubsub.close();
  });

  it('Redis delivers until unsubscribed', async () => {
    const pubsub = await createRedisPubSub(testRedisUrl());
    expect(await roundTrip(pubsub, `sy:test:pubsub:${process.pid}`)).toEqual(['one']);
    await pubsub.close();
  });

  describe('PostgreSQL LISTEN/NOTIFY', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase({ suffix: 'pubsub' });
    });
    afterAll(async () => {
      await db?.drop();
    });

    it('delivers until unsubscribed', async () => {
      const pubsub = await createPgPubSub(db.url);
      expect(await roundTrip(pubsub, 'switchyard:test:pubsub')).toEqual(['one']);
      await pubsub.close();
    });

    it('delivers to another process on the same database within a second, and refuses too long a channel', async () => {
      const a = await createPgPubSub(db.url);
      const b = await createPgPubSub(db.url);
      try {
        const got: string[] = [];
        await b.subscribe('switchyard:options', (m) => got.push(m));
        const sent = Date.now();
        await a.publish('switchyard:options', '{"key":"SystemName"}');
        await until(() => got.length === 1);
        expect(Date.now() - sent).toBeLessThan(1_000);
        expect(got).toEqual(['{"key":"SystemName"}']);
        await expect(a.publish('x'.repeat(64), 'm')).rejects.toThrow(/longer than 63 bytes/);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('listens again after its connection is killed', async () => {
      const a = await createPgPubSub(db.url);
      const b = await createPgPubSub(db.url, { retryMs: 50 });
      const errors = console.error;
      console.error = () => {};
      try {
        const got: string[] = [];
        await b.subscribe('switchyard:reconnect', (m) => got.push(m));
        const killed = await db.orm.em.getConnection().execute(
          `select pg_terminate_backend(pid) as ok from pg_stat_activity
              where datname = current_database() and query like 'LISTEN %switchyard:reconnect%'`,
          [],
          'all',
        );
        expect(killed.length).toBe(1);
        await until(async () => {
          await a.publish('switchyard:reconnect', 'again');
          await new Promise((r) => setTimeout(r, 50));
          return got.includes('again');
        }, 5_000);
      } finally {
        console.error = errors;
        await a.close();
        await b.close();
      }
    });
  });
});

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 1_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
