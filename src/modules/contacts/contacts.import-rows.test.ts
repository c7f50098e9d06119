import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CsvSyntaxError, CsvTooLargeError } from '../../lib/csv.js';
import { AppError } from '../../lib/errors.js';
import { readImportRows, type ImportRowsOptions, type RowBatch, type StagingFormat } from './contacts.import-rows.js';
import { readImportRowsInWorker } from './contacts.import-threads.js';

const options = (format: StagingFormat, limitBytes = 64 * 1024 * 1024): ImportRowsOptions => ({
  limitBytes,
  defaultCountry: 'US',
  format,
});

/** The text in chunks of `size` bytes, as a request body arrives. */
async function* chunked(text: string, size = 4096) {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function collect(batches: AsyncIterable<RowBatch>) {
  const all: RowBatch[] = [];
  for await (const batch of batches) all.push(batch);
  return all;
}

async function failure(batches: AsyncIterable<RowBatch>) {
  try {
    await collect(batches);
  } catch (error) {
    return error;
  }
  assert.fail('the file was not refused');
}

/** 12,000 rows: valid numbers in several formats, repeats, bad numbers, a NUL, quotes, tabs and backslashes. */
function mixedFile() {
  const lines = ['Phone Number,First Name,Last Name,Email,Company,Time Zone,Stage,Notes'];
  for (let i = 0; i < 12_000; i++) {
    const phone =
      i % 97 === 5
        ? 'n/a'
        : i % 50 === 1
          ? `(415) 555-${String(i % 10_000).padStart(4, '0')}`
          : `+1212${2_000_000 + i}`;
    const notes = i % 7 === 0 ? `"tab\there, back\\slash, ""quoted""\nsecond line"` : i % 1_000 === 3 ? 'nul\0' : '';
    lines.push(`${phone},First${i},Last${i},P${i}@Example.com,Co ${i % 9},America/New_York,lead,${notes}`);
  }
  return `${lines.join('\r\n')}\r\n`;
}

for (const format of ['copy', 'json'] as const) {
  test(`the worker thread gives the same ${format} batches, row errors and counts as the calling thread`, async () => {
    const text = mixedFile();
    const here = await collect(readImportRows(chunked(text), options(format)));
    const there = await collect(readImportRowsInWorker(chunked(text), options(format)));
    assert.deepEqual(there, here);
    const last = here.at(-1)!;
    assert.equal(last.last, true);
    assert.equal(last.rows, 12_000);
    assert.equal(last.valid + last.invalid, 12_000);
    assert.equal(
      here.reduce((sum, batch) => sum + batch.staged, 0),
      last.valid,
    );
    assert.equal(
      here.reduce((sum, batch) => sum + batch.errors.length, 0),
      100,
    );
    // Ready once, at the end of the parsed text that completes the first 2,000 rows.
    const ready = here.filter((batch) => batch.ready);
    assert.equal(ready.length, 1);
    assert.ok(ready[0]!.rows >= 2_000 && ready[0]!.rows < 2_500, `ready at ${ready[0]!.rows} rows`);
  });
}

test('COPY text escapes what the format needs and gives no value for an empty cell', async () => {
  const text = 'phone,company,notes\n+14155552671,"a\tb\\c",\n+14155552672,,"x\ny"\n';
  const [batch] = await collect(readImportRows(chunked(text), options('copy')));
  assert.equal(
    batch!.data,
    '2\t+14155552671\t\\N\t\\N\t\\N\ta\\tb\\\\c\t\\N\t\\N\n' +
      '3\t+14155552672\t\\N\t\\N\t\\N\t\\N\t\\N\t{"notes":"x\\\\ny"}\n',
  );
});

test('a file the worker refuses fails with the same error as on the calling thread, and is read no further', async () => {
  const files: Array<[string, (error: unknown) => boolean]> = [
    ['phone,name\n+14155552671,"unclosed\n', (e) => e instanceof CsvSyntaxError && e.reason === 'quote_not_closed'],
    ['name,email\nAda,ada@example.com\n', (e) => e instanceof AppError && e.code === 'validation_failed'],
    ['\n\n', (e) => e instanceof AppError && e.code === 'validation_failed'],
    ['pho\0ne\n+14155552671\n', (e) => e instanceof AppError && e.code === 'invalid_csv'],
  ];
  for (const [text, expected] of files) {
    const here = await failure(readImportRows(chunked(text), options('copy')));
    const there = await failure(readImportRowsInWorker(chunked(text), options('copy')));
    assert.ok(expected(here), String(here));
    assert.deepEqual(there, here);
    assert.equal(Object.getPrototypeOf(there), Object.getPrototypeOf(here));
  }
  const long = `phone\n${'+14155552671\n'.repeat(10_000)}`;
  const tooLarge = await failure(readImportRowsInWorker(chunked(long), options('copy', 50_000)));
  assert.ok(tooLarge instanceof CsvTooLargeError);
  // The worker stopped on the refused file; the next import starts clean.
  const after = await collect(readImportRowsInWorker(chunked('phone\n+14155552671\n'), options('copy')));
  assert.equal(after.at(-1)!.valid, 1);
});
