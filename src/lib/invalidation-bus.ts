import type { Redis } from 'ioredis';

/**
 * Tells every instance that something it may have cached is stale ("api key X was deleted").
 * With Redis the message goes through pub/sub and reaches every instance, this one included; without Redis it
 * stays in this process, which is every instance only when the database is embedded (PGlite: one process).
 */
export interface InvalidationBus {
  /** True when a publish reaches every instance of the deployment: only then is caching across requests safe. */
  readonly reachesAllInstances: boolean;
  publish(topic: string, id: string): Promise<void>;
  subscribe(topic: string, handler: (id: string) => void): void;
  close(): Promise<void>;
}

type Handlers = Map<string, Array<(id: string) => void>>;

function dispatch(handlers: Handlers, topic: string, id: string) {
  for (const handler of handlers.get(topic) ?? []) handler(id);
}

function addHandler(handlers: Handlers, topic: string, handler: (id: string) => void) {
  handlers.set(topic, [...(handlers.get(topic) ?? []), handler]);
}

export function createLocalBus(options: { singleProcess: boolean }): InvalidationBus {
  const handlers: Handlers = new Map();
  return {
    reachesAllInstances: options.singleProcess,
    async publish(topic, id) {
      dispatch(handlers, topic, id);
    },
    subscribe: (topic, handler) => addHandler(handlers, topic, handler),
    async close() {},
  };
}

export async function createRedisBus(redis: Redis, prefix: string): Promise<InvalidationBus> {
  const channel = `${prefix}invalidate`;
  const handlers: Handlers = new Map();
  // A connection in subscriber mode can do nothing else, so the bus listens on a connection of its own.
  const subscriber = redis.duplicate();
  subscriber.on('message', (_channel: string, message: string) => {
    const { topic, id } = JSON.parse(message) as { topic: string; id: string };
    dispatch(handlers, topic, id);
  });
  await subscriber.subscribe(channel);
  return {
    reachesAllInstances: true,
    async publish(topic, id) {
      // Local handlers run at once, so this instance never waits on the round trip; the echo is harmless.
      dispatch(handlers, topic, id);
      await redis.publish(channel, JSON.stringify({ topic, id }));
    },
    subscribe: (topic, handler) => addHandler(handlers, topic, handler),
    async close() {
      subscriber.disconnect();
    },
  };
}
