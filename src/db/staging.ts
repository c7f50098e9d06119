/**
 * Bulk imports stage their rows in a temporary table, then merge them a batch at a time with a few
 * set-based statements. Parsing and staging happen outside any transaction; the merge is atomic from the
 * client's view (a failure leaves nothing behind), and on PGlite no statement holds the one connection for
 * long, so other requests keep running while a file is imported.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { from as copyFrom } from 'pg-copy-streams';
import { headerKey } from '../lib/csv.js';
import type { Db } from './client.js';
import type { Database } from './types.js';

export type DatabaseKind = 'pglite' | 'postgres';
export type Session = Kysely<Database>;

/** Rows an import reports by line at most; the rest are only counted. */
export const MAX_REPORTED_ERRORS = 100;

/** The header keys (see headerKey) of a column holding a phone number, best first. */
export const PHONE_HEADERS = [
  'phone',
  'phonenumber',
  'phone1value',
  'primaryphone',
  'phone1',
  'mobile',
  'mobilephone',
  'mobilephonenumber',
  'mobilenumber',
  'cell',
  'cellphone',
  'cellnumber',
  'telephone',
  'telephonenumber',
  'tel',
  'contactnumber',
  'contactphone',
  'number',
  'msisdn',
  'workphone',
  'businessphone',
  'homephone',
  'otherphone',
  'phone2value',
  'phone3value',
  'phone2',
  'phone3',
  'telefon',
  'telefonnummer',
  'handy',
  'mobil',
  'mobiltelefon',
  'telefono',
  'movil',
  'celular',
  'portable',
];

/** Header forms named in error messages, so a user knows what to rename a column to. */
export const PHONE_HEADER_EXAMPLES = [
  'phone',
  'Phone Number',
  'mobile',
  'Mobile Phone',
  'Phone 1 - Value',
  'telephone',
];

/** Columns of a header row holding a phone number, best first. */
export function phoneColumns(headers: string[]): number[] {
  const keys = headers.map(headerKey);
  return PHONE_HEADERS.flatMap((synonym) => keys.flatMap((key, index) => (key === synonym ? [index] : [])));
}

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
 * write is in flight, so memory stays at two batches whatever the file size. A batch is written when it
 * reaches batchSize rows or maxWeight (the weights its rows were added with, e.g. their characters).
 */
export function createBatchWriter<T>(batchSize: number, write: (rows: T[]) => Promise<void>, maxWeight = Infinity) {
  let batch: T[] = [];
  let weight = 0;
  let inFlight: Promise<void> | null = null;

  async function flush() {
    const rows = batch;
    batch = [];
    weight = 0;
    if (inFlight) await inFlight;
    inFlight = write(rows);
    // Observed by the next flush or finish; this only keeps it from being reported as unhandled meanwhile.
    inFlight.catch(() => undefined);
  }

  return {
    /** Adds a row; returns a promise to await when a batch is due, or null. */
    add(row: T, rowWeight = 0): Promise<void> | null {
      batch.push(row);
      weight += rowWeight;
      return batch.length >= batchSize || weight >= maxWeight ? flush() : null;
    },
    async finish() {
      if (batch.length > 0) await flush();
      if (inFlight) await inFlight;
    },
  };
}

/**
 * COPY ... FROM STDIN into a table of the session, on PostgreSQL: the text (COPY's text format, whole lines per
 * piece) streamed from source as it comes, with backpressure. Far cheaper for the server than INSERTs of the same
 * rows. Kysely hands a query's text to pg's client.query untouched, and pg runs a "submittable" (here pg-copy-streams'
 * stream) given in its place: that reaches the very connection the session holds, where its temporary tables live.
 * A failing source cancels the COPY (the connection stays usable) and its error is the one thrown.
 */
export async function copyIntoTable(
  session: Session,
  table: string,
  columns: readonly string[],
  source: AsyncIterable<string>,
) {
  const copy = copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`);
  let sourceError: unknown = null;
  async function* watched() {
    try {
      yield* source;
    } catch (error) {
      sourceError = error;
      throw error;
    }
  }
  await session.executeQuery(CompiledQuery.raw(copy as unknown as string, []));
  try {
    await pipeline(Readable.from(watched(), { objectMode: false }), copy);
  } catch (error) {
    throw sourceError ?? error;
  }
}

/**
 * JSON for json_to_recordset. JSON.stringify writes a lone surrogate (possible in a JSON request body) as a
 * \udXXX escape, which PostgreSQL refuses to turn into text: it becomes U+FFFD, as it does in any other
 * query parameter. A NUL (\u0000) cannot be stored either: callers refuse it before staging.
 */
export function stagingJson(rows: unknown[]): string {
  const json = JSON.stringify(rows);
  if (!/\\u(?:d[89a-f]|0000)/i.test(json)) return json;
  return json.replace(/\\(\\|u0000|ud[89a-f][0-9a-f]{2})/gi, (escape: string, body: string) => {
    if (body === '\\') return escape;
    if (body === 'u0000') throw new Error('A NUL character reached staging: refuse it where the input is read');
    return '\\ufffd';
  });
}

// Imports and bulk do-not-call changes of one account merge one at a time: on PostgreSQL under a
// transaction-scoped advisory lock (every instance sees it), on PGlite (one process) under this queue.
const ACCOUNT_LOCK_NAMESPACE = 'parley:contacts-merge:';
const accountQueues = new Map<string, Promise<unknown>>();

/**
 * Takes the account's merge lock for the rest of the transaction. Any transaction that writes both do-not-call
 * entries and contacts' DNC flags takes it, so it cannot interleave with an import's merge: on PostgreSQL each
 * would otherwise miss the other's uncommitted rows and leave a listed number unflagged. (On PGlite, one session,
 * it is always granted: transactions there never overlap.)
 */
export async function lockAccountContacts(trx: Session, accountId: string) {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${ACCOUNT_LOCK_NAMESPACE + accountId}, 0))`.execute(trx);
}

async function withLocalAccountLock<T>(accountId: string, fn: () => Promise<T>): Promise<T> {
  const previous = accountQueues.get(accountId) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const settled = run.catch(() => undefined);
  accountQueues.set(accountId, settled);
  try {
    return await run;
  } finally {
    if (accountQueues.get(accountId) === settled) accountQueues.delete(accountId);
  }
}

/**
 * Where the next merge step of a staging table ends: the number on its `rows`-th row after `after`, read through
 * the staging table's (phone_e164, ...) index, so no step sorts or scans the whole table; null when none are left.
 * A step then takes every staged row of its numbers, so it holds at most `rows` distinct numbers.
 */
export async function nextStagedRange(
  trx: Session,
  staging: string,
  after: string,
  rows: number,
): Promise<string | null> {
  const { rows: found } = await sql<{ upper: string | null }>`
    SELECT COALESCE(
      (SELECT phone_e164 FROM ${sql.table(staging)} WHERE phone_e164 > ${after} ORDER BY phone_e164 OFFSET ${rows - 1} LIMIT 1),
      (SELECT max(phone_e164) FROM ${sql.table(staging)} WHERE phone_e164 > ${after})
    ) AS upper`.execute(trx);
  return found[0]!.upper;
}

/**
 * A bulk merge, made of steps (each a bounded amount of work), atomic from the client's view.
 *
 * On PostgreSQL every step runs in one transaction holding the account's advisory lock: a concurrent
 * merge of the same account waits for it instead of deadlocking on the rows both write.
 * On PGlite each step is a transaction of its own, so other requests run in between; if a step fails,
 * `undo` runs (in a transaction) to remove what the committed steps wrote, and the error is rethrown.
 */
export async function runBatchedMerge<T>(
  session: Session,
  kind: DatabaseKind,
  accountId: string,
  merge: (step: <R>(work: (trx: Session) => Promise<R>) => Promise<R>) => Promise<T>,
  undo: (trx: Session) => Promise<void>,
): Promise<T> {
  if (kind === 'postgres') {
    return session.transaction().execute(async (trx) => {
      await lockAccountContacts(trx, accountId);
      return merge((work) => work(trx));
    });
  }
  return withLocalAccountLock(accountId, async () => {
    let committed = false;
    try {
      return await merge(async (work) => {
        // PGlite answers through promises alone: without a turn of the event loop here, requests that arrived
        // meanwhile would not even start before the whole merge is done.
        await nextTurn();
        const result = await session.transaction().execute(work);
        committed = true;
        return result;
      });
    } catch (error) {
      // The merge's own error is what the client needs; a failing undo must not replace it.
      if (committed)
        await session
          .transaction()
          .execute(undo)
          .catch(() => undefined);
      throw error;
    }
  });
}
