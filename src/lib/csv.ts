/**
 * CSV in and out, shared by every endpoint that takes or returns CSV.
 * Reading is streamed with hard limits (body size, record size) so a hostile or huge file cannot
 * exhaust memory; writing neutralizes spreadsheet formulas.
 */
import { Readable } from 'node:stream';
import { Parser, CsvError } from 'csv-parse';
import { stringify } from 'csv-stringify/sync';

/** A CSV body as it arrives: the stream, and the size the client announced. */
export interface CsvUpload {
  stream: AsyncIterable<Buffer | string>;
  /** The Content-Length the client announced, if any: a body announced past the limit is refused before reading. */
  declaredBytes: number | null;
}

export interface CsvReadOptions {
  limitBytes: number;
  /** One record (a row with all its fields) may not exceed this; guards against a runaway quoted field. */
  maxRecordBytes?: number;
}

export class CsvTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`The CSV body is larger than the limit of ${limitBytes} bytes`);
  }
}

export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    /** Line on which the record that could not be parsed starts. */
    readonly line: number,
    readonly reason: string,
    /** Line on which the parser noticed the problem, when later than line (an unclosed quote runs on). */
    readonly detectedAtLine: number | null,
  ) {
    super(message);
  }
}

const SNIFF_BYTES = 64 * 1024;
const DELIMITERS = [',', ';', '\t', '|'] as const;

/** The delimiter used most often, outside quotes, on the header line. */
export function sniffDelimiter(headerLine: string): string {
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const char of headerLine) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && char === '\n') break;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  let best = ',';
  for (const d of DELIMITERS) if (counts.get(d)! > counts.get(best)!) best = d;
  return best;
}

function toBuffer(chunk: Buffer | string): Buffer {
  return typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
}

const parserErrorReasons: Record<string, string> = {
  CSV_QUOTE_NOT_CLOSED: 'quote_not_closed',
  CSV_INVALID_CLOSING_QUOTE: 'invalid_closing_quote',
  INVALID_OPENING_QUOTE: 'invalid_opening_quote',
  CSV_MAX_RECORD_SIZE: 'record_too_large',
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: 'invalid_closing_quote',
};

/**
 * Remembers the line on which the last complete record ended, as it is pushed (the parser runs ahead of
 * what has been consumed): the next record, the one that failed, starts on the line after. Read here
 * rather than through csv-parse's on_record, which builds a context object per record: a million rows
 * took 4.1 s of CPU to parse with on_record, 2.5 s this way.
 */
class LineTrackingParser extends Parser {
  lastRecordLine = 0;

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk !== null) this.lastRecordLine = this.info.lines;
    return super.push(chunk, encoding);
  }
}

/**
 * Streams the records of a CSV body, in batches of whatever the parser has ready. Handles a UTF-8 BOM, UTF-16LE (Excel "Unicode text"), CRLF,
 * quoted fields with delimiters and newlines, and ',', ';', tab or '|' delimiters (sniffed from the header).
 * Throws CsvTooLargeError past limitBytes and CsvSyntaxError on malformed input.
 */
export async function* readCsv(source: AsyncIterable<Buffer | string>, options: CsvReadOptions): AsyncGenerator<string[][]> {
  const iterator = source[Symbol.asyncIterator]();
  let bytes = 0;
  const counted = (chunk: Buffer | string) => {
    const buffer = toBuffer(chunk);
    bytes += buffer.length;
    if (bytes > options.limitBytes) throw new CsvTooLargeError(options.limitBytes);
    return buffer;
  };

  // Read up to the first newline to learn the encoding and the delimiter.
  const head: Buffer[] = [];
  let headBytes = 0;
  let exhausted = false;
  while (headBytes < SNIFF_BYTES) {
    const next = await iterator.next();
    if (next.done) {
      exhausted = true;
      break;
    }
    const buffer = counted(next.value);
    head.push(buffer);
    headBytes += buffer.length;
    if (buffer.includes(10)) break;
  }
  const headBuffer = Buffer.concat(head);
  const utf16 = headBuffer[0] === 0xff && headBuffer[1] === 0xfe;
  const decoder = utf16 ? new TextDecoder('utf-16le') : null;
  const decode = (buffer: Buffer, stream = true): Buffer | string => (decoder ? decoder.decode(buffer, { stream }) : buffer);
  const headText = utf16 ? new TextDecoder('utf-16le').decode(headBuffer) : headBuffer.toString('utf8');

  async function* chunks(): AsyncGenerator<Buffer | string> {
    yield decode(headBuffer);
    while (!exhausted) {
      const next = await iterator.next();
      if (next.done) break;
      yield decode(counted(next.value));
    }
    if (decoder) yield decoder.decode();
  }

  const parser = new LineTrackingParser({
    delimiter: sniffDelimiter(headText.replace(/^\uFEFF/, '')),
    bom: true,
    trim: true,
    relax_column_count: true,
    skip_empty_lines: false,
    max_record_size: options.maxRecordBytes ?? 1024 * 1024,
  });
  const input = Readable.from(chunks(), { objectMode: false });
  input.on('error', (error) => parser.destroy(error));
  input.pipe(parser);

  try {
    yield* recordBatches(parser);
  } catch (error) {
    if (error instanceof CsvError) {
      const start = parser.lastRecordLine + 1;
      const at = (error as CsvError & { lines?: number }).lines ?? start;
      const reason = parserErrorReasons[error.code] ?? error.code.toLowerCase();
      throw new CsvSyntaxError(
        `Malformed CSV in the record starting on line ${start}: ${error.message}`,
        start,
        reason,
        at > start ? at : null,
      );
    }
    throw error;
  } finally {
    // The request stream itself is left alone: destroying it would reset the connection before the error is sent.
    input.destroy();
    parser.destroy();
  }
}

/** Everything the parser has ready, as one array: one await per batch rather than per record. */
async function* recordBatches(parser: Parser): AsyncGenerator<string[][]> {
  let failure: Error | null = null;
  let ended = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  parser.on('readable', notify);
  parser.on('end', () => {
    ended = true;
    notify();
  });
  parser.on('error', (error) => {
    failure = error;
    notify();
  });
  for (;;) {
    const batch: string[][] = [];
    let record: string[] | null;
    while ((record = parser.read() as string[] | null) !== null) batch.push(record);
    if (batch.length > 0) yield batch;
    else if (failure) throw failure;
    else if (ended) return;
    else await new Promise<void>((resolve) => (wake = resolve));
  }
}

/** Lowercase letters and digits only: "Phone Number", "phone_number" and "PHONE-NUMBER" all become "phonenumber". */
export function headerKey(header: string): string {
  return header.normalize('NFKD').toLowerCase().replace(/[^a-z0-9]/g, '');
}

// A cell starting with one of these is run as a formula by spreadsheet software (CSV injection).
const FORMULA_START = /^[=+\-@\t\r]/;

/** Neutralizes a cell a spreadsheet would evaluate, by prefixing an apostrophe (OWASP's advice). */
export function spreadsheetSafe(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** CSV text for rows of cells, each cell made spreadsheet-safe; CRLF line endings as RFC 4180 says. */
export function toCsvLines(rows: Array<Array<string | number | boolean | null>>): string {
  return stringify(
    rows.map((row) => row.map((cell) => (cell === null ? '' : spreadsheetSafe(String(cell))))),
    { record_delimiter: '\r\n' },
  );
}
