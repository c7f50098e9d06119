/**
 * The migrated template every test database starts from, built once per set of migrations.
 *
 * Creating a database and running initdb, the migrations and pg-boss's install took most of a test file's
 * time. The template holds the result, keyed by a hash of everything that shapes it (the migration files,
 * the PGlite and pg-boss versions, the job registry); a test database is a copy of it:
 * - PGlite: a dump (dumpDataDir) in a cache file under the OS temp dir, restored with `restoreFrom`;
 * - PostgreSQL: a database `parley_template_<hash>`, copied with CREATE DATABASE ... TEMPLATE.
 * Whichever process needs it first builds it; later ones (and later runs) reuse it. The app still runs
 * the migrator at start, which then finds nothing to do.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { PGliteDialect } from '../src/db/pglite-dialect.js';
import { PGLITE_EXTENSIONS } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import type { Database } from '../src/db/types.js';
import { JOBS_SCHEMA, openJobQueue } from '../src/jobs/queue.js';
import { jobRegistry } from '../src/background.js';
import { openStorage } from '../src/runtime.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../src/db/migrations/', import.meta.url));
const CACHE_DIR = join(tmpdir(), 'parley-test');
// Cache files unused for this long (older migrations, other branches) are removed when a new one is built.
const STALE_AFTER_MS = 7 * 24 * 3600_000;
// Any fixed number apart from the app's own lock keys: one template builder at a time per PostgreSQL server.
const TEMPLATE_LOCK_KEY = 7_482_615;
const silent = pino({ level: 'silent' });

/** The version of an installed package, found from its entry point (their exports hide package.json). */
function packageVersion(name: string): string {
  let dir = dirname(fileURLToPath(import.meta.resolve(name)));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === name) return manifest.version ?? 'unknown';
    } catch {
      // no package.json at this level
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}

let key: string | undefined;

/** A short hash of everything a fresh, migrated database depends on. */
export function templateKey(): string {
  if (key) return key;
  const hash = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    hash.update(`${file}\0${readFileSync(join(MIGRATIONS_DIR, file), 'utf8')}\0`);
  }
  hash.update(
    `pglite ${packageVersion('@electric-sql/pglite')}\0pg-boss ${packageVersion('pg-boss')}\0${JOBS_SCHEMA}\0`,
  );
  hash.update(JSON.stringify(Object.entries(jobRegistry).map(([name, job]) => [name, job.policy ?? {}])));
  return (key = hash.digest('hex').slice(0, 16));
}

let pgliteDump: Promise<Blob> | undefined;

/** The PGlite template as a dump to restore from; built (and cached on disk) when missing. */
export function pgliteTemplate(): Promise<Blob> {
  return (pgliteDump ??= loadOrBuildPgliteTemplate().catch((error) => {
    pgliteDump = undefined;
    throw error;
  }));
}

async function loadOrBuildPgliteTemplate(): Promise<Blob> {
  const path = join(CACHE_DIR, `pglite-${templateKey()}.tar`);
  try {
    return new Blob([await readFile(path)]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const pglite = new PGlite({ extensions: PGLITE_EXTENSIONS });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  try {
    await migrate(db);
    await (await openJobQueue(db, { log: silent, registry: jobRegistry })).close();
    const dump = await pglite.dumpDataDir('none');
    // Written under a unique name and renamed into place: a file reading it never sees half a dump, and
    // two files building at once both write whole ones.
    await mkdir(CACHE_DIR, { recursive: true });
    const partial = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    await writeFile(partial, new Uint8Array(await dump.arrayBuffer()));
    await rename(partial, path);
    await removeStaleCacheFiles(path);
    return dump;
  } finally {
    await db.destroy();
  }
}

async function removeStaleCacheFiles(keep: string) {
  for (const name of await readdir(CACHE_DIR)) {
    const path = join(CACHE_DIR, name);
    if (path === keep || !name.startsWith('pglite-')) continue;
    const { mtimeMs } = await stat(path).catch(() => ({ mtimeMs: Date.now() }));
    if (Date.now() - mtimeMs > STALE_AFTER_MS) await rm(path, { force: true });
  }
}

function databaseUrl(serverUrl: string, name: string) {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

const postgresTemplates = new Map<string, Promise<string>>();

/** The name of the PostgreSQL template database on the server of `serverUrl`; built when missing. */
export function postgresTemplate(serverUrl: string): Promise<string> {
  let name = postgresTemplates.get(serverUrl);
  if (!name) {
    name = findOrBuildPostgresTemplate(serverUrl);
    postgresTemplates.set(serverUrl, name);
    name.catch(() => postgresTemplates.delete(serverUrl));
  }
  return name;
}

async function findOrBuildPostgresTemplate(serverUrl: string): Promise<string> {
  const name = `parley_template_${templateKey()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const exists = async () => (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  try {
    if (await exists()) return name;
    // The lock dies with this session, so a builder that crashes never blocks the next one.
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    if (await exists()) return name;
    // Built under another name and renamed when complete: a database with the template's name is always whole.
    const building = `${name}_building`;
    await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${building}`);
    const storage = await openStorage(
      loadConfig({ DATABASE_URL: databaseUrl(serverUrl, building), LOG_LEVEL: 'silent' }),
      { log: silent },
    );
    await storage.close();
    // pg's pool resolves end() before its sockets have closed, and a database in use cannot be renamed.
    await retryWhileInUse(() => admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`));
    return name;
  } finally {
    await admin.end();
  }
}

const OBJECT_IN_USE = '55006';

/**
 * Runs `statement` again while PostgreSQL answers "database is being accessed by other users": copying or
 * renaming a database needs it to have no connections, and one that just closed may linger briefly.
 */
export async function retryWhileInUse<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (error) {
      if ((error as { code?: string }).code !== OBJECT_IN_USE || attempt >= 100) throw error;
      await sleep(50 + Math.random() * 50);
    }
  }
}
