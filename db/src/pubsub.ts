import { createClient } from 'redis';

export type PubSubHandler = (message: string) => void;

/** Fire-and-forget messages between processes (cache invalidation). Delivery is at most once. */
export interface PubSub {
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is active; the returned function unsubscribes this handler. */
  subscribe(channel: string, handler: PubSubHandler): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** In-process implementation (single instance, tests, embedded mode). Handlers run on a microtask. */
export function createMemoryPubSub(): PubSub {
  const handlers = new Map<string, Set<PubSubHandler>>();
  let closed = false;
  return {
    async publish(channel, message) {
      if (closed) throw new Error('PubSub is closed');
      for (const handler of [...(handlers.get(channel) ?? [])]) {
        queueMicrotask(() => handler(message));
      }
    },
    async subscribe(channel, handler) {
      if (closed) throw new Error('PubSub is closed');
      let set = handlers.get(channel);
      if (!set) {
        set = new Set();
        handlers.set(channel, set);
      }
      set.add(handler);
      return async () => {
        set.delete(handler);
      };
    },
    async close() {
      closed = true;
      handlers.clear();
    },
  };
}

/**
 * Redis implementation: one connection publishes, a duplicate connection (created on the first subscribe)
 * is in subscriber mode. Handler errors are caught and logged so one bad handler cannot break the others.
 */
export async function createRedisPubSub(url: string): Promise<PubSub> {
  const publisher = createClient({ url });
  // One line per outage, not a stack per reconnect attempt.
  let publisherDown = false;
  publisher.on('error', (err: unknown) => {
    if (publisherDown) return;
    publisherDown = true;
    console.error(`[pubsub] redis publisher unreachable: ${(err as Error)?.message ?? err}`);
  });
  publisher.on('ready', () => {
    publisherDown = false;
  });
  await publisher.connect();
  type Client = typeof publisher;
  let subscriber: Client | null = null;
  let subscriberReady: Promise<Client> | null = null;

  const getSubscriber = () => {
    subscriberReady ??= (async () => {
      const sub = publisher.duplicate() as Client;
      let down = false;
      sub.on('error', (err: unknown) => {
        if (down) return;
        down = true;
        console.error(`[pubsub] redis subscriber unreachable: ${(err as Error)?.message ?? err}`);
      });
      sub.on('ready', () => {
        down = false;
      });
      await sub.connect();
      subscriber = sub;
      return sub;
    })();
    return subscriberReady;
  };

  return {
    async publish(channel, message) {
      await publisher.publish(channel, message);
    },
    async subscribe(channel, handler) {
      const sub = await getSubscriber();
      const listener = (message: string) => {
        try {
          handler(message);
        } catch (err) {
          console.error(`[pubsub] handler for ${channel} failed`, err);
        }
      };
      await sub.subscribe(channel, listener);
      return async () => {
        await sub.unsubscribe(channel, listener);
      };
    },
    async close() {
      const sub = subscriber ?? (subscriberReady ? await subscriberReady : null);
      if (sub) await sub.close();
      await publisher.close();
    },
  };
}
