import { describe, expect, it } from 'vitest';
import { createMemoryPubSub, createRedisPubSub, type PubSub } from './pubsub.ts';
import { testRedisUrl } from './testing.ts';

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
});
