import { Redis } from 'ioredis';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/client.js';
import { migrate } from './db/migrate.js';
import { createMemoryCounterStore, createRedisCounterStore, type CounterStore } from './lib/counter-store.js';

export interface Infrastructure {
  database: DatabaseHandle;
  redis: Redis | null;
  counters: CounterStore;
  close(): Promise<void>;
}

/** Opens the database (PGlite or PostgreSQL), applies migrations, and connects Redis when configured. */
export async function openInfrastructure(config: Config, options: { redisKeyPrefix?: string } = {}): Promise<Infrastructure> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize });
  await migrate(database.db);
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: false }) : null;
  const counters = redis ? createRedisCounterStore(redis, options.redisKeyPrefix) : createMemoryCounterStore();
  return {
    database,
    redis,
    counters,
    async close() {
      await counters.close();
      await database.close();
    },
  };
}
