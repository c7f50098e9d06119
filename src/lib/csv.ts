/**
 * CSV in and out, shared by every endpoint that takes or returns CSV.
 * Reading is streamed with hard limits (body size, record size, field size, columns) so a hostile or huge
 * file cannot exhaust memory, and it yields to the event loop as it goes so a file that is slow to parse
 * cannot starve other requests; writing neutralizes spreadsheet formulas.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { stringify } from 'csv-stringify/sync';

/** A CSV body as it arrives: the stream, and the size the client announced. */
export interface CsvUpload {
  stream: AsyncIterable<Buffer | string>;
  /** The Content-Length the client announced, if any: a body announced past the limit is refused before reading. */
  declaredBytes: number | null;
}

export interface CsvReadOptions {
  limitBytes: number;
  /** One record (a row with all its fields) may not be longer; guards against a runaway quoted field. */
  maxRecordChars?: number;
  /** One field may not be longer. */
  maxFieldChars?: number;
  /** A record may not have more fields. */
  maxColumns?: number;
  /** How long the reader (and the caller's work between batches) may hold the event loop before it yields. */
  sliceMs?: number;
}

/** Records as the parser completes them, a few thousand at most. */
export interface CsvBatch {
  records: string[][];
  /** The line each record starts on (the first line is 1). */
  lines: number[];
  /** Indexes into records of those with a NUL character (U+0000) in a field, which no database text can hold. */
  nulRecords: number[];
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
    readonly detectedAtLine: number | null = null,
    /** The limit that was exceeded, for the *_too_large and too_many_* reasons. */
    readonly limit: number | null = null,
  ) {
    super(message);
  }
}

const SNIFF_BYTES = 64 * 1024;
const DELIMITERS = [',', ';', '\t', '|'] as const;
export const DEFAULT_MAX_RECORD_CHARS = 1024 * 1024;
export const DEFAULT_MAX_FIELD_CHARS = 64 * 1024;
export const DEFAULT_MAX_COLUMNS = 1000;
/** Text is parsed in slices of this many characters, so the time check between slices stays frequent. */
const SLICE_CHARS = 16 * 1024;
const DEFAULT_SLICE_MS = 10;

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

const LF = 10;
const CR = 13;
const QUOTE = 34;
const SPACE = 32;
const TAB = 9;
const FORM_FEED = 12;
const INCOMPLETE = -1;
const NEXT_FIELD = -2;
const RECORD_ENDS = -3;

/** The position of the first character at or after p that is not a space, tab or form feed. */
function skipBlanks(s: string, p: number): number {
  while (p < s.length) {
    const c = s.charCodeAt(p);
    if (c === SPACE || c === TAB || c === FORM_FEED) p++;
    else break;
  }
  return p;
}

/** Lines a quoted field spans beyond its first: \n, \r\n and a lone \r each end one. */
function lineBreaks(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === LF) count++;
    else if (c === CR && text.charCodeAt(i + 1) !== LF) count++;
  }
  return count;
}

/**
 * An RFC 4180 parser over decoded text, fed a slice at a time. Fields are trimmed (outside quotes); a quoted
 * field may hold delimiters, newlines and "" for a quote; records end with \n, \r\n or \r; rows may have any
 * number of fields (a row longer or shorter than the header costs nothing extra). An incomplete record at the
 * end of a slice is kept and parsed again with the next slice.
 */
class CsvParser {
  private pending = '';
  /** Line on which the next record starts. */
  private line = 1;
  private pendingInQuote = false;
  /** The record being read: where its next character is, and how many line breaks its quoted fields held so far. */
  private cursor = 0;
  private extraLines = 0;

  constructor(
    private readonly delimiter: number,
    private readonly maxRecordChars: number,
    private readonly maxFieldChars: number,
    private readonly maxColumns: number,
  ) {}

  feed(text: string, final: boolean, batch: CsvBatch) {
    const s = this.pending.length > 0 ? this.pending + text : text;
    const checkNul = s.indexOf('\0') !== -1;
    let pos = 0;
    while (pos < s.length) {
      const end = this.record(s, pos, final, batch, checkNul);
      if (end === INCOMPLETE) break;
      pos = end;
    }
    this.pending = pos < s.length ? s.slice(pos) : '';
    if (this.pending.length > this.maxRecordChars) throw this.recordTooLarge(this.pendingInQuote);
  }

  private recordTooLarge(inQuote: boolean) {
    if (inQuote) {
      return new CsvSyntaxError(
        `Malformed CSV in the record starting on line ${this.line}: a quote opened there is not closed within ${this.maxRecordChars} characters`,
        this.line,
        'quote_not_closed',
        null,
        this.maxRecordChars,
      );
    }
    return new CsvSyntaxError(
      `The record starting on line ${this.line} is longer than the limit of ${this.maxRecordChars} characters`,
      this.line,
      'record_too_large',
      null,
      this.maxRecordChars,
    );
  }

  private syntaxError(reason: string, detail: string, extraLines: number) {
    const at = this.line + extraLines;
    return new CsvSyntaxError(
      `Malformed CSV in the record starting on line ${this.line}: ${detail}`,
      this.line,
      reason,
      at > this.line ? at : null,
    );
  }

  /** Parses the record starting at pos; returns the position after it, or INCOMPLETE when the text runs out first. */
  private record(s: string, pos: number, final: boolean, batch: CsvBatch, checkNul: boolean): number {
    const cells: string[] = [];
    this.extraLines = 0;
    this.cursor = pos;
    let hasNul = false;
    let quoted = false;
    for (;;) {
      const start = skipBlanks(s, this.cursor);
      const opensQuote = start < s.length && s.charCodeAt(start) === QUOTE;
      quoted ||= opensQuote;
      const value = opensQuote ? this.quotedField(s, start, final) : this.plainField(s, start, final);
      if (value === null) return INCOMPLETE;
      if (checkNul && value.indexOf('\0') !== -1) hasNul = true;
      cells.push(value);
      this.checkLimits(value, cells.length, this.cursor - pos);
      if (this.cursor === s.length) {
        // The last record, without a line break (only reached when final); nothing but spaces is no record.
        if (cells.length === 1 && cells[0] === '' && !quoted) return s.length;
        break;
      }
      const next = this.afterField(s, final);
      if (next === INCOMPLETE) return INCOMPLETE;
      if (next === RECORD_ENDS) break;
    }
    if (hasNul) batch.nulRecords.push(batch.records.length);
    batch.records.push(cells);
    batch.lines.push(this.line);
    this.line += this.extraLines + 1;
    return this.cursor;
  }

  /**
   * The quoted field whose quote is at q, "" read as one quote; moves the cursor past its closing quote and the
   * blanks after it. Null when the text runs out before the field is known to be complete.
   */
  private quotedField(s: string, q: number, final: boolean): string | null {
    const n = s.length;
    let start = q + 1;
    let value = '';
    for (;;) {
      const close = s.indexOf('"', start);
      if (close === -1 || (close + 1 === n && !final)) {
        if (!final) {
          this.pendingInQuote = close === -1;
          return null;
        }
        throw this.syntaxError(
          'quote_not_closed',
          'a quoted field is never closed',
          this.extraLines + lineBreaks(s.slice(start)),
        );
      }
      if (s.charCodeAt(close + 1) === QUOTE) {
        value += s.slice(start, close + 1);
        start = close + 2;
        continue;
      }
      value += s.slice(start, close);
      this.cursor = close + 1;
      break;
    }
    if (value.indexOf('\n') !== -1 || value.indexOf('\r') !== -1) this.extraLines += lineBreaks(value);
    const p = skipBlanks(s, this.cursor);
    this.cursor = p;
    if (p < n) {
      const c = s.charCodeAt(p);
      if (c !== this.delimiter && c !== LF && c !== CR) {
        throw this.syntaxError(
          'invalid_closing_quote',
          `a closing quote is followed by "${s[p]}" instead of a delimiter or the end of the line`,
          this.extraLines,
        );
      }
    } else if (!final) {
      this.pendingInQuote = false;
      return null;
    }
    return value;
  }

  /**
   * The unquoted field starting at q, trimmed; moves the cursor to the delimiter or line break after it. Null when
   * the text runs out before the field ends.
   */
  private plainField(s: string, q: number, final: boolean): string | null {
    const n = s.length;
    let r = q;
    while (r < n) {
      const c = s.charCodeAt(r);
      if (c === this.delimiter || c === LF || c === CR) break;
      if (c === QUOTE)
        throw this.syntaxError(
          'invalid_opening_quote',
          'a quote inside a field that does not start with one',
          this.extraLines,
        );
      r++;
    }
    if (r === n && !final) {
      this.pendingInQuote = false;
      return null;
    }
    this.cursor = r;
    return s.slice(q, r).trim();
  }

  /** The field, column and record limits, checked as each field is read. */
  private checkLimits(value: string, columns: number, recordChars: number) {
    if (value.length > this.maxFieldChars) {
      throw new CsvSyntaxError(
        `Line ${this.line + this.extraLines} has a field longer than the limit of ${this.maxFieldChars} characters`,
        this.line,
        'field_too_large',
        null,
        this.maxFieldChars,
      );
    }
    if (columns > this.maxColumns) {
      throw new CsvSyntaxError(
        `The record starting on line ${this.line} has more than the limit of ${this.maxColumns} fields`,
        this.line,
        'too_many_columns',
        null,
        this.maxColumns,
      );
    }
    if (recordChars > this.maxRecordChars) throw this.recordTooLarge(false);
  }

  /**
   * Past the delimiter or line break at the cursor: NEXT_FIELD after a delimiter, RECORD_ENDS after \n, \r\n or
   * \r, INCOMPLETE when a \r ends the text and a \n may follow.
   */
  private afterField(s: string, final: boolean): typeof NEXT_FIELD | typeof RECORD_ENDS | typeof INCOMPLETE {
    const p = this.cursor;
    const c = s.charCodeAt(p);
    if (c === this.delimiter) {
      this.cursor = p + 1;
      return NEXT_FIELD;
    }
    if (c === CR) {
      if (p + 1 === s.length && !final) {
        this.pendingInQuote = false;
        return INCOMPLETE;
      }
      this.cursor = p + (s.charCodeAt(p + 1) === LF ? 2 : 1);
    } else {
      this.cursor = p + 1; // LF
    }
    return RECORD_ENDS;
  }
}

const emptyBatch = (): CsvBatch => ({ records: [], lines: [], nulRecords: [] });

/**
 * Streams the records of a CSV body, in batches of what each slice of text completes. Handles a UTF-8 BOM,
 * UTF-16LE (Excel "Unicode text"), CRLF, quoted fields with delimiters and newlines, and ',', ';', tab or '|'
 * delimiters (sniffed from the header). Invalid UTF-8 becomes U+FFFD. Throws CsvTooLargeError past
 * limitBytes and CsvSyntaxError on malformed input or past a record, field or column limit.
 * Between slices it yields to the event loop once sliceMs have passed since it last did, so other requests
 * keep being served whatever the file holds.
 */
export async function* readCsv(
  source: AsyncIterable<Buffer | string>,
  options: CsvReadOptions,
): AsyncGenerator<CsvBatch> {
  const iterator = source[Symbol.asyncIterator]();
  const sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
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
  const encoding = headBuffer[0] === 0xff && headBuffer[1] === 0xfe ? 'utf-16le' : 'utf-8';
  // Both decoders drop a leading BOM.
  const decoder = new TextDecoder(encoding);
  const headText = new TextDecoder(encoding).decode(headBuffer);
  const parser = new CsvParser(
    sniffDelimiter(headText).charCodeAt(0),
    options.maxRecordChars ?? DEFAULT_MAX_RECORD_CHARS,
    options.maxFieldChars ?? DEFAULT_MAX_FIELD_CHARS,
    options.maxColumns ?? DEFAULT_MAX_COLUMNS,
  );

  let batch = emptyBatch();
  let lastYield = performance.now();
  async function* parse(text: string, final: boolean): AsyncGenerator<CsvBatch> {
    for (let at = 0; at < text.length || (final && at === 0); at += SLICE_CHARS) {
      const slice = text.length <= SLICE_CHARS ? text : text.slice(at, at + SLICE_CHARS);
      parser.feed(slice, final && at + SLICE_CHARS >= text.length, batch);
      if (batch.records.length > 0) {
        yield batch;
        batch = emptyBatch();
      }
      if (performance.now() - lastYield >= sliceMs) {
        await nextTurn();
        lastYield = performance.now();
      }
    }
  }

  yield* parse(decoder.decode(headBuffer, { stream: true }), false);
  while (!exhausted) {
    const next = await iterator.next();
    if (next.done) break;
    yield* parse(decoder.decode(counted(next.value), { stream: true }), false);
  }
  yield* parse(decoder.decode(), true);
}

/** Lowercase letters and digits only: "Phone Number", "phone_number" and "PHONE-NUMBER" all become "phonenumber". */
export function headerKey(header: string): string {
  return header
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

// A cell starting with one of these is run as a formula by spreadsheet software (CSV injection), also behind
// leading whitespace of any kind (space, NBSP, ideographic space, other Unicode spaces) or invisible
// format characters (zero-width space, BOM), which some spreadsheets skip before reading a formula.
const FORMULA_START = /^[\s\p{Cf}]*[=+\-@]|^[\t\r]/u;

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
