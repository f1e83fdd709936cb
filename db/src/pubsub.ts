import pg from 'pg';
import { createClient } from 'redis';

export type PubSubHandler = (message: string) => void;

/** Fire-and-forget messages between processes (cache invalidation). Delivery is at most once. */
export interface PubSub {
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is active; the returned function unsubscribes this handler. */
  subscribe(channel: string, handler: PubSubHandler): Promise<() => Promise<void>>;
  /**
   * Implementations that can lose messages while reconnecting call `listener` once they listen again, so that
   * a subscriber can re-read what it caches. Returns a function that removes the listener.
   */
  onResubscribe?(listener: () => void): () => void;
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

/** PostgreSQL's limit on a channel name (NAMEDATALEN - 1 bytes); pg_notify refuses longer ones. */
const PG_CHANNEL_MAX_BYTES = 63;

export type PgPubSubOptions = {
  /** Wait before reconnecting the listening connection after it failed (default 1 s). */
  retryMs?: number;
};

/**
 * PostgreSQL LISTEN/NOTIFY implementation, for deployments without Redis (the embedded single-host mode): every
 * process on the same database receives what any of them publishes, as soon as it is published (ADR 020).
 * One dedicated connection LISTENs (it is not taken from, and does not hold, the ORM's pool); publishing uses a
 * one-connection pool of its own (`SELECT pg_notify`). When the listening connection drops it is reopened every
 * `retryMs` and LISTENs again on every channel that has handlers; messages published meanwhile are lost
 * (delivery is at most once, as with Redis), which the relay's periodic sync covers.
 */
export async function createPgPubSub(url: string, opts: PgPubSubOptions = {}): Promise<PubSub> {
  const retryMs = opts.retryMs ?? 1_000;
  const handlers = new Map<string, Set<PubSubHandler>>();
  const publisher = new pg.Pool({ connectionString: url, max: 1, idleTimeoutMillis: 30_000 });
  publisher.on('error', (err: Error) => {
    console.error(`[pubsub] postgres publisher connection failed: ${err.message}`);
  });
  const resubscribed = new Set<() => void>();
  let listener: pg.Client | null = null;
  let connecting: Promise<pg.Client> | null = null;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let closed = false;
  // One line per outage, not one per reconnect attempt.
  let down = false;
  // The listening connection was lost since it last listened (messages may have been missed).
  let dropped = false;

  const checkChannel = (channel: string) => {
    if (new TextEncoder().encode(channel).length > PG_CHANNEL_MAX_BYTES)
      throw new Error(`pub/sub channel "${channel}" is longer than ${PG_CHANNEL_MAX_BYTES} bytes`);
  };
  const listen = (client: pg.Client, channel: string) =>
    client.query(`LISTEN ${client.escapeIdentifier(channel)}`);

  const dispatch = (channel: string, message: string) => {
    for (const handler of [...(handlers.get(channel) ?? [])]) {
      try {
        handler(message);
      } catch (err) {
        console.error(`[pubsub] handler for ${channel} failed`, err);
      }
    }
  };

  const reportDown = (err: unknown) => {
    if (down) return;
    down = true;
    console.error(`[pubsub] postgres listener unreachable: ${(err as Error)?.message ?? err}`);
  };

  const scheduleRetry = () => {
    if (closed || retry || handlers.size === 0) return;
    retry = setTimeout(() => {
      retry = null;
      ensure().catch((err) => {
        reportDown(err);
        scheduleRetry();
      });
    }, retryMs);
    retry.unref?.();
  };

  const drop = (client: pg.Client, err?: unknown) => {
    if (listener !== client) return;
    listener = null;
    dropped = true;
    if (err) reportDown(err);
    client.end().catch(() => {});
    scheduleRetry();
  };

  const connect = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: url, keepAlive: true });
    client.on('notification', (msg) => dispatch(msg.channel, msg.payload ?? ''));
    client.on('error', (err) => drop(client, err));
    client.on('end', () => drop(client, new Error('connection closed')));
    try {
      await client.connect();
      for (const channel of handlers.keys()) await listen(client, channel);
    } catch (err) {
      client.end().catch(() => {});
      throw err;
    }
    if (closed) {
      await client.end().catch(() => {});
      throw new Error('PubSub is closed');
    }
    const reconnected = dropped;
    if (down) console.error('[pubsub] postgres listener reconnected');
    down = false;
    dropped = false;
    listener = client;
    if (reconnected)
      for (const callback of [...resubscribed]) {
        try {
          callback();
        } catch (err) {
          console.error('[pubsub] resubscribe listener failed', err);
        }
      }
    return client;
  };

  const ensure = (): Promise<pg.Client> => {
    if (listener) return Promise.resolve(listener);
    connecting ??= connect().finally(() => {
      connecting = null;
    });
    return connecting;
  };

  return {
    async publish(channel, message) {
      if (closed) throw new Error('PubSub is closed');
      checkChannel(channel);
      await publisher.query('SELECT pg_notify($1, $2)', [channel, message]);
    },
    async subscribe(channel, handler) {
      if (closed) throw new Error('PubSub is closed');
      checkChannel(channel);
      let set = handlers.get(channel);
      const first = !set;
      if (!set) {
        set = new Set();
        handlers.set(channel, set);
      }
      set.add(handler);
      if (first) {
        try {
          // A connection opened by ensure() already LISTENs on every channel in `handlers`; LISTEN twice is a no-op.
          await listen(await ensure(), channel);
        } catch (err) {
          set.delete(handler);
          if (set.size === 0) handlers.delete(channel);
          throw err;
        }
      }
      return async () => {
        set.delete(handler);
        if (set.size > 0 || handlers.get(channel) !== set) return;
        handlers.delete(channel);
        const client = listener;
        if (client) await client.query(`UNLISTEN ${client.escapeIdentifier(channel)}`).catch(() => {});
      };
    },
    onResubscribe(callback) {
      resubscribed.add(callback);
      return () => resubscribed.delete(callback);
    },
    async close() {
      closed = true;
      resubscribed.clear();
      if (retry) clearTimeout(retry);
      retry = null;
      handlers.clear();
      const pending = connecting ? await connecting.catch(() => null) : null;
      const client = listener ?? pending;
      listener = null;
      if (client) await client.end().catch(() => {});
      await publisher.end();
    },
  };
}
