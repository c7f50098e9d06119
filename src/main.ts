/**
 * Starts Parley in one role:
 *   all     (default) HTTP API and job workers in one process
 *   api     HTTP only; it can still enqueue jobs
 *   worker  job workers only, no HTTP listener
 *   migrate apply migrations (and the job queue's schema), then exit
 * SIGTERM or SIGINT shuts down gracefully; a second signal forces the exit.
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ConfigError, loadConfig, type Config, type Role } from './config.js';
import { buildApp } from './app.js';
import { systemClock } from './lib/clock.js';
import { createServices } from './services.js';
import { openInfrastructure, openStorage, DataDirInUseError, type Infrastructure } from './runtime.js';
import { startJobWorkers, type JobWorkers } from './jobs/workers.js';

const ROLES: Role[] = ['all', 'api', 'worker', 'migrate'];
// Headroom past the job grace for closing the database; past it the process exits regardless.
const SHUTDOWN_MARGIN_MS = 10_000;

function fail(message: string, code: number): never {
  console.error(message);
  process.exit(code);
}

function readRole(): Role {
  const { values } = parseArgs({ options: { role: { type: 'string', default: 'all' } } });
  const role = values.role as Role;
  if (!ROLES.includes(role)) fail(`--role must be one of ${ROLES.join(', ')} (got "${values.role}")`, 2);
  return role;
}

function readConfig(role: Role): Config {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(`Configuration error: ${error.message}`, 2);
    throw error;
  }
  if ((role === 'api' || role === 'worker') && !config.databaseUrl) {
    fail(
      `--role ${role} needs PostgreSQL (DATABASE_URL): the embedded PGlite database can be opened by one process only, ` +
        'so on PGlite run the default role "all" (API and workers in one process).',
      2,
    );
  }
  return config;
}

const role = readRole();
const config = readConfig(role);
const log = pino({ level: config.logLevel, base: { role } });
const storageDescription = config.databaseUrl ? { storage: 'postgres' } : { storage: 'pglite', dataDir: config.dataDir };

let stopSignal: NodeJS.Signals | null = null;
let stop: ((signal: NodeJS.Signals) => Promise<void>) | null = null;

function onSignal(signal: NodeJS.Signals) {
  if (stopSignal) {
    log.warn({ signal }, 'second signal: exiting without waiting');
    process.exit(1);
  }
  stopSignal = signal;
  if (stop) void stop(signal);
  else log.info({ signal }, 'signal during startup: shutting down as soon as the start completes');
}
process.on('SIGTERM', onSignal);
process.on('SIGINT', onSignal);

/** Reports a failed start and exits 1, after closing what was already open (PGlite flushes, its lock goes). */
async function abortStart(error: unknown, opened?: { close(): Promise<void> }): Promise<never> {
  if (error instanceof DataDirInUseError) fail(error.message, 1);
  log.fatal({ err: error }, 'startup failed');
  await opened?.close().catch(() => undefined);
  process.exit(1);
}

if (role === 'migrate') {
  const storage = await openStorage(config, { log }).catch((error) => abortStart(error));
  await storage.close();
  log.info({ ...storageDescription, applied: storage.appliedMigrations }, 'migrations applied');
  process.exit(0);
}

const infra = await openInfrastructure(config, { log }).catch((error) => abortStart(error));
if (infra.appliedMigrations.length > 0) log.info({ applied: infra.appliedMigrations }, 'migrations applied');

async function startRole(infra: Infrastructure) {
  const built = role === 'all' || role === 'api' ? await buildApp({ config, ...infra, clock: systemClock }) : null;
  try {
    const services = built?.services ?? createServices({ config, ...infra, clock: systemClock });
    const url = built ? await built.app.listen({ host: config.host, port: config.port }) : null;
    const workers: JobWorkers | null =
      role === 'all' || role === 'worker'
        ? await startJobWorkers({ db: infra.database.db, services, log: log.child({ component: 'jobs' }) })
        : null;
    return { app: built?.app ?? null, url, workers, services };
  } catch (error) {
    await built?.app.close().catch(() => undefined);
    throw error;
  }
}

const { app, url, workers, services } = await startRole(infra).catch((error) => abortStart(error, infra));
log.info({ ...storageDescription, redis: infra.redis ? 'on' : 'off', url }, `parley started (role ${role})`);

stop = async (signal) => {
  log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
  setTimeout(() => {
    log.error('shutdown did not finish in time: exiting without waiting');
    process.exit(1);
  }, config.shutdownGraceMs + SHUTDOWN_MARGIN_MS).unref();
  try {
    // Live calls end first (server_shutdown, with their costs): the jobs running them can then finish.
    const ended = await services.calls.shutdown();
    if (ended > 0) log.info({ calls: ended }, 'live calls hung up');
    // Requests and jobs wind down side by side; both may still write to the database.
    await Promise.all([
      app?.close().then(() => log.info('http server closed: in-flight requests finished')),
      workers?.stop(config.shutdownGraceMs).then(() => log.info('job workers stopped')),
    ]);
    await infra.close();
    log.info({ ...storageDescription }, infra.redis ? 'redis and database closed' : 'database closed');
    process.exit(0);
  } catch (error) {
    log.error({ err: error }, 'shutdown failed');
    process.exit(1);
  }
};
if (stopSignal) void stop(stopSignal);
