/**
 * Test harness: every test file gets a fresh database (in-memory PGlite by default, or a new
 * database on the server named by DATABASE_URL) and drives the app through HTTP with app.inject.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig, type Config } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { systemClock, type Clock } from '../src/lib/clock.js';
import { openInfrastructure } from '../src/runtime.js';

export interface TestDatabase {
  url: string | null;
  drop(): Promise<void>;
}

/** A brand-new empty database on the PostgreSQL server of DATABASE_URL, or null for PGlite. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return { url: null, drop: async () => {} };
  const name = `parley_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
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
}

export async function buildTestApp(options: TestAppOptions = {}) {
  const database = options.database ?? (await createTestDatabase());
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
  const infra = await openInfrastructure(config, { redisKeyPrefix });
  const clock: Clock = { ...systemClock, ...options.clock };
  const { app, services, routes } = await buildApp({ config, ...infra, clock, logger: false });
  await app.ready();
  return {
    app,
    services,
    routes,
    config,
    infra,
    database,
    async close() {
      await app.close();
      await infra.close();
      if (!options.database) await database.drop();
      if (storageDir) rmSync(storageDir, { recursive: true, force: true });
    },
  };
}

export type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

let counter = 0;

/** Registers a fresh user and account, and creates an API key for it. */
export async function signUp(app: TestApp['app'], input: { email?: string; password?: string } = {}) {
  const email = input.email ?? `user${++counter}-${randomBytes(4).toString('hex')}@example.com`;
  const password = input.password ?? 'correct horse battery';
  const register = await app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password } });
  if (register.statusCode !== 200) throw new Error(`register failed: ${register.body}`);
  const vsid = register.cookies.find((c) => c.name === 'vsid')!.value;
  const cookie = `vsid=${vsid}`;
  const keyResponse = await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { cookie }, payload: { name: 'test' } });
  if (keyResponse.statusCode !== 200) throw new Error(`api key failed: ${keyResponse.body}`);
  const { key, id: apiKeyId } = keyResponse.json() as { key: string; id: string };
  const { accountId, userId } = register.json() as { accountId: string; userId: string };
  return { email, password, accountId, userId, cookie, apiKey: key, apiKeyId, headers: { authorization: `Bearer ${key}` } };
}

export type SignedUp = Awaited<ReturnType<typeof signUp>>;

/** Asserts the SPEC §7 error body shape and returns it. */
export function errorBody(response: { statusCode: number; json(): unknown }) {
  const body = response.json() as { error: string; message: string; details: Record<string, unknown> };
  if (typeof body.error !== 'string' || typeof body.message !== 'string' || typeof body.details !== 'object') {
    throw new Error(`not an error body: ${JSON.stringify(body)}`);
  }
  return body;
}
