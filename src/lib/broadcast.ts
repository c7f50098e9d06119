/**
 * Messages to every instance of a deployment ("hang up call X" reaches the process running it, wherever it is):
 * Redis pub/sub when Redis is configured, PostgreSQL LISTEN/NOTIFY on PostgreSQL without Redis, and in-process
 * on the embedded database (one process is every instance). Delivery is at most once, to the instances listening.
 */
import type { Redis } from 'ioredis';
import pg from 'pg';

export interface Broadcast {
  readonly transport: 'local' | 'redis' | 'postgres';
  publish(topic: string, message: Record<string, unknown>): Promise<void>;
  subscribe(topic: string, handler: (message: Record<string, unknown>) => void): void;
  close(): Promise<void>;
}

type Handlers = Map<string, Array<(message: Record<string, unknown>) => void>>;

function handlerSet() {
  const handlers: Handlers = new Map();
  return {
    add(topic: string, handler: (message: Record<string, unknown>) => void) {
      handlers.set(topic, [...(handlers.get(topic) ?? []), handler]);
    },
    dispatch(topic: string, message: Record<string, unknown>) {
      for (const handler of handlers.get(topic) ?? []) handler(message);
    },
    /** A message from the wire: ignored when it is not ours or not well formed. */
    dispatchRaw(text: string) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return;
      }
      const { topic, message } = (parsed ?? {}) as { topic?: unknown; message?: unknown };
      if (typeof topic === 'string' && message && typeof message === 'object')
        this.dispatch(topic, message as Record<string, unknown>);
    },
  };
}

export function createLocalBroadcast(): Broadcast {
  const handlers = handlerSet();
  return {
    transport: 'local',
    async publish(topic, message) {
      handlers.dispatch(topic, message);
    },
    subscribe: handlers.add,
    async close() {},
  };
}

export async function createRedisBroadcast(redis: Redis, prefix: string): Promise<Broadcast> {
  const channel = `${prefix}broadcast`;
  const handlers = handlerSet();
  // A connection in subscriber mode can do nothing else: the broadcast listens on one of its own.
  const subscriber = redis.duplicate();
  subscriber.on('message', (_channel: string, text: string) => handlers.dispatchRaw(text));
  await subscriber.subscribe(channel);
  return {
    transport: 'redis',
    async publish(topic, message) {
      await redis.publish(channel, JSON.stringify({ topic, message }));
    },
    subscribe: handlers.add,
    async close() {
      subscriber.disconnect();
    },
  };
}

/** NOTIFY payloads are limited to 8000 bytes; messages here are small (an id and a sentence). */
const CHANNEL = 'parley_broadcast';

export async function createPostgresBroadcast(
  databaseUrl: string,
  onError: (error: Error) => void = () => {},
): Promise<Broadcast> {
  const handlers = handlerSet();
  let listener: pg.Client | null = null;
  let closed = false;

  // One connection of its own that only listens; when it drops, a new one takes over (messages meanwhile are lost).
  async function listen() {
    const client = new pg.Client({ connectionString: databaseUrl, application_name: 'parley-broadcast' });
    client.on('notification', (notification) => {
      if (notification.channel === CHANNEL && notification.payload) handlers.dispatchRaw(notification.payload);
    });
    client.on('error', (error) => {
      onError(error);
      if (listener === client) listener = null;
      void client.end().catch(() => undefined);
      if (!closed) setTimeout(() => void listen().catch(onError), 1_000).unref();
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    if (closed) await client.end();
    else listener = client;
  }
  await listen();

  const publisher = new pg.Pool({ connectionString: databaseUrl, max: 1, application_name: 'parley-broadcast' });
  publisher.on('error', onError);
  return {
    transport: 'postgres',
    async publish(topic, message) {
      await publisher.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify({ topic, message })]);
    },
    subscribe: handlers.add,
    async close() {
      closed = true;
      await listener?.end().catch(() => undefined);
      await publisher.end().catch(() => undefined);
    },
  };
}
