import { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/client.js';
import { migrate } from './db/migrate.js';
import { openJobQueue, type JobQueue } from './jobs/queue.js';
import { createMemoryCounterStore, createRedisCounterStore, type CounterStore } from './lib/counter-store.js';
import { createLocalBus, createRedisBus, type InvalidationBus } from './lib/invalidation-bus.js';
import { createLocalBroadcast, createPostgresBroadcast, createRedisBroadcast, type Broadcast } from './lib/broadcast.js';
import { createLlmClient, type LlmClient } from './providers/llm/index.js';
import { createTtsProvider, type TtsProvider } from './providers/tts/index.js';
import { createObjectStorage, type ObjectStorage } from './providers/storage/index.js';
import { lockDataDir } from './lib/data-dir-lock.js';

export { DataDirInUseError } from './lib/data-dir-lock.js';

export interface Storage {
  database: DatabaseHandle;
  /** Migration files applied by this start (empty when the database was already current). */
  appliedMigrations: string[];
  jobs: JobQueue;
  close(): Promise<void>;
}

/** The outside services a call uses (see src/providers). */
export interface Providers {
  objects: ObjectStorage;
  llm: LlmClient;
  tts: TtsProvider;
}

export interface Infrastructure extends Storage {
  redis: Redis | null;
  counters: CounterStore;
  bus: InvalidationBus;
  /** Messages to every instance (controlling a live call from any of them). */
  broadcast: Broadcast;
  providers: Providers;
}

export interface StorageOptions {
  log?: Logger;
  /** PGlite only: a new database starts from this dump instead of empty (see DatabaseOptions.restoreFrom). */
  restoreFrom?: Blob;
}

export interface InfrastructureOptions extends StorageOptions {
  redisKeyPrefix?: string;
}

/**
 * Opens the database (PGlite or PostgreSQL), applies migrations, installs the job queue's schema and
 * queues. This is all `--role migrate` needs.
 */
export async function openStorage(config: Config, options: StorageOptions = {}): Promise<Storage> {
  const log = options.log ?? pino({ level: config.logLevel });
  const releaseDataDir = config.databaseUrl || config.dataDir === ':memory:' ? () => {} : lockDataDir(config.dataDir);
  try {
    const database = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.databasePoolSize,
      onIdleError: (error) => log.warn({ err: error }, 'PostgreSQL closed an idle connection'),
      restoreFrom: options.restoreFrom,
    });
    try {
      const appliedMigrations = await migrate(database.db);
      const jobs = await openJobQueue(database.db, { log });
      return {
        database,
        appliedMigrations,
        jobs,
        async close() {
          await jobs.close();
          await database.close();
          releaseDataDir();
        },
      };
    } catch (error) {
      await database.close();
      throw error;
    }
  } catch (error) {
    releaseDataDir();
    throw error;
  }
}

/** The providers the configuration names; nothing connects until first used. */
export function createProviders(config: Config): Providers {
  return { objects: createObjectStorage(config.storage), llm: createLlmClient(config.llm), tts: createTtsProvider(config.tts) };
}

/** Storage, plus Redis when configured (shared counters); what the api and worker roles run on. */
export async function openInfrastructure(config: Config, options: InfrastructureOptions = {}): Promise<Infrastructure> {
  // First, so a misconfigured provider stops the start before anything is opened.
  const providers = createProviders(config);
  const storage = await openStorage(config, options);
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: false }) : null;
  const counters = redis ? createRedisCounterStore(redis, options.redisKeyPrefix) : createMemoryCounterStore();
  const bus = redis
    ? await createRedisBus(redis, options.redisKeyPrefix ?? 'parley:')
    : createLocalBus({ singleProcess: !config.databaseUrl });
  const broadcast = redis
    ? await createRedisBroadcast(redis, options.redisKeyPrefix ?? 'parley:')
    : config.databaseUrl
      ? await createPostgresBroadcast(config.databaseUrl, (error) => options.log?.warn({ err: error }, 'broadcast connection error'))
      : createLocalBroadcast();
  return {
    ...storage,
    redis,
    counters,
    bus,
    broadcast,
    providers,
    async close() {
      await providers.tts.close();
      await providers.objects.close();
      await broadcast.close();
      await bus.close();
      await counters.close();
      // The database closes last; PGlite flushes to disk then.
      await storage.close();
    },
  };
}
