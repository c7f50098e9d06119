/**
 * POST /v1/contact-lists: a streamed, validated, atomic import of a CSV file.
 *
 * read CSV (streamed, size-limited) -> map headers -> normalize phones to E.164 (in worker threads,
 *   chunks in flight while the next ones are parsed) -> stage valid rows in a temporary table, a batch at a time
 *   -> fold repeated numbers in SQL (never a JS set that grows with the file)
 *   -> one transaction: create the list, merge into contacts, flag DNC, add memberships, store counts.
 */
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../../db/types.js';
import type { Db } from '../../db/client.js';
import { AppError } from '../../http/errors.js';
import { checkDeclaredSize, csvReadError } from '../../http/csv-body.js';
import { readCsv, type CsvUpload } from '../../lib/csv.js';
import { newId } from '../../lib/ids.js';
import type { NormalizedPhone } from '../../lib/phone.js';
import type { PhonePool } from '../../lib/phone-pool.js';
import { mapHeaders, PHONE_HEADER_EXAMPLES, type MappedRow } from './csv-headers.js';
import { createBatchWriter, dropTempTables, tempTableName, withSession, type DatabaseKind, type Session } from '../../db/staging.js';
import type { DuplicatePolicy } from './contacts.tables.js';

export const MAX_REPORTED_ERRORS = 100;
const BATCH_ROWS = 5_000;
const VALIDATION_CHUNK_ROWS = 2_000;
const MAX_RECORD_BYTES = 256 * 1024;

export interface ImportRequest {
  accountId: string;
  name: string;
  defaultCountry: string;
  duplicatePolicy: DuplicatePolicy;
  limitBytes: number;
  now: Date;
  /** The account's do-not-call numbers (a subquery): imported numbers on it are flagged. */
  listedNumbers: RawBuilder<unknown>;
  /** Runs in the transaction that creates the list, once it is complete (the domain event). */
  onImported(trx: Transaction<Database>, result: { listId: string; counts: ImportCounts }): Promise<void>;
}

export interface RowError {
  /** Row of the file as a spreadsheet numbers it: the header is row 1. */
  row: number;
  phone: string;
  reason: string;
  message: string;
}

export interface ImportCounts {
  rows: number;
  imported: number;
  updated: number;
  duplicates: number;
  invalid: number;
  dnc: number;
}

export interface ImportResult {
  listId: string;
  counts: ImportCounts;
  errors: RowError[];
}

/** Staged rows travel as JSON with one-letter keys: json_to_recordset unpacks a whole batch in C. */
interface StagedRow {
  r: number;
  i: string;
  p: string;
  f: string | null;
  l: string | null;
  e: string | null;
  c: string | null;
  t: string | null;
  a: Record<string, string> | null;
}

const isBlank = (cells: string[]) => cells.every((cell) => cell === '');

/** Reads, validates and stages the file; returns the counts known before the merge. */
async function stageFile(session: Session, staging: string, upload: CsvUpload, request: ImportRequest, phones: PhonePool) {
  const writer = createBatchWriter<StagedRow>(BATCH_ROWS, async (rows) => {
    await sql`
      INSERT INTO ${sql.table(staging)} (row_no, id, phone_e164, first_name, last_name, email, company, timezone, attributes)
      SELECT r, i, p, f, l, e, c, t, a FROM json_to_recordset(${JSON.stringify(rows)}::json)
        AS x(r int, i uuid, p text, f text, l text, e text, c text, t text, a jsonb)`.execute(session);
  });
  let mapper: ReturnType<typeof mapHeaders> | null = null;
  let recordNo = 0;
  let rows = 0;
  let valid = 0;
  let invalid = 0;
  const errors: RowError[] = [];

  // Rows wait here in order while their phones are validated (in worker threads, several chunks at once).
  const validating: Array<{ rows: MappedRow[]; rowNumbers: number[]; results: Promise<NormalizedPhone[]> }> = [];
  let chunk: MappedRow[] = [];
  let chunkRowNumbers: number[] = [];

  async function stageValidated() {
    const next = validating.shift()!;
    const results = await next.results;
    for (let index = 0; index < results.length; index++) {
      const phone = results[index]!;
      const row = next.rows[index]!;
      const rowNumber = next.rowNumbers[index]!;
      if ('error' in phone) {
        invalid++;
        if (errors.length < MAX_REPORTED_ERRORS) {
          errors.push({ row: rowNumber, phone: row.phone.slice(0, 64), reason: phone.error, message: phone.message });
        }
        continue;
      }
      valid++;
      const due = writer.add({
        r: rowNumber,
        i: newId(),
        p: phone.e164,
        f: row.firstName,
        l: row.lastName,
        e: row.email,
        c: row.company,
        t: row.timezone,
        a: row.attributes,
      });
      if (due) await due;
    }
  }

  async function validateChunk() {
    const results = phones.normalize(chunk.map((row) => row.phone), request.defaultCountry);
    // Awaited in order by stageValidated; this only keeps an abandoned batch from being an unhandled rejection.
    results.catch(() => undefined);
    validating.push({ rows: chunk, rowNumbers: chunkRowNumbers, results });
    chunk = [];
    chunkRowNumbers = [];
    while (validating.length >= phones.parallelism) await stageValidated();
  }

  for await (const records of readCsv(upload.stream, { limitBytes: request.limitBytes, maxRecordBytes: MAX_RECORD_BYTES })) {
    for (const cells of records) {
      recordNo++;
      if (isBlank(cells)) continue;
      if (!mapper) {
        mapper = mapHeaders(cells);
        if (!mapper.hasPhone) throw missingPhoneColumn(cells);
        continue;
      }
      rows++;
      chunk.push(mapper.map(cells));
      chunkRowNumbers.push(recordNo);
    }
    if (chunk.length >= VALIDATION_CHUNK_ROWS) await validateChunk();
  }
  if (!mapper) throw new AppError('validation_failed', 'The CSV body is empty: send a header row, then one contact per row', { fields: [{ field: 'body', message: 'is empty' }] });
  if (chunk.length > 0) await validateChunk();
  while (validating.length > 0) await stageValidated();
  await writer.finish();
  return { rows, valid, invalid, errors };
}

function missingPhoneColumn(headers: string[]) {
  return new AppError(
    'validation_failed',
    `No phone column in the header row; name one of them like: ${PHONE_HEADER_EXAMPLES.join(', ')}`,
    { fields: [{ field: 'body/header', message: 'has no phone column' }], headers: headers.slice(0, 100) },
  );
}

/** One row per number: the first row wins with "skip"; with "update" later non-empty values win. */
function uniqueRowsQuery(staging: string, unique: string, policy: DuplicatePolicy) {
  const from = sql.table(staging);
  if (policy === 'skip') {
    return sql`
      CREATE TEMP TABLE ${sql.table(unique)} AS
      SELECT DISTINCT ON (phone_e164) id, phone_e164, first_name, last_name, email, company, timezone, attributes
      FROM ${from} ORDER BY phone_e164, row_no`;
  }
  const lastNonNull = (column: string) =>
    sql`(array_agg(${sql.ref(column)} ORDER BY row_no DESC) FILTER (WHERE ${sql.ref(column)} IS NOT NULL))[1]`;
  return sql`
    CREATE TEMP TABLE ${sql.table(unique)} AS
    SELECT (array_agg(id ORDER BY row_no))[1] AS id, phone_e164,
      ${lastNonNull('first_name')} AS first_name, ${lastNonNull('last_name')} AS last_name,
      ${lastNonNull('email')} AS email, ${lastNonNull('company')} AS company, ${lastNonNull('timezone')} AS timezone,
      jsonb_merge_agg(attributes ORDER BY row_no) FILTER (WHERE attributes IS NOT NULL) AS attributes
    FROM ${from} GROUP BY phone_e164`;
}

/** Merges the unique rows into the account's contacts; returns how many were created and updated. */
async function mergeContacts(trx: Session, unique: string, request: ImportRequest) {
  const { accountId, now } = request;
  const insert = sql`
    INSERT INTO contacts (id, account_id, first_name, last_name, phone_e164, email, company, timezone, attributes, dnc, created_at, updated_at)
    SELECT u.id, ${accountId}::uuid, u.first_name, u.last_name, u.phone_e164, u.email, u.company, u.timezone,
      COALESCE(u.attributes, '{}'::jsonb), u.phone_e164 IN (${request.listedNumbers}), ${now}::timestamptz, ${now}::timestamptz
    FROM ${sql.table(unique)} u
    ORDER BY u.id`; // in key order, the id indexes are appended to rather than written at random
  if (request.duplicatePolicy === 'skip') {
    const result = await sql`${insert} ON CONFLICT (account_id, phone_e164) DO NOTHING`.execute(trx);
    return { imported: Number(result.numAffectedRows ?? 0), updated: 0 };
  }
  // xmax = 0 only on a freshly inserted row version: it tells created from updated in one pass.
  const { rows } = await sql<{ imported: number; updated: number }>`
    WITH merged AS (
      ${insert}
      ON CONFLICT (account_id, phone_e164) DO UPDATE SET
        first_name = COALESCE(EXCLUDED.first_name, contacts.first_name),
        last_name = COALESCE(EXCLUDED.last_name, contacts.last_name),
        email = COALESCE(EXCLUDED.email, contacts.email),
        company = COALESCE(EXCLUDED.company, contacts.company),
        timezone = COALESCE(EXCLUDED.timezone, contacts.timezone),
        attributes = contacts.attributes || EXCLUDED.attributes,
        updated_at = EXCLUDED.updated_at
      RETURNING (xmax = 0) AS inserted
    )
    SELECT count(*) FILTER (WHERE inserted)::int AS imported, count(*) FILTER (WHERE NOT inserted)::int AS updated FROM merged`.execute(trx);
  return rows[0]!;
}

async function createList(trx: Transaction<Database>, unique: string, request: ImportRequest, staged: { rows: number; valid: number; invalid: number }) {
  const { accountId } = request;
  const listId = newId();
  await trx
    .insertInto('contact_lists')
    .values({
      id: listId,
      account_id: accountId,
      name: request.name,
      default_country: request.defaultCountry,
      duplicate_policy: request.duplicatePolicy,
      row_count: staged.rows,
      imported_count: 0,
      updated_count: 0,
      duplicate_count: 0,
      invalid_count: staged.invalid,
      dnc_count: 0,
      created_at: request.now,
    })
    .execute();
  const { imported, updated } = await mergeContacts(trx, unique, request);
  await sql`
    INSERT INTO contact_list_members (list_id, contact_id, account_id)
    SELECT ${listId}::uuid, c.id, ${accountId}::uuid FROM ${sql.table(unique)} u
    JOIN contacts c ON c.account_id = ${accountId} AND c.phone_e164 = u.phone_e164
    ORDER BY c.id`.execute(trx); // key order again: measured 2.5x faster than join order at 1M rows
  const { rows } = await sql<{ unique_rows: number; dnc: number }>`
    SELECT (SELECT count(*)::int FROM ${sql.table(unique)}) AS unique_rows,
      (SELECT count(*)::int FROM ${sql.table(unique)} u WHERE u.phone_e164 IN (${request.listedNumbers})) AS dnc`.execute(trx);
  const { unique_rows: uniqueRows, dnc } = rows[0]!;
  // imported + updated + duplicates + invalid = rows: with "skip", a number already in the account is a duplicate.
  const duplicates = staged.valid - uniqueRows + (uniqueRows - imported - updated);
  const counts: ImportCounts = { rows: staged.rows, imported, updated, duplicates, invalid: staged.invalid, dnc };
  await trx
    .updateTable('contact_lists')
    .set({ imported_count: imported, updated_count: updated, duplicate_count: duplicates, dnc_count: dnc })
    .where('account_id', '=', accountId)
    .where('id', '=', listId)
    .execute();
  await request.onImported(trx, { listId, counts });
  return { listId, counts };
}

export interface ImportDeps {
  db: Db;
  databaseKind: DatabaseKind;
  phones: PhonePool;
}

export async function importContactList(deps: ImportDeps, upload: CsvUpload, request: ImportRequest): Promise<ImportResult> {
  const { db, databaseKind: kind, phones } = deps;
  checkDeclaredSize(upload, request.limitBytes);
  const staging = tempTableName('contact_import');
  const unique = tempTableName('contact_import_unique');
  return withSession(db, kind, async (session) => {
    try {
      await sql`
        CREATE TEMP TABLE ${sql.table(staging)} (
          row_no integer NOT NULL, id uuid NOT NULL, phone_e164 text COLLATE "C" NOT NULL, first_name text, last_name text,
          email text, company text, timezone text, attributes jsonb
        )`.execute(session);
      const staged = await stageFile(session, staging, upload, request, phones).catch(csvReadError);
      await uniqueRowsQuery(staging, unique, request.duplicatePolicy).execute(session);
      const result = await session.transaction().execute((trx) => createList(trx, unique, request, staged));
      return { ...result, errors: staged.errors };
    } finally {
      await dropTempTables(session, [staging, unique]);
    }
  });
}
