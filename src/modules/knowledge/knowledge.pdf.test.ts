/**
 * Reading a PDF's text in a worker thread of its own: the text of an ordinary file, and a small file whose content
 * inflates to some 60 MB refused as too complex within its limits while the main thread stays free.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writePdf } from '../../../test/pdf-writer.js';
import { AppError } from '../../lib/errors.js';
import { pdfText } from './knowledge.pdf.js';

const LIMITS = { maxPages: 5, maxSeconds: 20, maxMemoryMb: 256 };

test('an ordinary PDF, deflated or not, is read page by page', async () => {
  const pages = [['Price list', 'The basic plan costs 10 euros.'], ['Delivery takes three days.']];
  for (const deflated of [false, true]) {
    const read = await pdfText(writePdf(pages, { deflated }), LIMITS);
    assert.equal(read.pages, 2);
    assert.match(read.text, /The basic plan costs 10 euros\./);
    assert.match(read.text, /Delivery takes three days\./);
  }
});

test('a small file that inflates far beyond its size is refused as too complex; the main thread stays free', async () => {
  // One line of text drawn 8 million times: about 60 KB on disk, 60 MB of content to parse.
  const bomb = writePdf([Array.from({ length: 8_000_000 }, () => 'a')], { deflated: true });
  assert.ok(bomb.length < 200_000, `${bomb.length} bytes`);
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 10);
  try {
    await assert.rejects(
      pdfText(bomb, { maxPages: 5, maxSeconds: 1, maxMemoryMb: 64 }),
      (error: unknown) =>
        error instanceof AppError &&
        error.code === 'validation_failed' &&
        error.details.reason === 'too_complex' &&
        /too complex to read within 1 s and 64 MB/.test(error.message),
    );
  } finally {
    clearInterval(ticker);
  }
  // The parse ran elsewhere: this thread's timers kept firing while it was refused.
  assert.ok(ticks >= 3, `the main thread ticked ${ticks} times`);
});

test('a file that is not a PDF is refused without starting a reader', async () => {
  await assert.rejects(pdfText(Buffer.from('just some text'), LIMITS), (error: unknown) => {
    return error instanceof AppError && error.details.reason === 'not_pdf';
  });
});
