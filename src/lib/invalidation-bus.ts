import type { Redis } from 'ioredis';

/**
 * Tells every instance that something it may have cached is stale ("api key X was deleted").
 * With Redis the message goes through pub/sub and reaches every instance, this one included; without Redis it
 * stays in this process, which is every instance only when the database is embedded (PGlite: one process).
 */
export interface InvalidationBus {
  /**
   * True while a publish reaches every instance of the deployment and this instance hears every publish: only then
   * is caching across requests safe. With Redis it is false while the subscriber connection is down.
   */
  readonly reachesAllInstances: boolean;
  publish(topic: string, id: string): Promise<void>;
  subscribe(topic: string, handler: (id: string) => void): void;
  /** Runs the handler whenever this instance may have missed messages (it stopped or resumed listening): drop every cached entry. */
  onMissedMessages(handler: () => void): void;
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
    // In one process nothing is ever missed.
    onMissedMessages() {},
    async close() {},
  };
}

export async function createRedisBus(redis: Redis, prefix: string): Promise<InvalidationBus> {
  const channel = `${prefix}invalidate`;
  const handlers: Handlers = new Map();
  const missedHandlers: Array<() => void> = [];
  // Redis pub/sub delivers only to connections subscribed at the moment of the publish: whatever is published
  // while the subscriber is down (a restart, a network cut, CLIENT KILL) is lost for this instance.
  let listening = false;
  const setListening = (value: boolean) => {
    if (listening === value) return;
    listening = value;
    for (const handler of missedHandlers) handler();
  };
  // A connection in subscriber mode can do nothing else, so the bus listens on a connection of its own, named so
  // it can be told apart in CLIENT LIST. It resubscribes itself after a reconnect: ioredis's automatic
  // resubscription gives no signal of when it is done, and only then is this instance listening again.
  const subscriber = redis.duplicate({ connectionName: `${prefix}invalidation`, autoResubscribe: false });
  let started = false;
  subscriber.on('message', (_channel: string, message: string) => {
    const { topic, id } = JSON.parse(message) as { topic: string; id: string };
    dispatch(handlers, topic, id);
  });
  subscriber.on('close', () => setListening(false));
  subscriber.on('ready', () => {
    if (!started) return;
    subscriber.subscribe(channel).then(
      () => setListening(subscriber.status === 'ready'),
      () => {}, // the connection dropped again; its next 'ready' subscribes again
    );
  });
  await subscriber.subscribe(channel);
  started = true;
  setListening(true);
  return {
    get reachesAllInstances() {
      return listening;
    },
    async publish(topic, id) {
      // Local handlers run at once, so this instance never waits on the round trip; the echo is harmless.
      dispatch(handlers, topic, id);
      await redis.publish(channel, JSON.stringify({ topic, id }));
    },
    subscribe: (topic, handler) => addHandler(handlers, topic, handler),
    onMissedMessages: (handler) => void missedHandlers.push(handler),
    async close() {
      subscriber.disconnect();
    },
  };
}
