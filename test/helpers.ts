/**
 * Test harness: every test file gets a fresh database (in-memory PGlite by default, or a new
 * database on the server named by DATABASE_URL), copied from a migrated template (test/template.ts),
 * and drives the app through HTTP with app.inject.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { InjectOptions } from 'fastify';
import type { KyselyPlugin } from 'kysely';
import { loadConfig, type Config } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { systemClock, type Clock } from '../src/lib/clock.js';
import type { CounterStore } from '../src/lib/counter-store.js';
import type { MemberRole } from '../src/modules/auth/auth.tables.js';
import { openInfrastructure } from '../src/runtime.js';
import { pgliteTemplate, postgresTemplate, retryWhileInUse } from './template.js';

export interface TestDatabase {
  url: string | null;
  /** PGlite: the dump a new database starts from; null starts it empty. */
  restoreFrom: Blob | null;
  drop(): Promise<void>;
}

/**
 * A new database for a test: a copy of the migrated template (`from: 'template'`), or brand-new and empty
 * (the default), for tests of the migrator or of a first start. On the PostgreSQL server of DATABASE_URL,
 * or for PGlite (url null) when DATABASE_URL is unset.
 */
export async function createTestDatabase(options: { from?: 'empty' | 'template' } = {}): Promise<TestDatabase> {
  const fromTemplate = options.from === 'template';
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return { url: null, restoreFrom: fromTemplate ? await pgliteTemplate() : null, drop: async () => {} };
  const template = fromTemplate ? await postgresTemplate(serverUrl) : null;
  const name = `parley_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    // Copying needs the template to have no connections; another file's copy may be finishing.
    if (template) await retryWhileInUse(() => admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
    else await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    restoreFrom: null,
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** A clock that only tells the time waits on the system clock. */
  clock?: Pick<Clock, 'now'> & Partial<Clock>;
  /** Reuse a database across builds (e.g. a restart test); the caller then owns dropping it. */
  database?: TestDatabase;
  dataDir?: string;
  /** Two apps with one prefix share their Redis counters, like two instances of one deployment. */
  redisKeyPrefix?: string;
  /** Counters (rate limits, login throttling) to use instead of the storage mode's (e.g. on a virtual clock). */
  counters?: CounterStore;
  /** Kysely plugins every query of the app goes through (e.g. one that records the SQL). */
  plugins?: KyselyPlugin[];
}

export async function buildTestApp(options: TestAppOptions = {}) {
  const database = options.database ?? (await createTestDatabase({ from: 'template' }));
  // Recordings and other objects go to a directory of the app's own, removed on close.
  const storageDir = options.env?.STORAGE_DIR ? null : mkdtempSync(join(tmpdir(), 'parley-objects-'));
  const config: Config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: options.dataDir ?? ':memory:',
    ...(storageDir ? { STORAGE_DIR: storageDir } : {}),
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...options.env,
  });
  // A unique Redis prefix per app keeps parallel test files from sharing rate-limit counters.
  const redisKeyPrefix = options.redisKeyPrefix ?? `parley-test:${randomBytes(6).toString('hex')}:`;
  const opened = await openInfrastructure(config, { redisKeyPrefix, restoreFrom: database.restoreFrom ?? undefined });
  const plugins = options.plugins ?? [];
  const infra = plugins.length
    ? {
        ...opened,
        database: { ...opened.database, db: plugins.reduce((db, plugin) => db.withPlugin(plugin), opened.database.db) },
      }
    : opened;
  const clock: Clock = { ...systemClock, ...options.clock };
  const counters = options.counters ?? infra.counters;
  const { app, services, routes, compileSchemas } = await buildApp({
    config,
    ...infra,
    counters,
    clock,
    logger: false,
  });
  await app.ready();
  const testApp = {
    app,
    services,
    routes,
    compileSchemas,
    config,
    infra,
    database,
    async close() {
      await app.close();
      if (options.counters) await options.counters.close();
      await infra.close();
      if (!options.database) await database.drop();
      if (storageDir) rmSync(storageDir, { recursive: true, force: true });
    },
  };
  testApps.set(app, testApp);
  return testApp;
}

export type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

// Signed-up users carry the Fastify app they belong to; this finds the rest of the test app (its database).
const testApps = new WeakMap<object, TestApp>();

export function testAppOf(app: TestApp['app']): TestApp {
  const testApp = testApps.get(app);
  if (!testApp) throw new Error('not an app made by buildTestApp');
  return testApp;
}

let counter = 0;

/** Registers a fresh user and account, and creates an API key for it. */
export async function signUp(app: TestApp['app'], input: { email?: string; password?: string } = {}) {
  const email = input.email ?? `user${++counter}-${randomBytes(4).toString('hex')}@example.com`;
  const password = input.password ?? 'correct horse battery';
  const register = await app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password } });
  if (register.statusCode !== 200) throw new Error(`register failed: ${register.body}`);
  const vsid = register.cookies.find((c) => c.name === 'vsid')!.value;
  const cookie = `vsid=${vsid}`;
  const keyResponse = await app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: { cookie },
    payload: { name: 'test' },
  });
  if (keyResponse.statusCode !== 200) throw new Error(`api key failed: ${keyResponse.body}`);
  const { key, id: apiKeyId } = keyResponse.json() as { key: string; id: string };
  const { accountId, userId } = register.json() as { accountId: string; userId: string };
  return {
    app,
    email,
    password,
    accountId,
    userId,
    cookie,
    apiKey: key,
    apiKeyId,
    headers: { authorization: `Bearer ${key}` },
  };
}

export type SignedUp = Awaited<ReturnType<typeof signUp>>;

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Whoever makes a request: the app it goes to and the headers that sign it in (none for anonymous). */
export interface Caller {
  app: TestApp['app'];
  headers: Record<string, string>;
}

/**
 * One request as `who` (a signed-up user signs in with its API key). A path under /api/ is used as it is;
 * any other is under /api/v1 ('/agents' is /api/v1/agents). An object body is sent as JSON.
 */
export function call(
  who: Caller,
  method: Method,
  url: string,
  body?: InjectOptions['payload'],
  options: { headers?: Record<string, string> } = {},
) {
  return who.app.inject({
    method,
    url: url.startsWith('/api/') ? url : `/api/v1${url}`,
    headers: { ...who.headers, ...options.headers },
    ...(body !== undefined ? { payload: body } : {}),
  });
}

/** The user, signed in with its API key. */
export const asKey = (user: SignedUp): Caller => ({
  app: user.app,
  headers: { authorization: `Bearer ${user.apiKey}` },
});

/** The user, signed in with its browser session (the vsid cookie). */
export const asSession = (user: SignedUp): Caller => ({ app: user.app, headers: { cookie: user.cookie } });

/**
 * A new user (registered through the API) who is a member of `owner`'s account with `role`, signed in with a
 * session switched to that account. There is no team API yet, so the membership row is written directly.
 */
export async function asRole(testApp: TestApp, owner: { accountId: string }, role: MemberRole) {
  const email = `${role}${++counter}-${randomBytes(4).toString('hex')}@example.com`;
  const password = `${role} password`;
  const register = await testApp.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email, password },
  });
  if (register.statusCode !== 200) throw new Error(`register failed: ${register.body}`);
  const { userId } = register.json() as { userId: string };
  const cookie = `vsid=${register.cookies.find((c) => c.name === 'vsid')!.value}`;
  await testApp.infra.database.db
    .insertInto('memberships')
    .values({ account_id: owner.accountId, user_id: userId, role })
    .execute();
  const switched = await testApp.app.inject({
    method: 'POST',
    url: '/api/v1/auth/switch-account',
    headers: { cookie },
    payload: { accountId: owner.accountId },
  });
  if (switched.statusCode !== 200) throw new Error(`switch-account failed: ${switched.body}`);
  return { app: testApp.app, headers: { cookie }, cookie, email, password, userId, accountId: owner.accountId, role };
}

/** Asserts the shape of an error body (error, message, details) and returns it. */
export function errorBody(response: { statusCode: number; json(): unknown }) {
  const body = response.json() as { error: string; message: string; details: Record<string, unknown> };
  if (typeof body.error !== 'string' || typeof body.message !== 'string' || typeof body.details !== 'object') {
    throw new Error(`not an error body: ${JSON.stringify(body)}`);
  }
  return body;
}
