/**
 * POST /v1/dnc/bulk: numbers from a JSON array or a streamed CSV, staged in a temporary table and added
 * a few thousand numbers at a time (the same pipeline as contact imports): all or nothing.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import { AppError } from '../../lib/errors.js';
import { checkDeclaredSize, csvReadError } from '../../http/csv-body.js';
import { readCsv, headerKey, type CsvUpload } from '../../lib/csv.js';
import { normalizePhone } from '../../lib/phone.js';
import {
  createBatchWriter,
  dropTempTables,
  MAX_REPORTED_ERRORS,
  nextStagedRange,
  PHONE_HEADER_EXAMPLES,
  phoneColumns,
  runBatchedMerge,
  stagingJson,
  tempTableName,
  withSession,
  type DatabaseKind,
  type Session,
} from '../../db/staging.js';

const BATCH_ROWS = 5_000;
const MERGE_BATCH_NUMBERS = 5_000;
const REASON_HEADERS = ['reason', 'note', 'notes', 'comment', 'comments', 'source'];
/** Limits of a do-not-call file; past one, the file is refused with the line and the limit. */
export const DNC_CSV_LIMITS = { maxRecordChars: 64 * 1024, maxFieldChars: 32 * 1024, maxColumns: 1_000 };

export interface DncItem {
  row: number;
  phone: string;
  reason: string | null;
}

export type DncBulkInput = { items: Array<string | { phone: string; reason?: string | null }> } | { upload: CsvUpload };

/**
 * Another module's copy of the list (the contacts' do-not-call flags), kept in step by a bulk add inside each of its
 * steps: the add emits one event for all its numbers, which names none of them.
 */
export interface DncBulkFollower {
  /**
   * Marks what goes with these newly listed numbers (a subquery of `phone_e164`); on PGlite notes the ids it marked
   * in the temporary table `record` (one `id uuid` column), for undo. Answers how many it marked.
   */
  listed(
    trx: Session,
    accountId: string,
    phones: RawBuilder<unknown>,
    now: Date,
    record: string | null,
  ): Promise<number>;
  /** Undoes `listed` for the ids noted in `record`. */
  undo(trx: Session, accountId: string, record: RawBuilder<unknown>): Promise<void>;
}

interface BulkContext {
  accountId: string;
  defaultCountry: string;
  limitBytes: number;
  now: Date;
  follower: DncBulkFollower;
  /** Runs in the last step, once every number is added (the domain event). */
  afterAdding(trx: Session, added: number): Promise<void>;
}

function* jsonItems(items: Array<string | { phone: string; reason?: string | null }>): Generator<DncItem> {
  let row = 0;
  for (const item of items) {
    row++;
    const reason = typeof item === 'string' ? null : item.reason?.trim() || null;
    if (reason?.includes('\0')) {
      throw new AppError(
        'validation_failed',
        `Item ${row}: the reason contains a NUL character (U+0000), which cannot be stored`,
        {
          fields: [{ field: `body/${row - 1}/reason`, message: 'contains a NUL character' }],
        },
      );
    }
    yield { row, phone: typeof item === 'string' ? item : item.phone, reason };
  }
}

function nulInFile(line: number) {
  return new AppError(
    'invalid_csv',
    `Line ${line} contains a NUL character (U+0000), which cannot be stored; nothing was added`,
    {
      line,
      reason: 'nul_character',
    },
  );
}

async function* records(upload: CsvUpload, context: BulkContext) {
  for await (const batch of readCsv(upload.stream, { limitBytes: context.limitBytes, ...DNC_CSV_LIMITS })) {
    if (batch.nulRecords.length > 0) throw nulInFile(batch.lines[batch.nulRecords[0]!]!);
    yield* batch.records;
  }
}

/**
 * Items of a CSV: with a header naming a phone column, or, when the first row is itself a valid number,
 * one number per line with no header (the shape of most registry downloads).
 */
async function* csvItems(upload: CsvUpload, context: BulkContext): AsyncGenerator<DncItem> {
  let recordNo = 0;
  let phoneAt: number[] | null = null;
  let reasonAt = -1;
  for await (const cells of records(upload, context)) {
    recordNo++;
    if (cells.every((cell) => cell === '')) continue;
    if (!phoneAt) {
      phoneAt = phoneColumns(cells);
      if (phoneAt.length > 0) {
        reasonAt = cells.map(headerKey).findIndex((key) => REASON_HEADERS.includes(key));
        continue;
      }
      if (!('e164' in normalizePhone(cells[0]!, context.defaultCountry))) {
        throw new AppError(
          'validation_failed',
          `No phone column in the header row; name one like: ${PHONE_HEADER_EXAMPLES.join(', ')}, or send one number per line`,
          { fields: [{ field: 'body/header', message: 'has no phone column' }] },
        );
      }
      phoneAt = [0];
    }
    const phone = phoneAt.map((index) => cells[index] ?? '').find((value) => value !== '') ?? '';
    yield { row: recordNo, phone, reason: reasonAt >= 0 ? cells[reasonAt] || null : null };
  }
  if (!phoneAt)
    throw new AppError('validation_failed', 'The CSV body is empty', {
      fields: [{ field: 'body', message: 'is empty' }],
    });
}

async function stageItems(
  session: Session,
  staging: string,
  items: AsyncIterable<DncItem> | Iterable<DncItem>,
  context: BulkContext,
) {
  const writer = createBatchWriter<{ r: number; p: string; n: string | null }>(BATCH_ROWS, async (rows) => {
    await sql`
      INSERT INTO ${sql.table(staging)} (row_no, phone_e164, reason)
      SELECT r, p, n FROM json_to_recordset(${stagingJson(rows)}::json) AS x(r int, p text, n text)`.execute(session);
  });
  let rows = 0;
  let invalid = 0;
  const errors: Array<{ row: number; phone: string; reason: string; message: string }> = [];
  for await (const item of items) {
    rows++;
    const phone = normalizePhone(item.phone, context.defaultCountry);
    if ('error' in phone) {
      invalid++;
      if (errors.length < MAX_REPORTED_ERRORS)
        errors.push({ row: item.row, phone: item.phone.slice(0, 64), reason: phone.error, message: phone.message });
      continue;
    }
    const due = writer.add({ r: item.row, p: phone.e164, n: item.reason?.slice(0, 500) ?? null });
    if (due) await due;
  }
  await writer.finish();
  return { rows, invalid, errors };
}

interface BulkTables {
  staging: string;
  /** PGlite only: the numbers this request added and the ids its follower marked (for undo). */
  added: string | null;
  flagged: string | null;
}

/** Adds the next MERGE_BATCH_NUMBERS distinct numbers after `after`; null when none are left. */
async function addRange(trx: Session, tables: BulkTables, after: string, context: BulkContext) {
  const { accountId, now } = context;
  const upper = await nextStagedRange(trx, tables.staging, after, MERGE_BATCH_NUMBERS);
  if (upper === null) return null;
  const inRange = (column: string) => sql`${sql.ref(column)} > ${after} AND ${sql.ref(column)} <= ${upper}`;
  const recordAdded = tables.added
    ? sql`, recorded AS (INSERT INTO ${sql.table(tables.added)} (phone_e164) SELECT phone_e164 FROM added)`
    : sql``;
  const { rows: added } = await sql<{ n: number }>`
    WITH added AS (
      INSERT INTO dnc_entries (account_id, phone_e164, reason, created_at)
      SELECT ${accountId}::uuid, phone_e164, reason, ${now}::timestamptz FROM (
        SELECT DISTINCT ON (phone_e164) phone_e164, reason FROM ${sql.table(tables.staging)}
        WHERE ${inRange('phone_e164')} ORDER BY phone_e164, row_no
      ) u
      ON CONFLICT (account_id, phone_e164) DO NOTHING
      RETURNING phone_e164
    )${recordAdded}
    SELECT count(*)::int AS n FROM added`.execute(trx);
  const phones = sql`SELECT phone_e164 FROM ${sql.table(tables.staging)} WHERE ${inRange('phone_e164')}`;
  const flagged = await context.follower.listed(trx, accountId, phones, now, tables.flagged);
  return { upper, added: added[0]!.n, flagged };
}

/** Removes what the committed steps of a failed PGlite request wrote. */
async function undoBulk(trx: Session, tables: BulkTables, context: BulkContext) {
  const { accountId } = context;
  await sql`
    DELETE FROM dnc_entries WHERE account_id = ${accountId}
      AND phone_e164 IN (SELECT phone_e164 FROM ${sql.table(tables.added!)})`.execute(trx);
  await context.follower.undo(trx, accountId, sql`SELECT id FROM ${sql.table(tables.flagged!)}`);
}

export async function addDncInBulk(db: Db, kind: DatabaseKind, input: DncBulkInput, context: BulkContext) {
  if ('upload' in input) checkDeclaredSize(input.upload, context.limitBytes);
  const tables: BulkTables = {
    staging: tempTableName('dnc_import'),
    added: kind === 'pglite' ? tempTableName('dnc_import_added') : null,
    flagged: kind === 'pglite' ? tempTableName('dnc_import_flagged') : null,
  };
  return withSession(db, kind, async (session) => {
    try {
      await sql`CREATE TEMP TABLE ${sql.table(tables.staging)} (row_no integer NOT NULL, phone_e164 text COLLATE "C" NOT NULL, reason text)`.execute(
        session,
      );
      if (tables.added)
        await sql`CREATE TEMP TABLE ${sql.table(tables.added)} (phone_e164 text COLLATE "C" NOT NULL)`.execute(session);
      if (tables.flagged) await sql`CREATE TEMP TABLE ${sql.table(tables.flagged)} (id uuid NOT NULL)`.execute(session);
      const items = 'upload' in input ? csvItems(input.upload, context) : jsonItems(input.items);
      const staged = await stageItems(session, tables.staging, items, context).catch(csvReadError);
      await sql`CREATE INDEX ON ${sql.table(tables.staging)} (phone_e164, row_no)`.execute(session);
      const { added, contactsFlagged } = await runBatchedMerge(
        session,
        kind,
        context.accountId,
        async (step) => {
          let after = '';
          let added = 0;
          let contactsFlagged = 0;
          for (;;) {
            const range = await step((trx) => addRange(trx, tables, after, context));
            if (!range) break;
            added += range.added;
            contactsFlagged += range.flagged;
            after = range.upper;
          }
          await step((trx) => context.afterAdding(trx, added));
          return { added, contactsFlagged };
        },
        (trx) => undoBulk(trx, tables, context),
      );
      return {
        rows: staged.rows,
        added,
        duplicates: staged.rows - staged.invalid - added,
        invalid: staged.invalid,
        contactsFlagged,
        errors: staged.errors,
      };
    } finally {
      await dropTempTables(
        session,
        [tables.staging, tables.added, tables.flagged].filter((t): t is string => t !== null),
      );
    }
  });
}
