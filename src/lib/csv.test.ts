import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CsvSyntaxError, readCsv, sniffDelimiter, spreadsheetSafe, toCsvLines, type CsvReadOptions } from './csv.js';

test('cells a spreadsheet would evaluate are neutralized', () => {
  for (const value of ['=1+1', '+1', '-1', '@SUM(A1)', '\t=1', '\r=1'])
    assert.equal(spreadsheetSafe(value), `'${value}`);
  for (const value of ['Ada', '1+1', "'already", '', 'a =1', '50%']) assert.equal(spreadsheetSafe(value), value);
  assert.equal(toCsvLines([['=cmd', 'a,b', null, true]]), `'=cmd,"a,b",,true\r\n`);
});

test('the delimiter is the one used most on the header line, outside quotes', () => {
  assert.equal(sniffDelimiter('phone,name,email'), ',');
  assert.equal(sniffDelimiter('Telefon;Name;"Firma, GmbH"'), ';');
  assert.equal(sniffDelimiter('"a;b;c",d'), ',');
  assert.equal(sniffDelimiter('phone\tname'), '\t');
  assert.equal(sniffDelimiter('phone'), ',');
});

async function syntaxErrorOf(chunks: string[]): Promise<CsvSyntaxError> {
  async function* source() {
    for (const chunk of chunks) yield Buffer.from(chunk);
  }
  try {
    for await (const _batch of readCsv(source(), { limitBytes: 1 << 30 })) void _batch;
  } catch (error) {
    assert.ok(error instanceof CsvSyntaxError, String(error));
    return error;
  }
  assert.fail('expected a CsvSyntaxError');
}

test('a syntax error names the line its record starts on, past quoted newlines and chunk boundaries', async () => {
  // Line 1 header, lines 2-3 one record with a quoted newline, line 4 fine, line 5 opens a quote it never closes.
  const small = await syntaxErrorOf([
    'phone,note\n+14155550100,"two\nlines"\n+1415555',
    '0101,ok\n+14155550102,"never closed\n+14155550103,x\n',
  ]);
  assert.equal(small.line, 5);
  assert.equal(small.reason, 'quote_not_closed');
  // Far down a file read in many chunks, where the parser runs ahead of the records consumed.
  const rows = Array.from({ length: 20_000 }, (_, i) => `+1415555${String(i).padStart(4, '0')},row ${i}\n`).join('');
  const big = await syntaxErrorOf([
    'phone,note\n',
    rows.slice(0, 200_000),
    rows.slice(200_000),
    'x,"bad"quote\n',
    'y,z\n',
  ]);
  assert.equal(big.line, 20_002);
});

test('formulas behind leading whitespace or invisible characters of any kind are neutralized too', () => {
  // space, NBSP, ideographic space, en quad, narrow NBSP, line separator, zero-width space, BOM, newline
  for (const lead of [
    ' ',
    '\u00a0',
    '\u3000',
    '\u2000',
    '\u202f',
    '\u2028',
    '\u200b',
    '\ufeff',
    '\n',
    ' \u00a0\u3000',
  ]) {
    for (const formula of ['=1+1', '+1', '-1', '@SUM(A1)']) {
      assert.equal(spreadsheetSafe(lead + formula), `'${lead}${formula}`, JSON.stringify(lead + formula));
    }
  }
  assert.equal(toCsvLines([['\u00a0=HYPERLINK("x")']]), `"'\u00a0=HYPERLINK(""x"")"\r\n`);
});

async function* chunksOf(text: string | Buffer, size: number) {
  const buffer = typeof text === 'string' ? Buffer.from(text) : text;
  for (let at = 0; at < buffer.length; at += size) yield buffer.subarray(at, at + size);
}

async function readAll(text: string | Buffer, options: Partial<CsvReadOptions> = {}, chunkSize = 7) {
  const records: string[][] = [];
  const lines: number[] = [];
  const nul: number[] = [];
  for await (const batch of readCsv(chunksOf(text, chunkSize), { limitBytes: 1 << 30, ...options })) {
    for (const index of batch.nulRecords) nul.push(records.length + index);
    records.push(...batch.records);
    lines.push(...batch.lines);
  }
  return { records, lines, nul };
}

test('records: quotes, escaped quotes, delimiters and newlines inside quotes, CRLF and CR, trimming, the line each starts on', async () => {
  const text =
    'phone, name ,note\r\n+1 415, "Ada, Countess" ,"said ""hi""\r\ntwice"\r\n\r\n+1 212,\tGrace\t,\r+1 646,"",x';
  for (const chunkSize of [1, 2, 3, 7, 64, 1 << 20]) {
    const { records, lines } = await readAll(text, {}, chunkSize);
    assert.deepEqual(
      records,
      [
        ['phone', 'name', 'note'],
        ['+1 415', 'Ada, Countess', 'said "hi"\r\ntwice'],
        [''],
        ['+1 212', 'Grace', ''],
        ['+1 646', '', 'x'],
      ],
      `chunks of ${chunkSize}`,
    );
    assert.deepEqual(lines, [1, 2, 4, 5, 6]);
  }
});

test('rows with more or fewer fields than the header are read as they are, at the cost of any other row', async () => {
  const { records } = await readAll(`phone\n${',\n'.repeat(5)}a,b,c\n\nd\n`);
  assert.deepEqual(records, [['phone'], ...Array(5).fill(['', '']), ['a', 'b', 'c'], [''], ['d']]);
  // A quarter of a million of them, in the chunks a request brings: read in one pass (the old parser built and
  // discarded an error object for each, ~55 µs a row, on the main thread).
  const many = await readAll(`Phone\n${',\n'.repeat(250_000)}`, {}, 64 * 1024);
  assert.equal(many.records.length, 250_001);
});

test('UTF-8 and UTF-16 byte order marks are dropped, invalid UTF-8 becomes U+FFFD, multi-byte characters survive chunking', async () => {
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('name\nZoë 日本\n')]);
  assert.deepEqual((await readAll(bom, {}, 1)).records, [['name'], ['Zoë 日本']]);
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('name;x\r\nJoão;1\r\n', 'utf16le')]);
  assert.deepEqual((await readAll(utf16, {}, 3)).records, [
    ['name', 'x'],
    ['João', '1'],
  ]);
  const invalid = Buffer.concat([Buffer.from('name\na'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('b\n')]);
  assert.deepEqual((await readAll(invalid, {}, 2)).records, [['name'], ['a\ufffd(\ufffdb']]);
});

test('records with a NUL character are flagged, wherever the NUL falls', async () => {
  const { records, nul } = await readAll('phone,name\n+1,ok\n+2,"bad\0"\n+3,fine\n+4,\0\n', {}, 5);
  assert.equal(records.length, 5);
  assert.deepEqual(nul, [2, 4]);
});

async function limitErrorOf(text: string, options: Partial<CsvReadOptions>): Promise<CsvSyntaxError> {
  try {
    await readAll(text, options, 1024);
  } catch (error) {
    assert.ok(error instanceof CsvSyntaxError, String(error));
    return error;
  }
  assert.fail('expected a CsvSyntaxError');
}

test('a record with too many fields, a field too long, or a record too long is refused with its line and the limit', async () => {
  const columns = await limitErrorOf(`a\nb\n${','.repeat(1000)}\n`, {});
  assert.deepEqual([columns.reason, columns.line, columns.limit], ['too_many_columns', 3, 1000]);
  assert.match(columns.message, /line 3 .*limit of 1000 fields/);

  const field = await limitErrorOf(`a,b\nx,${'y'.repeat(101)}\n`, { maxFieldChars: 100 });
  assert.deepEqual([field.reason, field.line, field.limit], ['field_too_large', 2, 100]);
  assert.match(field.message, /limit of 100 characters/);

  const record = await limitErrorOf(`a,b\n${'xxxxxxxxx,'.repeat(600)}\n`, { maxRecordChars: 5000 });
  assert.deepEqual([record.reason, record.line, record.limit], ['record_too_large', 2, 5000]);

  const unclosed = await limitErrorOf(`a,b\nx,"${'y\n'.repeat(3000)}`, { maxRecordChars: 5000 });
  assert.deepEqual([unclosed.reason, unclosed.line], ['quote_not_closed', 2]);
});

test('reading yields to the event loop as it parses, even when the whole file arrives in one chunk', async () => {
  // Counts turns of the event loop: a loop of setImmediate callbacks gets one turn each time the reader yields.
  let turns = 0;
  let spinning = true;
  const spin = () => {
    turns++;
    if (spinning) setImmediate(spin);
  };
  setImmediate(spin);
  const text = `Phone\n${',\n'.repeat(250_000)}`; // 500 KB: about 30 slices
  let records = 0;
  for await (const batch of readCsv(chunksOf(text, text.length), { limitBytes: 1 << 30, sliceMs: 0 }))
    records += batch.records.length;
  spinning = false;
  assert.equal(records, 250_001);
  assert.ok(turns >= 25, `the event loop turned ${turns} times while the file was read`);
});
