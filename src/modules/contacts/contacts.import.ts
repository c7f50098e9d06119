/**
 * POST /v1/contact-lists: a streamed, validated, atomic import of a CSV file.
 *
 * read CSV (streamed, size-limited, yielding to other requests) -> map headers -> check each row's size and
 *   characters -> normalize phones to E.164 (in worker threads, chunks in flight while the next ones are parsed)
 *   -> stage valid rows in a temporary table indexed by number, a batch at a time
 *   -> merge a few thousand numbers at a time, in number order, folding repeated numbers in SQL (never a JS set
 *      that grows with the file): contacts, DNC flags, memberships; then the list with its counts.
 * The merge is atomic from the client's view (see runBatchedMerge): a failure leaves no list and no contacts.
 */
import { randomBytes } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import { AppError } from '../../lib/errors.js';
import { checkDeclaredSize, csvReadError } from '../../http/csv-body.js';
import { readCsv, type CsvUpload } from '../../lib/csv.js';
import { newId } from '../../lib/ids.js';
import type { NormalizedPhone } from '../../lib/phone.js';
import type { PhonePool } from '../../lib/phone-pool.js';
import {
  ATTRIBUTE_PROBLEM_MESSAGES,
  MAX_ATTRIBUTE_CHARS,
  MAX_ATTRIBUTES,
  mapHeaders,
  type MappedRow,
} from './contacts.csv-headers.js';
import {
  createBatchWriter,
  dropTempTables,
  MAX_REPORTED_ERRORS,
  nextStagedRange,
  PHONE_HEADER_EXAMPLES,
  runBatchedMerge,
  stagingJson,
  tempTableName,
  withSession,
  type DatabaseKind,
  type Session,
} from '../../db/staging.js';
import type { DuplicatePolicy } from './contacts.tables.js';

const STAGE_BATCH_ROWS = 5_000;
const VALIDATION_CHUNK_ROWS = 2_000;
/** Characters of CSV text held by one staging batch or validation chunk, whatever the row count. */
const BATCH_CHARS = 2 * 1024 * 1024;
/** Distinct numbers per merge step at most: on PGlite, about how long another request may wait for the connection. */
const MERGE_BATCH_NUMBERS = 2_500;

/** Limits of an imported file; past one, the file is refused with the line and the limit. */
export const IMPORT_CSV_LIMITS = { maxRecordChars: 256 * 1024, maxFieldChars: 32 * 1024, maxColumns: 1_000 };

export interface ImportRequest {
  accountId: string;
  name: string;
  defaultCountry: string;
  duplicatePolicy: DuplicatePolicy;
  limitBytes: number;
  now: Date;
  /** The account's do-not-call numbers (a subquery): imported numbers on it are flagged. */
  listedNumbers: RawBuilder<unknown>;
  /** Runs in the step that creates the list, once it is complete (the domain event). */
  onImported(trx: Session, result: { listId: string; counts: ImportCounts }): Promise<void>;
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
) {
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

  for await (const batch of readCsv(upload.stream, { limitBytes: request.limitBytes, ...IMPORT_CSV_LIMITS })) {
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
  }
  if (!mapper)
    throw new AppError('validation_failed', 'The CSV body is empty: send a header row, then one contact per row', {
      fields: [{ field: 'body', message: 'is empty' }],
    });
  if (chunk.rows.length > 0) await validateChunk();
  while (validating.length > 0) await stageValidated();
  await writer.finish();
  return { rows, valid, invalid, errors };
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

interface Range {
  after: string;
  upper: string;
}

/** The alias's numbers within the range. */
const inRange = (alias: string, range: Range) =>
  sql`${sql.ref(`${alias}.phone_e164`)} > ${range.after} AND ${sql.ref(`${alias}.phone_e164`)} <= ${range.upper}`;

/** One row per number of the range: the first row wins with "skip"; with "update" later non-empty values win. */
function foldedRows(staging: string, range: Range, policy: DuplicatePolicy) {
  const from = sql`${sql.table(staging)} s`;
  if (policy === 'skip') {
    return sql`
      SELECT DISTINCT ON (phone_e164) phone_e164, first_name, last_name, email, company, timezone, attributes
      FROM ${from} WHERE ${inRange('s', range)} ORDER BY phone_e164, row_no`;
  }
  const lastNonNull = (column: string) =>
    sql`(array_agg(${sql.ref(column)} ORDER BY row_no DESC) FILTER (WHERE ${sql.ref(column)} IS NOT NULL))[1]`;
  return sql`
    SELECT phone_e164,
      ${lastNonNull('first_name')} AS first_name, ${lastNonNull('last_name')} AS last_name,
      ${lastNonNull('email')} AS email, ${lastNonNull('company')} AS company, ${lastNonNull('timezone')} AS timezone,
      jsonb_merge_agg(attributes ORDER BY row_no) FILTER (WHERE attributes IS NOT NULL) AS attributes
    FROM ${from} WHERE ${inRange('s', range)} GROUP BY phone_e164`;
}

/**
 * Ids of the contacts an import creates: a random prefix of its own (74 random bits, UUID version 8 layout)
 * and a counter. The import's new rows are then appended to the id indexes in order rather than written at
 * random, and they are exactly the ids between first and last (which is how a failed import on PGlite finds
 * them again).
 */
function importIds() {
  const hex = randomBytes(10).toString('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  const prefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(12, 15)}-${variant}${hex.slice(17, 20)}-`;
  return { prefix, first: `${prefix}000000000000`, last: `${prefix}ffffffffffff` };
}

type ImportIds = ReturnType<typeof importIds>;

interface MergeTables {
  staging: string;
  /** PGlite only: the prior state of the contacts an "update" import changed (for undo). */
  previous: string | null;
}

/** Merges one range of numbers into the account's contacts; returns how many were created and updated. */
async function mergeContacts(
  trx: Session,
  tables: MergeTables,
  range: Range,
  request: ImportRequest,
  ids: ImportIds,
  merged: number,
) {
  const { accountId, now } = request;
  if (tables.previous && request.duplicatePolicy === 'update') {
    await sql`
      INSERT INTO ${sql.table(tables.previous)}
      SELECT c.id, c.first_name, c.last_name, c.email, c.company, c.timezone, c.attributes, c.updated_at
      FROM contacts c WHERE c.account_id = ${accountId} AND ${inRange('c', range)}
        AND EXISTS (SELECT 1 FROM ${sql.table(tables.staging)} s WHERE s.phone_e164 = c.phone_e164)`.execute(trx);
  }
  const insert = sql`
    INSERT INTO contacts (id, account_id, first_name, last_name, phone_e164, email, company, timezone, attributes, dnc, created_at, updated_at)
    SELECT (${ids.prefix} || lpad(to_hex(${merged}::bigint + row_number() OVER (ORDER BY u.phone_e164)), 12, '0'))::uuid AS id,
      ${accountId}::uuid, u.first_name, u.last_name, u.phone_e164, u.email, u.company, u.timezone, COALESCE(u.attributes, '{}'::jsonb),
      u.phone_e164 IN (${request.listedNumbers}),
      ${now}::timestamptz, ${now}::timestamptz
    FROM (${foldedRows(tables.staging, range, request.duplicatePolicy)}) u
    ORDER BY id`;
  let imported: number;
  let updated = 0;
  if (request.duplicatePolicy === 'skip') {
    const result = await sql`${insert} ON CONFLICT (account_id, phone_e164) DO NOTHING`.execute(trx);
    imported = Number(result.numAffectedRows ?? 0);
  } else {
    // xmax = 0 only on a freshly inserted row version: it tells created from updated in one pass. Attributes merged
    // from several rows or onto an existing contact may exceed its limits: the first such number fails the import.
    const { rows } = await sql<{ imported: number; updated: number; oversized: string | null }>`
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
        RETURNING (xmax = 0) AS inserted, attributes, phone_e164
      )
      SELECT count(*) FILTER (WHERE inserted)::int AS imported, count(*) FILTER (WHERE NOT inserted)::int AS updated,
        (SELECT phone_e164 FROM merged WHERE attributes <> '{}'::jsonb
          AND NOT contact_attributes_fit(attributes, ${MAX_ATTRIBUTES}, ${MAX_ATTRIBUTE_CHARS}) LIMIT 1) AS oversized
      FROM merged`.execute(trx);
    const result = rows[0]!;
    if (result.oversized !== null) {
      throw new AppError(
        'validation_failed',
        `Merging the rows for ${result.oversized} would give that contact more than ${MAX_ATTRIBUTES} attributes or ` +
          `${MAX_ATTRIBUTE_CHARS} characters of them; nothing was imported. Drop some columns, or import with duplicatePolicy=skip`,
        {
          fields: [{ field: 'body', message: 'merges into a contact past its attribute limits' }],
          phone: result.oversized,
        },
      );
    }
    imported = result.imported;
    updated = result.updated;
  }
  return { imported, updated };
}

/**
 * Adds the contacts of one range of numbers to the list, in key order (measured 2.5x faster than join order at
 * 1M rows); returns how many numbers the range held (each is now exactly one contact) and how many are on the DNC list.
 */
async function addMembers(trx: Session, tables: MergeTables, range: Range, request: ImportRequest, listId: string) {
  const { accountId } = request;
  const { rows: members } = await sql<{ numbers: number; dnc: number }>`
    WITH members AS (
      SELECT c.id, c.dnc FROM contacts c
      WHERE c.account_id = ${accountId} AND ${inRange('c', range)}
        AND EXISTS (SELECT 1 FROM ${sql.table(tables.staging)} s WHERE s.phone_e164 = c.phone_e164)
    ), added AS (
      INSERT INTO contact_list_members (list_id, contact_id, account_id)
      SELECT ${listId}::uuid, id, ${accountId}::uuid FROM members ORDER BY id
    )
    SELECT count(*)::int AS numbers, count(*) FILTER (WHERE dnc)::int AS dnc FROM members`.execute(trx);
  return members[0]!;
}

/** Removes what the committed steps of a failed PGlite import wrote. */
async function undoImport(trx: Session, tables: MergeTables, request: ImportRequest, listId: string, ids: ImportIds) {
  const { accountId } = request;
  await sql`DELETE FROM contact_list_members WHERE account_id = ${accountId} AND list_id = ${listId}`.execute(trx);
  await sql`DELETE FROM contact_lists WHERE account_id = ${accountId} AND id = ${listId}`.execute(trx);
  await sql`DELETE FROM contacts WHERE account_id = ${accountId} AND id BETWEEN ${ids.first} AND ${ids.last}`.execute(
    trx,
  );
  if (tables.previous) {
    await sql`
      UPDATE contacts c SET first_name = p.first_name, last_name = p.last_name, email = p.email, company = p.company,
        timezone = p.timezone, attributes = p.attributes, updated_at = p.updated_at
      FROM ${sql.table(tables.previous)} p WHERE c.account_id = ${accountId} AND c.id = p.id`.execute(trx);
  }
}

type Staged = Awaited<ReturnType<typeof stageFile>>;

async function mergeStaged(
  session: Session,
  kind: DatabaseKind,
  tables: MergeTables,
  request: ImportRequest,
  staged: Staged,
) {
  const listId = newId();
  const ids = importIds();
  const counts = await runBatchedMerge(
    session,
    kind,
    request.accountId,
    async (step) => {
      let after = '';
      let uniqueRows = 0;
      let imported = 0;
      let updated = 0;
      let dnc = 0;
      // Two steps per range, contacts then memberships: on PGlite each holds the connection for one statement's time.
      for (;;) {
        const range = await step(async (trx) => {
          const upper = await nextStagedRange(trx, tables.staging, after, MERGE_BATCH_NUMBERS);
          if (upper === null) return null;
          const range = { after, upper };
          const merged = await mergeContacts(trx, tables, range, request, ids, uniqueRows);
          imported += merged.imported;
          updated += merged.updated;
          return range;
        });
        if (!range) break;
        const members = await step((trx) => addMembers(trx, tables, range, request, listId));
        uniqueRows += members.numbers;
        dnc += members.dnc;
        after = range.upper;
      }
      // imported + updated + duplicates + invalid = rows: with "skip", a number already in the account is a duplicate.
      const duplicates = staged.valid - uniqueRows + (uniqueRows - imported - updated);
      const counts: ImportCounts = { rows: staged.rows, imported, updated, duplicates, invalid: staged.invalid, dnc };
      await step(async (trx) => {
        await trx
          .insertInto('contact_lists')
          .values({
            id: listId,
            account_id: request.accountId,
            name: request.name,
            default_country: request.defaultCountry,
            duplicate_policy: request.duplicatePolicy,
            row_count: counts.rows,
            imported_count: counts.imported,
            updated_count: counts.updated,
            duplicate_count: counts.duplicates,
            invalid_count: counts.invalid,
            dnc_count: counts.dnc,
            created_at: request.now,
          })
          .execute();
        await request.onImported(trx, { listId, counts });
      });
      return counts;
    },
    (trx) => undoImport(trx, tables, request, listId, ids),
  );
  return { listId, counts };
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
