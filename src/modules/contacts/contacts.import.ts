/**
 * POST /v1/contact-lists: a streamed, validated, atomic import of a CSV file.
 *
 * read CSV (streamed, size-limited) -> map headers -> check each row's size and characters -> normalize phones to
 *   E.164, all in a worker thread (contacts.import-rows.ts, contacts.import-threads.ts)
 *   -> stage valid rows in a temporary table (COPY on PostgreSQL, an INSERT a batch on PGlite), then index it by number
 *   -> merge a few thousand numbers at a time, in number order, folding repeated numbers in SQL (never a JS set
 *      that grows with the file): contacts, DNC flags, memberships; then the list with its counts
 *      (contacts.import-merge.ts).
 * The merge is atomic from the client's view (see runBatchedMerge): a failure leaves no list and no contacts (an
 * import answered at once, contacts.import-async.ts, keeps its list, failed).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { checkDeclaredSize, csvReadError } from '../../http/csv-body.js';
import type { CsvUpload } from '../../lib/csv.js';
import {
  copyIntoTable,
  dropTempTables,
  tempTableName,
  withSession,
  type DatabaseKind,
  type Session,
} from '../../db/staging.js';
import {
  mergeStaged,
  type ImportRequest,
  type ImportResult,
  type MergeTables,
  type Staged,
} from './contacts.import-merge.js';
import { STAGING_COLUMNS, type ImportRowsOptions, type RowBatch } from './contacts.import-rows.js';
import { readImportRowsOffThread } from './contacts.import-threads.js';

export type { ImportCounts, ImportProgress, ImportRequest, ImportResult, RowError } from './contacts.import-merge.js';

/** Reads, checks and stages the file; returns the counts known before the merge. */
async function stageFile(
  session: Session,
  kind: DatabaseKind,
  staging: string,
  upload: CsvUpload,
  request: ImportRequest,
  readRows: ImportRowsReader,
): Promise<Staged> {
  const batches = readRows(upload.stream, {
    limitBytes: request.limitBytes,
    defaultCountry: request.defaultCountry,
    format: kind === 'postgres' ? 'copy' : 'json',
  });
  const staged: Staged = { rows: 0, valid: 0, invalid: 0, errors: [], bytes: 0 };
  // Each batch is noted, then its rows are staged: one COPY streams them all on PostgreSQL, an INSERT a batch on
  // PGlite. The next batch is read (in a worker thread) meanwhile.
  async function* noted() {
    for await (const batch of batches) {
      request.signal?.throwIfAborted();
      staged.rows = batch.rows;
      staged.valid = batch.valid;
      staged.invalid = batch.invalid;
      staged.bytes = batch.bytes;
      staged.errors.push(...batch.errors);
      // The header and the first rows are read (a small file whole): what fails later fails the import, not the request.
      if (batch.ready) await request.onReady?.();
      if (batch.staged > 0) yield batch.data;
      request.onProgress?.({ rows: batch.rows, bytes: batch.bytes, saving: null });
    }
  }
  if (kind === 'postgres') {
    await copyIntoTable(session, staging, STAGING_COLUMNS, noted());
  } else {
    for await (const json of noted()) {
      await sql`
        INSERT INTO ${sql.table(staging)} (row_no, phone_e164, first_name, last_name, email, company, timezone, attributes)
        SELECT r, p, f, l, e, c, t, a FROM json_to_recordset(${json}::json)
          AS x(r int, p text, f text, l text, e text, c text, t text, a jsonb)`.execute(session);
    }
  }
  return staged;
}

/** How an import reads its file's rows (readImportRowsOffThread; a test may read them otherwise). */
export type ImportRowsReader = (
  source: AsyncIterable<Buffer | Uint8Array | string>,
  options: ImportRowsOptions,
) => AsyncIterable<RowBatch>;

export interface ImportDeps {
  db: Db;
  databaseKind: DatabaseKind;
  readRows?: ImportRowsReader;
}

/**
 * PostgreSQL's autovacuum analyzes a table once a tenth of it has changed; the embedded database never does. Without
 * statistics the planner takes an account's contacts for a handful of rows, and sorts all of them for a page of 25 or
 * a search. So an import that wrote more than autovacuum's threshold analyzes the tables it wrote (a sample of them:
 * some 0.2 s for 200,000 contacts), after a turn of the event loop for the requests that waited for the merge.
 */
async function refreshStatistics(session: Session, written: number) {
  const { rows } = await sql<{ reltuples: number }>`
    SELECT reltuples FROM pg_class WHERE oid = 'contacts'::regclass`.execute(session);
  const known = Number(rows[0]?.reltuples ?? -1);
  if (known >= 0 && written <= 50 + 0.1 * known) return;
  await nextTurn();
  await sql`ANALYZE contacts, contact_list_members`.execute(session);
}

export async function importContactList(
  deps: ImportDeps,
  upload: CsvUpload,
  request: ImportRequest,
): Promise<ImportResult> {
  const { db, databaseKind: kind } = deps;
  checkDeclaredSize(upload, request.limitBytes);
  const tables: MergeTables = {
    staging: tempTableName('contact_import'),
    previous:
      kind === 'pglite' && request.duplicatePolicy === 'update' ? tempTableName('contact_import_previous') : null,
  };
  return withSession(db, kind, async (session) => {
    try {
      await sql`
        CREATE TEMP TABLE ${sql.table(tables.staging)} (
          row_no integer NOT NULL, phone_e164 text COLLATE "C" NOT NULL, first_name text, last_name text,
          email text, company text, timezone text, attributes jsonb
        )`.execute(session);
      if (tables.previous) {
        await sql`
          CREATE TEMP TABLE ${sql.table(tables.previous)} (
            id uuid NOT NULL, first_name text, last_name text, email text, company text, timezone text,
            attributes jsonb NOT NULL, updated_at timestamptz NOT NULL
          )`.execute(session);
      }
      const staged = await stageFile(
        session,
        kind,
        tables.staging,
        upload,
        request,
        deps.readRows ?? readImportRowsOffThread,
      ).catch(csvReadError);
      // Indexed by number once staged (one sort, cheaper than keeping the index up to date row by row): each merge
      // step then reads its range of numbers through it, so no step sorts or scans the whole file.
      await sql`CREATE INDEX ON ${sql.table(tables.staging)} (phone_e164, row_no)`.execute(session);
      const { listId, counts } = await mergeStaged(session, kind, tables, request, staged);
      if (kind === 'pglite') await refreshStatistics(session, counts.rows - counts.invalid);
      return { listId, counts, errors: staged.errors };
    } finally {
      await dropTempTables(
        session,
        [tables.staging, tables.previous].filter((t): t is string => t !== null),
      );
    }
  });
}
