/**
 * The service-test layer: every service of the composition root (`createServices`), on a fresh copy of the migrated
 * template database, without Fastify and without job workers. A test calls a service as a route handler would,
 * with an `Auth` of its choosing, and sees business behaviour in milliseconds instead of through HTTP.
 *
 * Jobs and domain events are written to the database in the transaction of the change, as always, and nothing runs
 * them: a test that needs what a job does calls the job's service method itself, or belongs in an HTTP or worker test.
 * Counters (login throttling) are kept in memory on the test's clock; the bus and the broadcast are in-process.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KyselyPlugin } from 'kysely';
import { pino } from 'pino';
import { loadConfig, type Config } from '../src/config.js';
import type { Auth } from '../src/lib/caller.js';
import { systemClock, type Clock } from '../src/lib/clock.js';
import { createLocalBroadcast } from '../src/lib/broadcast.js';
import { createMemoryCounterStore } from '../src/lib/counter-store.js';
import { createLocalBus } from '../src/lib/invalidation-bus.js';
import { newId } from '../src/lib/ids.js';
import type { MemberRole } from '../src/lib/permissions.js';
import { authQueries } from '../src/modules/auth/auth.repo.js';
import { createProviders, openStorage } from '../src/runtime.js';
import { createServices } from '../src/services.js';
import { createTestDatabase, type TestDatabase } from './helpers.js';

export interface TestServicesOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Reuse a database (e.g. one an app also uses); the caller then owns dropping it. */
  database?: TestDatabase;
  /** Kysely plugins every service's queries go through (e.g. one that records the SQL). */
  plugins?: KyselyPlugin[];
}

const silent = pino({ level: 'silent' });

/** The services on a database of their own; `close()` closes and drops it. */
export async function buildTestServices(options: TestServicesOptions = {}) {
  const database = options.database ?? (await createTestDatabase({ from: 'template' }));
  const storageDir = options.env?.STORAGE_DIR ? null : mkdtempSync(join(tmpdir(), 'parley-objects-'));
  const config: Config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: ':memory:',
    ...(storageDir ? { STORAGE_DIR: storageDir } : {}),
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...options.env,
  });
  const storage = await openStorage(config, { log: silent, restoreFrom: database.restoreFrom ?? undefined });
  const db = (options.plugins ?? []).reduce(
    (withPlugins, plugin) => withPlugins.withPlugin(plugin),
    storage.database.db,
  );
  const clock = options.clock ?? systemClock;
  const counters = createMemoryCounterStore(() => clock.now().getTime());
  const bus = createLocalBus({ singleProcess: !database.url });
  const broadcast = createLocalBroadcast();
  const providers = await createProviders(config);
  const services = createServices(
    {
      config,
      database: { ...storage.database, db },
      jobs: storage.jobs,
      redis: null,
      counters,
      bus,
      broadcast,
      providers,
      clock,
    },
    { log: silent },
  );
  return {
    services,
    /** The database the services use (through the plugins given). */
    db,
    config,
    clock,
    database,
    async close() {
      await providers.tts.close();
      await providers.objects.close();
      await broadcast.close();
      await bus.close();
      await counters.close();
      await storage.close();
      if (!options.database) await database.drop();
      if (storageDir) rmSync(storageDir, { recursive: true, force: true });
    },
  };
}

export type TestServices = Awaited<ReturnType<typeof buildTestServices>>;

/**
 * A new account with its owner, written as sign-up writes them (without hashing a password: no one signs in), and the
 * `Auth` of that owner signed in with a session: what a route handler passes to a service. `as(role)` is the same
 * account seen by a member with another role.
 */
export async function newAccount(t: TestServices) {
  const accountId = newId();
  const userId = newId();
  const email = `owner-${randomBytes(6).toString('hex')}@example.com`;
  await t.db.transaction().execute((trx) =>
    authQueries(trx).insertAccountWithOwner({
      accountId,
      accountName: `${email}'s account`,
      userId,
      email,
      name: null,
      passwordHash: 'no password: made by the service kit',
    }),
  );
  const owner: Auth = {
    accountId,
    userId,
    sessionId: newId(),
    role: 'owner',
    isPlatformAdmin: false,
    scheme: 'session',
    rateLimitPerMinute: null,
  };
  return { accountId, userId, email, auth: owner, as: (role: MemberRole): Auth => ({ ...owner, role }) };
}
