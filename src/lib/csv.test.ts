import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sniffDelimiter, spreadsheetSafe, toCsvLines } from './csv.js';

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
