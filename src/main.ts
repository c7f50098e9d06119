/**
 * Starts Parley in one role:
 *   all     (default) HTTP API and job workers in one process
 *   api     HTTP only; it can still enqueue jobs
 *   worker  job workers only, no HTTP listener
 *   migrate apply migrations (and the job queue's schema), then exit
 * --demo (roles all and api) also creates the demo account, once, and places its calls.
 * SIGTERM or SIGINT shuts down gracefully; a second signal forces the exit.
 * Exit codes: 0 after a clean shutdown, 2 for a start the operator must fix (said in one sentence), 1 otherwise.
 */
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, loadDotEnv, type Config, type Role } from './config.js';
import { buildApp } from './app.js';
import { systemClock } from './lib/clock.js';
import { createServices } from './services.js';
import {
  createLogger,
  openInfrastructure,
  openStorage,
  DataDirInUseError,
  StartupError,
  type Infrastructure,
} from './runtime.js';
import { startJobWorkers, type JobWorkers } from './background.js';
import { demoCommands, seedDemo } from './demo/demo.js';

const ROLES: Role[] = ['all', 'api', 'worker', 'migrate'];
// Headroom past the job grace for closing the database; past it the process exits regardless.
const SHUTDOWN_MARGIN_MS = 10_000;

function fail(message: string, code: number): never {
  console.error(message);
  process.exit(code);
}

function readArgs(): { role: Role; demo: boolean } {
  let values: { role?: string; demo?: boolean };
  try {
    values = parseArgs({
      options: { role: { type: 'string', default: 'all' }, demo: { type: 'boolean', default: false } },
    }).values;
  } catch (error) {
    fail(`${(error as Error).message}. Options: --role ${ROLES.join('|')}, --demo.`, 2);
  }
  const role = values.role as Role;
  if (!ROLES.includes(role)) fail(`--role must be one of ${ROLES.join(', ')} (got "${values.role}")`, 2);
  if (values.demo && role !== 'all' && role !== 'api')
    fail('--demo needs the HTTP API: use it with the role all or api.', 2);
  return { role, demo: values.demo === true };
}

function readConfig(role: Role): Config {
  let config: Config;
  try {
    loadDotEnv();
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(`Configuration error: ${error.message}.`, 2);
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

const { role, demo } = readArgs();
const config = readConfig(role);
const log = createLogger(config, { role });
const storageDescription = config.databaseUrl
  ? { storage: 'postgres' }
  : { storage: 'pglite', dataDir: config.dataDir === ':memory:' ? ':memory:' : resolve(config.dataDir) };
const storageSentence = config.databaseUrl
  ? 'storage PostgreSQL (DATABASE_URL)'
  : config.dataDir === ':memory:'
    ? 'storage PGlite in memory (nothing is kept)'
    : `storage PGlite in ${storageDescription.dataDir}`;
log.info({ node: process.version }, `parley starting (role ${role})`);

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

/** What the operator should do about a failed start, in one sentence; null when it is not theirs to fix. */
function explainStartError(error: unknown): string | null {
  if (error instanceof StartupError) return error.message;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE') {
    return `Port ${config.port} on ${config.host} is already in use by another program: stop it, or set PORT to a free port (PORT=0 picks one).`;
  }
  if (code === 'EACCES')
    return `This user may not listen on port ${config.port}: set PORT to 1024 or above, or run behind a proxy.`;
  if (code === 'EADDRNOTAVAIL') {
    return `HOST ${config.host} is not an address of this machine: set HOST to one of its addresses (127.0.0.1, or 0.0.0.0 for every interface).`;
  }
  return null;
}

/**
 * Reports a failed start, after closing what was already open (PGlite flushes, its lock goes): exit 2 with one
 * sentence when the operator can fix it, else 1 with the error logged.
 */
async function abortStart(error: unknown, opened?: { close(): Promise<void> }): Promise<never> {
  if (error instanceof DataDirInUseError) fail(error.message, 1);
  await opened?.close().catch(() => undefined);
  const explained = explainStartError(error);
  if (explained) fail(explained, 2);
  log.fatal({ err: error }, 'startup failed');
  process.exit(1);
}

if (role === 'migrate') {
  const storage = await openStorage(config, { log }).catch((error) => abortStart(error));
  await storage.close();
  // A count, not the files' names (schema_migrations has them): one line.
  log.info({ ...storageDescription, migrations: storage.appliedMigrations.length }, 'migrations applied');
  process.exit(0);
}

/** A port taken by another program is reported before the database opens (which can take a while), not after. */
function checkPortFree(): Promise<void> {
  if (config.port === 0 || role === 'worker') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host: config.host, port: config.port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

await checkPortFree().catch((error) => abortStart(error));
const infra = await openInfrastructure(config, { log }).catch((error) => abortStart(error));
if (infra.appliedMigrations.length > 0) log.info({ migrations: infra.appliedMigrations.length }, 'migrations applied');

async function startRole(infra: Infrastructure) {
  const built =
    role === 'all' || role === 'api'
      ? await buildApp({ config, ...infra, clock: systemClock, loggerInstance: log })
      : null;
  try {
    const services = built?.services ?? createServices({ config, ...infra, clock: systemClock }, { log });
    const url = built ? await built.app.listen({ host: config.host, port: config.port }) : null;
    const workers: JobWorkers | null =
      role === 'all' || role === 'worker'
        ? await startJobWorkers({
            db: infra.database.db,
            services,
            log: log.child({ component: 'jobs' }),
            pollingIntervalSeconds: config.jobsPollSeconds,
          })
        : null;
    return { app: built?.app ?? null, url, workers, services };
  } catch (error) {
    await built?.app.close().catch(() => undefined);
    throw error;
  }
}

const { app, url, workers, services } = await startRole(infra).catch((error) => abortStart(error, infra));
const docs = url ? `${url}/api/docs` : null;
log.info(
  { ...storageDescription, redis: infra.redis ? 'on' : 'off', url, docs },
  url
    ? `parley started (role ${role}) at ${url}/api, docs at ${docs}, ${storageSentence}`
    : `parley started (role ${role}), ${storageSentence}`,
);

if (demo && app) {
  try {
    const seeded = await seedDemo(app);
    log.info(
      { demo: { email: seeded.email, password: seeded.password, created: seeded.created, calls: seeded.calls.length } },
      seeded.created
        ? `demo account created: sign in as ${seeded.email} with the password "${seeded.password}"; ${seeded.calls.length} calls are running on the simulated network`
        : `demo account already there: sign in as ${seeded.email} with the password "${seeded.password}"`,
    );
    if (url)
      log.info(
        { demoCommands: demoCommands(`${url}/api`) },
        `to see the demo's calls, open ${url}/ and sign in, or run:\n  ${demoCommands(`${url}/api`).join('\n  ')}`,
      );
  } catch (error) {
    log.error({ err: error }, 'the demo could not be set up');
  }
}

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
