import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { PGliteDialect } from './pglite-dialect.js';
import type { Database } from './types.js';

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  /** 'pglite' when embedded, 'postgres' with DATABASE_URL. */
  kind: 'pglite' | 'postgres';
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string | null;
  /** PGlite directory; ':memory:' for a throwaway database. */
  dataDir: string;
  poolSize?: number;
  /** Called when PostgreSQL closes an idle pooled connection (logged; the pool recovers by itself). */
  onIdleError?: (error: Error) => void;
  /**
   * PGlite only: a new database starts as a copy of this dump (made with PGlite's dumpDataDir) instead of
   * empty. Ignored when the data directory already holds a database.
   */
  restoreFrom?: Blob;
}

// pg returns int8 as a string by default; PGlite returns a number. Counts are int8, so make both numbers.
// numeric stays a string on both, which is what money needs.
const INT8_OID = 20;
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/** Extensions the migrations use that PGlite loads itself (PostgreSQL ships them): pg_trgm backs contact search. */
export const PGLITE_EXTENSIONS = { pg_trgm };

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      types: pgTypes as pg.CustomTypesConfig,
      application_name: 'parley',
    });
    // An idle connection killed by the server (restart, failover) is an 'error' event on the pool; unhandled it would
    // crash the process. The pool drops that connection and opens a new one on the next query.
    pool.on('error', (error) => options.onIdleError?.(error));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: closeOnce(db) };
  }
  const inMemory = options.dataDir === ':memory:';
  if (!inMemory) mkdirSync(options.dataDir, { recursive: true });
  const isNew = inMemory || !existsSync(join(options.dataDir, 'PG_VERSION'));
  const restore = options.restoreFrom && isNew ? { loadDataDir: options.restoreFrom } : {};
  const pglite = new PGlite({
    ...(inMemory ? {} : { dataDir: options.dataDir }),
    ...restore,
    extensions: PGLITE_EXTENSIONS,
  });
  await pglite.waitReady;
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return { db, kind: 'pglite', close: closeOnce(db) };
}

/** Closing twice (a failed start, then shutdown) must not fail: pg's pool refuses a second end(). */
function closeOnce(db: Kysely<Database>) {
  let closing: Promise<void> | undefined;
  return () => (closing ??= db.destroy());
}

/** Runs raw SQL text (possibly several statements) on a Kysely instance or transaction. */
export async function execRaw(db: Kysely<any>, text: string, values: readonly unknown[] = []) {
  return db.executeQuery(CompiledQuery.raw(text, values as unknown[]));
}
