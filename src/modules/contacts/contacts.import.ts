/**
 * POST /v1/contact-lists: a streamed, validated, atomic import of a CSV file.
 *
 * read CSV (streamed, size-limited, yielding to other requests) -> map headers -> check each row's size and
 *   characters -> normalize phones to E.164 (in worker threads, chunks in flight while the next ones are parsed)
 *   -> stage valid rows in a temporary table indexed by number, a batch at a time
 *   -> merge a few thousand numbers at a time, in number order, folding repeated numbers in SQL (never a JS set
 *      that grows with the file): contacts, DNC flags, memberships; then the list with its counts
 *      (contacts.import-merge.ts).
 * The merge is atomic from the client's view (see runBatchedMerge): a failure leaves no list and no contacts (an
 * import answered at once, contacts.import-async.ts, keeps its list, failed).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { AppError } from '../../lib/errors.js';
import { checkDeclaredSize, csvReadError } from '../../http/csv-body.js';
import { readCsv, type CsvUpload } from '../../lib/csv.js';
import type { NormalizedPhone } from '../../lib/phone.js';
import type { PhonePool } from '../../lib/phone-pool.js';
import { ATTRIBUTE_PROBLEM_MESSAGES, mapHeaders, type MappedRow } from './contacts.csv-headers.js';
import {
  createBatchWriter,
  dropTempTables,
  MAX_REPORTED_ERRORS,
  PHONE_HEADER_EXAMPLES,
  stagingJson,
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
  type RowError,
  type Staged,
} from './contacts.import-merge.js';

export type { ImportCounts, ImportProgress, ImportRequest, ImportResult, RowError } from './contacts.import-merge.js';

const STAGE_BATCH_ROWS = 5_000;
const VALIDATION_CHUNK_ROWS = 2_000;
/** Characters of CSV text held by one staging batch or validation chunk, whatever the row count. */
const BATCH_CHARS = 2 * 1024 * 1024;

/** Limits of an imported file; past one, the file is refused with the line and the limit. */
export const IMPORT_CSV_LIMITS = { maxRecordChars: 256 * 1024, maxFieldChars: 32 * 1024, maxColumns: 1_000 };

/** Staged rows travel as JSON with one-letter keys: json_to_recordset unpacks a whole batch in C. */
interface StagedRow {
  r: number;
  p: string;
  f: string | null;
  l: string | null;
  e: string | null;
  c: string | null;
  t: string | null;
  a: Record<string, string> | null;
}

/** A row refused before its phone is looked at. */
interface RowProblem {
  reason: string;
  message: string;
}

const NUL_PROBLEM: RowProblem = {
  reason: 'nul_character',
  message: 'The row contains a NUL character (U+0000), which cannot be stored',
};

const isBlank = (cells: string[]) => cells.every((cell) => cell === '');

/** Reads, validates and stages the file; returns the counts known before the merge. */
async function stageFile(
  session: Session,
  staging: string,
  upload: CsvUpload,
  request: ImportRequest,
  phones: PhonePool,
): Promise<Staged> {
  const writer = createBatchWriter<StagedRow>(
    STAGE_BATCH_ROWS,
    async (rows) => {
      await sql`
        INSERT INTO ${sql.table(staging)} (row_no, phone_e164, first_name, last_name, email, company, timezone, attributes)
        SELECT r, p, f, l, e, c, t, a FROM json_to_recordset(${stagingJson(rows)}::json)
          AS x(r int, p text, f text, l text, e text, c text, t text, a jsonb)`.execute(session);
    },
    BATCH_CHARS,
  );
  let mapper: ReturnType<typeof mapHeaders> | null = null;
  let recordNo = 0;
  let rows = 0;
  let valid = 0;
  let invalid = 0;
  let checked = 0;
  // Whether the import said the file is valid so far (onReady).
  let ready = false;
  const read = { bytes: 0 };
  const errors: RowError[] = [];

  interface Chunk {
    rows: MappedRow[];
    rowNumbers: number[];
    problems: Array<RowProblem | null>;
    weights: number[];
  }
  const newChunk = (): Chunk => ({ rows: [], rowNumbers: [], problems: [], weights: [] });
  // Rows wait here in order while their phones are validated (in worker threads, several chunks at once).
  const validating: Array<Chunk & { results: Promise<NormalizedPhone[]> }> = [];
  let chunk = newChunk();
  let chunkChars = 0;

  function reportInvalid(row: number, phone: string, reason: string, message: string) {
    invalid++;
    if (errors.length < MAX_REPORTED_ERRORS) errors.push({ row, phone: phone.slice(0, 64), reason, message });
  }

  async function stageValidated() {
    const next = validating.shift()!;
    const results = await next.results;
    for (let index = 0; index < results.length; index++) {
      const row = next.rows[index]!;
      const rowNumber = next.rowNumbers[index]!;
      const problem = next.problems[index];
      if (problem) {
        reportInvalid(rowNumber, row.phone, problem.reason, problem.message);
        continue;
      }
      const phone = results[index]!;
      if ('error' in phone) {
        reportInvalid(rowNumber, row.phone, phone.error, phone.message);
        continue;
      }
      valid++;
      const due = writer.add(
        {
          r: rowNumber,
          p: phone.e164,
          f: row.firstName,
          l: row.lastName,
          e: row.email,
          c: row.company,
          t: row.timezone,
          a: row.attributes,
        },
        next.weights[index],
      );
      if (due) await due;
    }
    checked += results.length;
    request.onProgress?.({ rows: checked, bytes: read.bytes, saving: null });
  }

  async function validateChunk() {
    // A refused row's phone is not looked at: an empty one costs nothing to validate.
    const results = phones.normalize(
      chunk.rows.map((row, i) => (chunk.problems[i] ? '' : row.phone)),
      request.defaultCountry,
    );
    // Awaited in order by stageValidated; this only keeps an abandoned batch from being an unhandled rejection.
    results.catch(() => undefined);
    validating.push({ ...chunk, results });
    chunk = newChunk();
    chunkChars = 0;
    while (validating.length >= phones.parallelism) await stageValidated();
  }

  const source = countBytes(upload.stream, read);
  for await (const batch of readCsv(source, { limitBytes: request.limitBytes, ...IMPORT_CSV_LIMITS })) {
    request.signal?.throwIfAborted();
    let nulAt = batch.nulRecords.length > 0 ? 0 : -1;
    for (let index = 0; index < batch.records.length; index++) {
      const cells = batch.records[index]!;
      const hasNul = nulAt >= 0 && batch.nulRecords[nulAt] === index;
      if (hasNul) nulAt++;
      recordNo++;
      if (isBlank(cells)) continue;
      if (!mapper) {
        if (hasNul) throw nulInHeader(batch.lines[index]!);
        mapper = mapHeaders(cells);
        if (!mapper.hasPhone) throw missingPhoneColumn(cells);
        continue;
      }
      rows++;
      const row = mapper.map(cells);
      let weight = 0;
      for (const cell of cells) weight += cell.length;
      let problem: RowProblem | null = null;
      if (hasNul) problem = NUL_PROBLEM;
      else if (row.attributesProblem)
        problem = { reason: row.attributesProblem, message: ATTRIBUTE_PROBLEM_MESSAGES[row.attributesProblem] };
      chunk.rows.push(row);
      chunk.rowNumbers.push(recordNo);
      chunk.problems.push(problem);
      chunk.weights.push(weight);
      chunkChars += weight;
    }
    if (chunk.rows.length >= VALIDATION_CHUNK_ROWS || chunkChars >= BATCH_CHARS) await validateChunk();
    // The header and the first rows parsed (a small file whole): what fails later fails the import, not the request.
    if (!ready && rows >= VALIDATION_CHUNK_ROWS) {
      ready = true;
      await request.onReady?.();
    }
  }
  if (!mapper)
    throw new AppError('validation_failed', 'The CSV body is empty: send a header row, then one contact per row', {
      fields: [{ field: 'body', message: 'is empty' }],
    });
  if (!ready) await request.onReady?.();
  if (chunk.rows.length > 0) await validateChunk();
  while (validating.length > 0) await stageValidated();
  await writer.finish();
  return { rows, valid, invalid, errors, bytes: read.bytes };
}

/** The stream, counting its bytes into `read` as they pass. */
async function* countBytes(stream: AsyncIterable<Buffer | string>, read: { bytes: number }) {
  for await (const chunk of stream) {
    read.bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    yield chunk;
  }
}

function nulInHeader(line: number) {
  return new AppError(
    'invalid_csv',
    `The header row (line ${line}) contains a NUL character (U+0000), which cannot be stored`,
    {
      line,
      reason: 'nul_character',
    },
  );
}

function missingPhoneColumn(headers: string[]) {
  return new AppError(
    'validation_failed',
    `No phone column in the header row; name one of them like: ${PHONE_HEADER_EXAMPLES.join(', ')}`,
    { fields: [{ field: 'body/header', message: 'has no phone column' }], headers: headers.slice(0, 100) },
  );
}

export interface ImportDeps {
  db: Db;
  databaseKind: DatabaseKind;
  phones: PhonePool;
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
  const { db, databaseKind: kind, phones } = deps;
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
      const staged = await stageFile(session, tables.staging, upload, request, phones).catch(csvReadError);
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
