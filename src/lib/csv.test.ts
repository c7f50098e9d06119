import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CsvSyntaxError, readCsv, sniffDelimiter, spreadsheetSafe, toCsvLines } from './csv.js';

test('cells a spreadsheet would evaluate are neutralized', () => {
  for (const value of ['=1+1', '+1', '-1', '@SUM(A1)', '\t=1', '\r=1']) assert.equal(spreadsheetSafe(value), `'${value}`);
  for (const value of ['Ada', '1+1', "'already", '', ' =1']) assert.equal(spreadsheetSafe(value), value);
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
    for await (const _records of readCsv(source(), { limitBytes: 1 << 30 })) void _records;
  } catch (error) {
    assert.ok(error instanceof CsvSyntaxError, String(error));
    return error;
  }
  assert.fail('expected a CsvSyntaxError');
}

test('a syntax error names the line its record starts on, past quoted newlines and chunk boundaries', async () => {
  // Line 1 header, lines 2-3 one record with a quoted newline, line 4 fine, line 5 opens a quote it never closes.
  const small = await syntaxErrorOf(['phone,note\n+14155550100,"two\nlines"\n+1415555', '0101,ok\n+14155550102,"never closed\n+14155550103,x\n']);
  assert.equal(small.line, 5);
  assert.equal(small.reason, 'quote_not_closed');
  // Far down a file read in many chunks, where the parser runs ahead of the records consumed.
  const rows = Array.from({ length: 20_000 }, (_, i) => `+1415555${String(i).padStart(4, '0')},row ${i}\n`).join('');
  const big = await syntaxErrorOf(['phone,note\n', rows.slice(0, 200_000), rows.slice(200_000), 'x,"bad"quote\n', 'y,z\n']);
  assert.equal(big.line, 20_002);
});
