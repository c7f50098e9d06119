/**
 * POST /v1/dnc/bulk: numbers from a JSON array or a streamed CSV, staged in a temporary table and
 * added in one short transaction (the same pipeline as contact imports): all or nothing.
 */
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../../db/types.js';
import type { Db } from '../../db/client.js';
import { AppError } from '../../http/errors.js';
import { checkDeclaredSize, csvReadError } from '../../http/csv-body.js';
import { readCsv, headerKey, type CsvUpload } from '../../lib/csv.js';
import { normalizePhone } from '../../lib/phone.js';
import { PHONE_HEADER_EXAMPLES, phoneColumns } from '../contacts/csv-headers.js';
import { MAX_REPORTED_ERRORS } from '../contacts/contacts-import.js';
import { createBatchWriter, dropTempTables, tempTableName, withSession, type DatabaseKind, type Session } from '../../db/staging.js';

const BATCH_ROWS = 5_000;
const REASON_HEADERS = ['reason', 'note', 'notes', 'comment', 'comments', 'source'];

export interface DncItem {
  row: number;
  phone: string;
  reason: string | null;
}

export type DncBulkInput = { items: Array<string | { phone: string; reason?: string | null }> } | { upload: CsvUpload };

interface BulkContext {
  accountId: string;
  defaultCountry: string;
  limitBytes: number;
  now: Date;
  /** Runs in the transaction that adds the numbers: flags the account's contacts and emits the domain event. */
  afterAdding(trx: Transaction<Database>, phones: RawBuilder<unknown>, added: number): Promise<{ contactsFlagged: number }>;
}

function* jsonItems(items: Array<string | { phone: string; reason?: string | null }>): Generator<DncItem> {
  let row = 0;
  for (const item of items) {
    row++;
    if (typeof item === 'string') yield { row, phone: item, reason: null };
    else yield { row, phone: item.phone, reason: item.reason?.trim() || null };
  }
}

async function* records(upload: CsvUpload, context: BulkContext) {
  for await (const batch of readCsv(upload.stream, { limitBytes: context.limitBytes, maxRecordBytes: 64 * 1024 })) yield* batch;
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
  if (!phoneAt) throw new AppError('validation_failed', 'The CSV body is empty', { fields: [{ field: 'body', message: 'is empty' }] });
}

async function stageItems(session: Session, staging: string, items: AsyncIterable<DncItem> | Iterable<DncItem>, context: BulkContext) {
  const writer = createBatchWriter<{ r: number; p: string; n: string | null }>(BATCH_ROWS, async (rows) => {
    await sql`
      INSERT INTO ${sql.table(staging)} (row_no, phone_e164, reason)
      SELECT r, p, n FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(r int, p text, n text)`.execute(session);
  });
  let rows = 0;
  let invalid = 0;
  const errors: Array<{ row: number; phone: string; reason: string; message: string }> = [];
  for await (const item of items) {
    rows++;
    const phone = normalizePhone(item.phone, context.defaultCountry);
    if ('error' in phone) {
      invalid++;
      if (errors.length < MAX_REPORTED_ERRORS) errors.push({ row: item.row, phone: item.phone.slice(0, 64), reason: phone.error, message: phone.message });
      continue;
    }
    const due = writer.add({ r: item.row, p: phone.e164, n: item.reason?.slice(0, 500) ?? null });
    if (due) await due;
  }
  await writer.finish();
  return { rows, invalid, errors };
}

async function addStaged(trx: Transaction<Database>, unique: string, context: BulkContext) {
  const { accountId, now } = context;
  const added = await sql`
    INSERT INTO dnc_entries (account_id, phone_e164, reason, created_at)
    SELECT ${accountId}::uuid, phone_e164, reason, ${now}::timestamptz FROM ${sql.table(unique)}
    ON CONFLICT (account_id, phone_e164) DO NOTHING`.execute(trx);
  const addedCount = Number(added.numAffectedRows ?? 0);
  const { contactsFlagged } = await context.afterAdding(trx, sql`SELECT phone_e164 FROM ${sql.table(unique)}`, addedCount);
  return { added: addedCount, contactsFlagged };
}

export async function addDncInBulk(db: Db, kind: DatabaseKind, input: DncBulkInput, context: BulkContext) {
  if ('upload' in input) checkDeclaredSize(input.upload, context.limitBytes);
  const staging = tempTableName('dnc_import');
  const unique = tempTableName('dnc_import_unique');
  return withSession(db, kind, async (session) => {
    try {
      await sql`CREATE TEMP TABLE ${sql.table(staging)} (row_no integer NOT NULL, phone_e164 text COLLATE "C" NOT NULL, reason text)`.execute(session);
      const items = 'upload' in input ? csvItems(input.upload, context) : jsonItems(input.items);
      const staged = await stageItems(session, staging, items, context).catch(csvReadError);
      await sql`
        CREATE TEMP TABLE ${sql.table(unique)} AS
        SELECT DISTINCT ON (phone_e164) phone_e164, reason FROM ${sql.table(staging)} ORDER BY phone_e164, row_no`.execute(session);
      const { added, contactsFlagged } = await session.transaction().execute((trx) => addStaged(trx, unique, context));
      return {
        rows: staged.rows,
        added,
        duplicates: staged.rows - staged.invalid - added,
        invalid: staged.invalid,
        contactsFlagged,
        errors: staged.errors,
      };
    } finally {
      await dropTempTables(session, [staging, unique]);
    }
  });
}
