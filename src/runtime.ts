import { accessSync, constants, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/client.js';
import { migrate } from './db/migrate.js';
import { openJobQueue, type JobQueue } from './jobs/queue.js';
import { jobRegistry } from './background.js';
import { createMemoryCounterStore, createRedisCounterStore, type CounterStore } from './lib/counter-store.js';
import { createLocalBus, createRedisBus, type InvalidationBus } from './lib/invalidation-bus.js';
import {
  createLocalBroadcast,
  createPostgresBroadcast,
  createRedisBroadcast,
  type Broadcast,
} from './lib/broadcast.js';
import { createLlmClient, type LlmClient } from './providers/llm/index.js';
import { createTtsProvider, type TtsProvider } from './providers/tts/index.js';
import { createObjectStorage, directoryProblem, type ObjectStorage } from './providers/storage/index.js';
import { lockDataDir } from './lib/data-dir-lock.js';
import { makeDirectory } from './lib/directories.js';

export { DataDirInUseError } from './lib/data-dir-lock.js';

/** Credentials never reach the log, whatever the level. */
const REDACT = ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'];

/**
 * The process's logger: readable lines on a terminal (or LOG_FORMAT=pretty), one JSON object a line otherwise
 * (what log collectors read). Pretty output is written synchronously, so nothing is lost on exit.
 */
export function createLogger(
  config: Pick<Config, 'logLevel' | 'logFormat'>,
  base: Record<string, unknown> = {},
): Logger {
  const readable = config.logFormat === 'pretty' || (config.logFormat === 'auto' && process.stdout.isTTY === true);
  const options = { level: config.logLevel, base, redact: REDACT };
  if (!readable) return pino(options);
  return pino(options, pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,role' }));
}

/** A start that cannot go on for a reason the operator fixes: said in one sentence, without a stack (exit code 2). */
export class StartupError extends Error {}

const NETWORK_ERRORS = [
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
];
const FILE_ERRORS = ['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST', 'ENOSPC'];

/** The errno-style code of an error, or of the first of an AggregateError's (Node tries IPv4 and IPv6 in turn). */
function errorCode(error: unknown): string | undefined {
  const direct = (error as { code?: unknown } | null)?.code;
  if (typeof direct === 'string') return direct;
  if (error instanceof AggregateError) return errorCode(error.errors[0]);
  return undefined;
}

function endpoint(url: string, defaultPort: number) {
  const parsed = new URL(url);
  return `${parsed.hostname || 'localhost'}:${parsed.port || defaultPort}`;
}

/** Says what to do about a database that cannot be opened, or null when the cause is not one an operator fixes. */
function databaseStartError(error: unknown, config: Config): StartupError | null {
  const code = errorCode(error);
  if (config.databaseUrl) {
    const where = endpoint(config.databaseUrl, 5432);
    if (code && NETWORK_ERRORS.includes(code)) {
      return new StartupError(`Cannot reach PostgreSQL at ${where} (${code}): start it, or fix DATABASE_URL.`);
    }
    if (code === '28P01' || code === '28000') {
      return new StartupError(`PostgreSQL at ${where} refused the user or password of DATABASE_URL: fix them.`);
    }
    if (code === '3D000') {
      return new StartupError(
        `The database named in DATABASE_URL does not exist on ${where}: create it (createdb), or fix DATABASE_URL.`,
      );
    }
    return null;
  }
  if (code && FILE_ERRORS.includes(code)) return dataDirStartError(config, code);
  return null;
}

/** A directory the start needs and cannot make or write, told with the setting that moves it. */
function directoryStartError(directory: string, setting: string, code: string) {
  return new StartupError(
    `The ${directory} cannot be created or written (${code}): fix its permissions, or set ${setting} to a directory this user can write.`,
  );
}

const dataDirStartError = (config: Config, code: string) =>
  directoryStartError(`data directory ${config.dataDir}`, 'DATA_DIR', code);

/** PGlite's directory on disk, or null (PostgreSQL, or everything in memory). */
const embeddedDataDir = (config: Config) =>
  config.databaseUrl || config.dataDir === ':memory:' ? null : config.dataDir;

/** Creates PGlite's data directory, so that a bad DATA_DIR is told as such, before anything under it is. */
function makeDataDir(config: Config) {
  if (!embeddedDataDir(config)) return;
  try {
    makeDirectory(config.dataDir);
    accessSync(config.dataDir, constants.W_OK);
  } catch (error) {
    throw dataDirStartError(config, errorCode(error) ?? (error as Error).message);
  }
}

/**
 * Local object storage must be writable before the start goes on: the server would otherwise run, say it is
 * healthy, and lose every recording. (A bucket is reached over the network and may come back: health reports it.)
 */
async function checkLocalStorage(config: Config) {
  if (config.storage.driver !== 'local' || !config.storage.dir) return;
  const problem = await directoryProblem(config.storage.dir);
  if (problem) {
    const directory = `storage directory ${resolve(config.storage.dir)} (recordings and other files)`;
    throw directoryStartError(directory, 'STORAGE_DIR', problem);
  }
}

/** Connects to Redis before anything relies on it; past the start, ioredis reconnects by itself. */
async function connectRedis(redisUrl: string): Promise<Redis> {
  // Loaded only when configured: ioredis takes a tenth of a second to load.
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true });
  // Reported once below; without a listener ioredis would print every retry.
  let lastError: unknown = null;
  const quiet = (error: unknown) => (lastError = error);
  redis.on('error', quiet);
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    const code = errorCode(lastError) ?? errorCode(error) ?? (error as Error).message;
    throw new StartupError(
      `Cannot reach Redis at ${endpoint(redisUrl, 6379)} (${code}): start it, fix REDIS_URL, or unset it to keep counters in memory.`,
    );
  }
  redis.off('error', quiet);
  return redis;
}

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
  const dataDir = embeddedDataDir(config);
  const releaseDataDir = dataDir ? lockDataDirOrExplain(config) : () => {};
  try {
    // Creating a new embedded database takes seconds (tens on a busy machine): said, so the wait is not silence.
    if (dataDir && !existsSync(join(dataDir, 'PG_VERSION'))) {
      log.info(`creating the database in ${resolve(dataDir)} (the first start takes a while)…`);
    }
    const database = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.databasePoolSize,
      onIdleError: (error) => log.warn({ err: error }, 'PostgreSQL closed an idle connection'),
      restoreFrom: options.restoreFrom,
    });
    try {
      log.info('applying migrations…');
      const appliedMigrations = await migrate(database.db);
      const jobs = await openJobQueue(database.db, { log, registry: jobRegistry });
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
    throw databaseStartError(error, config) ?? error;
  }
}

function lockDataDirOrExplain(config: Config) {
  makeDataDir(config);
  try {
    return lockDataDir(config.dataDir);
  } catch (error) {
    throw databaseStartError(error, config) ?? error;
  }
}

/** The providers the configuration names; nothing connects until first used. */
export async function createProviders(config: Config): Promise<Providers> {
  return {
    objects: await createObjectStorage(config.storage),
    llm: createLlmClient(config.llm),
    tts: createTtsProvider(config.tts),
  };
}

/** Storage, plus Redis when configured (shared counters); what the api and worker roles run on. */
export async function openInfrastructure(config: Config, options: InfrastructureOptions = {}): Promise<Infrastructure> {
  // First, so a misconfigured provider or an unwritable directory stops the start before anything is opened.
  const providers = await createProviders(config);
  makeDataDir(config);
  await checkLocalStorage(config);
  // Redis before the database: an unreachable one is reported at once, not after the migrations.
  const redis = config.redisUrl ? await connectRedis(config.redisUrl) : null;
  let storage: Storage;
  try {
    storage = await openStorage(config, options);
  } catch (error) {
    redis?.disconnect();
    throw error;
  }
  const counters = redis ? createRedisCounterStore(redis, options.redisKeyPrefix) : createMemoryCounterStore();
  const bus = redis
    ? await createRedisBus(redis, options.redisKeyPrefix ?? 'parley:')
    : createLocalBus({ singleProcess: !config.databaseUrl });
  const broadcast = redis
    ? await createRedisBroadcast(redis, options.redisKeyPrefix ?? 'parley:')
    : config.databaseUrl
      ? await createPostgresBroadcast(config.databaseUrl, (error) =>
          options.log?.warn({ err: error }, 'broadcast connection error'),
        )
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
