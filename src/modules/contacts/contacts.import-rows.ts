/**
 * The reading half of an import, free of the database: CSV -> header mapping -> each row's size and characters ->
 * phone normalized to E.164 -> valid rows encoded for staging, in batches. It runs in a worker thread
 * (contacts.import-worker.ts) or, on a single core, on the calling thread: both give the same batches.
 */
import { readCsv } from '../../lib/csv.js';
import { AppError } from '../../lib/errors.js';
import { normalizePhone } from '../../lib/phone.js';
import { MAX_REPORTED_ERRORS, PHONE_HEADER_EXAMPLES, stagingJson } from '../../db/staging.js';
import { ATTRIBUTE_PROBLEM_MESSAGES, mapHeaders } from './contacts.csv-headers.js';
import type { ImportRowError } from './contacts.tables.js';

/** Limits of an imported file; past one, the file is refused with the line and the limit. */
export const IMPORT_CSV_LIMITS = { maxRecordChars: 256 * 1024, maxFieldChars: 32 * 1024, maxColumns: 1_000 };

/** Once this many rows are read (or the file ends) without a fault in the file, a later fault fails the import only. */
export const READY_ROWS = 2_000;
/**
 * Rows a batch holds at most: a COPY streams them all anyway; on PGlite one INSERT stages a batch, and other
 * requests wait for it meanwhile.
 */
const BATCH_ROWS: Record<StagingFormat, number> = { copy: 10_000, json: 5_000 };
/** Characters of CSV cells staged by one batch at most, whatever the row count. */
const BATCH_CHARS = 2 * 1024 * 1024;

/**
 * How staged rows travel: `copy` as lines of PostgreSQL's COPY text format, `json` as an array of objects with
 * one-letter keys for json_to_recordset (PGlite, which unpacks a whole batch in C).
 */
export type StagingFormat = 'copy' | 'json';

/** The staging table's columns, in the order both formats give them. */
export const STAGING_COLUMNS = [
  'row_no',
  'phone_e164',
  'first_name',
  'last_name',
  'email',
  'company',
  'timezone',
  'attributes',
] as const;

export interface ImportRowsOptions {
  limitBytes: number;
  defaultCountry: string;
  format: StagingFormat;
}

/** Valid rows ready to stage, with the figures of the file read so far. */
export interface RowBatch {
  /** The batch's valid rows in the staging format ('' when none). */
  data: string;
  /** Rows in data. */
  staged: number;
  /** Rows read so far (blank lines and the header not counted), of them valid and invalid. */
  rows: number;
  valid: number;
  invalid: number;
  /** Invalid rows reported in this batch (MAX_REPORTED_ERRORS in all). */
  errors: ImportRowError[];
  /** Bytes of the file read so far. */
  bytes: number;
  /** The header and the first READY_ROWS rows are read (or the whole file, when shorter). */
  ready: boolean;
  /** The file's last batch. */
  last: boolean;
}

interface RowProblem {
  reason: string;
  message: string;
}

const NUL_PROBLEM: RowProblem = {
  reason: 'nul_character',
  message: 'The row contains a NUL character (U+0000), which cannot be stored',
};

const isBlank = (cells: string[]) => cells.every((cell) => cell === '');

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A value in COPY text format: \N for null, backslash, tab and line breaks escaped (a NUL never gets here). */
function copyValue(value: string | null): string {
  if (value === null) return '\\N';
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!) : value;
}

/**
 * Attributes as jsonb text: what stagingJson does to a whole batch (a lone surrogate becomes U+FFFD), then escaped
 * for COPY. Text columns need nothing for surrogates: UTF-8 encoding turns a lone one into U+FFFD as well.
 */
const copyAttributes = (attributes: Record<string, string> | null) =>
  attributes === null ? '\\N' : copyValue(stagingJson([attributes]).slice(1, -1));

/** The valid rows of a CSV body, in batches (see RowBatch); throws what a faulty file fails with. */
export async function* readImportRows(
  source: AsyncIterable<Buffer | Uint8Array | string>,
  options: ImportRowsOptions,
): AsyncGenerator<RowBatch> {
  const read = { bytes: 0 };
  const copy = options.format === 'copy';
  let mapper: ReturnType<typeof mapHeaders> | null = null;
  let recordNo = 0;
  let rows = 0;
  let valid = 0;
  let invalid = 0;
  let ready = false;
  let errors: ImportRowError[] = [];
  let reported = 0;
  let text = '';
  let json: unknown[] = [];
  let staged = 0;
  let chars = 0;

  function reportInvalid(row: number, phone: string, reason: string, message: string) {
    invalid++;
    if (reported >= MAX_REPORTED_ERRORS) return;
    reported++;
    errors.push({ row, phone: phone.slice(0, 64), reason, message });
  }

  function take(last: boolean, readyNow: boolean): RowBatch {
    const data = copy ? text : staged > 0 ? stagingJson(json) : '';
    const batch = { data, staged, rows, valid, invalid, errors, bytes: read.bytes, ready: readyNow, last };
    text = '';
    json = [];
    staged = 0;
    chars = 0;
    errors = [];
    return batch;
  }

  for await (const csv of readCsv(countBytes(source, read), { limitBytes: options.limitBytes, ...IMPORT_CSV_LIMITS })) {
    let nulAt = csv.nulRecords.length > 0 ? 0 : -1;
    for (let index = 0; index < csv.records.length; index++) {
      const cells = csv.records[index]!;
      const hasNul = nulAt >= 0 && csv.nulRecords[nulAt] === index;
      if (hasNul) nulAt++;
      recordNo++;
      if (isBlank(cells)) continue;
      if (!mapper) {
        if (hasNul) throw nulInHeader(csv.lines[index]!);
        mapper = mapHeaders(cells);
        if (!mapper.hasPhone) throw missingPhoneColumn(cells);
        continue;
      }
      rows++;
      const row = mapper.map(cells);
      // A refused row's phone is not looked at.
      if (hasNul) {
        reportInvalid(recordNo, row.phone, NUL_PROBLEM.reason, NUL_PROBLEM.message);
        continue;
      }
      if (row.attributesProblem) {
        reportInvalid(recordNo, row.phone, row.attributesProblem, ATTRIBUTE_PROBLEM_MESSAGES[row.attributesProblem]);
        continue;
      }
      const phone = normalizePhone(row.phone, options.defaultCountry);
      if ('error' in phone) {
        reportInvalid(recordNo, row.phone, phone.error, phone.message);
        continue;
      }
      valid++;
      staged++;
      for (const cell of cells) chars += cell.length;
      if (copy) {
        text += `${recordNo}\t${phone.e164}\t${copyValue(row.firstName)}\t${copyValue(row.lastName)}\t${copyValue(row.email)}\t${copyValue(row.company)}\t${copyValue(row.timezone)}\t${copyAttributes(row.attributes)}\n`;
      } else {
        json.push({
          r: recordNo,
          p: phone.e164,
          f: row.firstName,
          l: row.lastName,
          e: row.email,
          c: row.company,
          t: row.timezone,
          a: row.attributes,
        });
      }
    }
    // What fails after the header and the first rows fails the import, not the request: say so as soon as they are read.
    if (!ready && rows >= READY_ROWS) {
      ready = true;
      yield take(false, true);
    } else if (staged >= BATCH_ROWS[options.format] || chars >= BATCH_CHARS) {
      yield take(false, false);
    }
  }
  if (!mapper)
    throw new AppError('validation_failed', 'The CSV body is empty: send a header row, then one contact per row', {
      fields: [{ field: 'body', message: 'is empty' }],
    });
  yield take(true, !ready);
}

/** The stream, counting its bytes into `read` as they pass. */
async function* countBytes(stream: AsyncIterable<Buffer | Uint8Array | string>, read: { bytes: number }) {
  for await (const chunk of stream) {
    read.bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    yield typeof chunk === 'string' || Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
  }
}

function nulInHeader(line: number) {
  return new AppError(
    'invalid_csv',
    `The header row (line ${line}) contains a NUL character (U+0000), which cannot be stored`,
    { line, reason: 'nul_character' },
  );
}

function missingPhoneColumn(headers: string[]) {
  return new AppError(
    'validation_failed',
    `No phone column in the header row; name one of them like: ${PHONE_HEADER_EXAMPLES.join(', ')}`,
    { fields: [{ field: 'body/header', message: 'has no phone column' }], headers: headers.slice(0, 100) },
  );
}
