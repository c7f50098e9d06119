/** The worker thread that reads one PDF's text (see knowledge.pdf.ts), and answers once. */
import { parentPort, workerData } from 'node:worker_threads';
import { AppError } from '../../lib/errors.js';
import { readPdfText, type PdfReply } from './knowledge.pdf.js';

const { bytes, maxPages } = workerData as { bytes: Uint8Array; maxPages: number };

async function answer(): Promise<PdfReply> {
  try {
    return { ok: await readPdfText(bytes, { maxPages }) };
  } catch (error) {
    if (error instanceof AppError) return { refused: { message: error.message, details: error.details } };
    const message = 'The file could not be read as a PDF';
    return { refused: { message, details: { reason: 'unreadable_pdf', fields: [{ field: 'body/file', message }] } } };
  }
}

parentPort!.postMessage(await answer());
