/**
 * Bulk imports stage their rows in a temporary table, then merge them with a few set-based statements
 * in one short transaction. Parsing and staging happen outside that transaction, so a failed import
 * leaves nothing behind and, on PGlite, other requests keep running while a file is read.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Db } from './client.js';
import type { Database } from './types.js';

export type DatabaseKind = 'pglite' | 'postgres';
export type Session = Kysely<Database>;

/**
 * Runs fn on one database session, which is what temporary tables live in. On PostgreSQL a pooled
 * connection is pinned for the duration. PGlite is a single session already: it is not pinned, so other
 * requests run between the import's statements.
 */
export function withSession<T>(db: Db, kind: DatabaseKind, fn: (session: Session) => Promise<T>): Promise<T> {
  if (kind === 'pglite') return fn(db);
  return db.connection().execute(fn);
}

/** A unique name for a temporary table, safe to splice into SQL (letters, digits and "_" only). */
export function tempTableName(purpose: string): string {
  return `${purpose}_${randomBytes(8).toString('hex')}`;
}

/** Drops temporary tables; a failure here must not hide the import's own error. */
export async function dropTempTables(session: Session, names: string[]) {
  for (const name of names) {
    await sql`DROP TABLE IF EXISTS ${sql.table(name)}`.execute(session).catch(() => undefined);
  }
}

/**
 * Collects rows into batches and writes each batch while the next one is being built: at most one
 * write is in flight, so memory stays at two batches whatever the file size.
 */
export function createBatchWriter<T>(batchSize: number, write: (rows: T[]) => Promise<void>) {
  let batch: T[] = [];
  let inFlight: Promise<void> | null = null;

  async function flush() {
    const rows = batch;
    batch = [];
    if (inFlight) await inFlight;
    inFlight = write(rows);
    // Observed by the next flush or finish; this only keeps it from being reported as unhandled meanwhile.
    inFlight.catch(() => undefined);
  }

  return {
    /** Adds a row; returns a promise to await when a batch is due, or null. */
    add(row: T): Promise<void> | null {
      batch.push(row);
      return batch.length >= batchSize ? flush() : null;
    },
    async finish() {
      if (batch.length > 0) await flush();
      if (inFlight) await inFlight;
    },
  };
}
