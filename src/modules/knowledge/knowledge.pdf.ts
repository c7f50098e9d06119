/**
 * Text from a PDF, with pdf.js (through unpdf, which bundles a build that needs no worker or canvas). A file that
 * is not a PDF, is encrypted, has too many pages, or has no text layer (a scan) is refused with a clear 400.
 *
 * The parse runs in a worker thread of its own, with a memory and a time limit: a small file can hold content streams
 * that inflate to hundreds of megabytes, and reading it on the main thread would stall every other request and could
 * exhaust the process's memory. Such a file is refused as too complex.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { extractText, getDocumentProxy } from 'unpdf';
import { AppError } from '../../lib/errors.js';

export interface PdfText {
  pages: number;
  text: string;
}

/** A refusal of the file itself: `details.reason` says which, and the field named is the upload. */
const refuse = (message: string, reason: string, details: Record<string, unknown> = {}) =>
  new AppError('validation_failed', message, { reason, ...details, fields: [{ field: 'body/file', message }] });

export interface PdfLimits {
  maxPages: number;
  /** How long reading may take before the file is refused. */
  maxSeconds: number;
  /** The reader's heap, in megabytes. */
  maxMemoryMb: number;
}

/** What the worker answers: the text, or the refusal to rebuild as an AppError. */
export type PdfReply = { ok: PdfText } | { refused: { message: string; details: Record<string, unknown> } };

// Runs under tsx (.ts) and compiled (.js) alike; under tsx the worker first registers tsx's loader.
const extension = extname(fileURLToPath(import.meta.url));
const workerUrl = new URL(`./knowledge.pdf-worker${extension}`, import.meta.url);

function spawnReader(workerData: { bytes: Uint8Array; maxPages: number }, maxMemoryMb: number): Worker {
  const options = { workerData, resourceLimits: { maxOldGenerationSizeMb: maxMemoryMb } };
  if (extension !== '.ts') return new Worker(workerUrl, options);
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(workerUrl.href)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

const tooComplex = (limits: PdfLimits) =>
  refuse(
    `The PDF is too complex to read within ${limits.maxSeconds} s and ${limits.maxMemoryMb} MB: save it again with a ` +
      'PDF printer, or split it, and import it again',
    'too_complex',
    { maxSeconds: limits.maxSeconds },
  );

/** The PDF's text, read in a worker thread within the limits. */
export function pdfText(bytes: Buffer, limits: PdfLimits): Promise<PdfText> {
  // A PDF starts with %PDF- within its first kilobyte: anything else is refused without starting a reader.
  if (!bytes.subarray(0, 1024).includes('%PDF-')) return Promise.reject(refuse('The file is not a PDF', 'not_pdf'));
  return new Promise<PdfText>((resolve, reject) => {
    const worker = spawnReader({ bytes: new Uint8Array(bytes), maxPages: limits.maxPages }, limits.maxMemoryMb);
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
      void worker.terminate();
    };
    const timer = setTimeout(() => settle(() => reject(tooComplex(limits))), limits.maxSeconds * 1000);
    worker.once('message', (reply: PdfReply) =>
      settle(() =>
        'ok' in reply
          ? resolve(reply.ok)
          : reject(new AppError('validation_failed', reply.refused.message, reply.refused.details)),
      ),
    );
    // Out of memory, or a crash inside pdf.js: the file, not the service, is at fault.
    worker.once('error', () => settle(() => reject(tooComplex(limits))));
    worker.once('exit', () => settle(() => reject(tooComplex(limits))));
  });
}

/** The parse itself: what the worker thread runs. */
export async function readPdfText(bytes: Uint8Array, limits: { maxPages: number }): Promise<PdfText> {
  let pdf;
  try {
    pdf = await getDocumentProxy(bytes, {
      isEvalSupported: false,
      stopAtErrors: false,
      verbosity: 0,
    } as never);
  } catch (error) {
    const name = (error as { name?: string } | null)?.name;
    if (name === 'PasswordException')
      throw refuse('The PDF is encrypted: remove its password and import it again', 'encrypted');
    throw refuse('The file could not be read as a PDF', 'unreadable_pdf');
  }
  try {
    if (pdf.numPages > limits.maxPages) {
      throw refuse(`The PDF has ${pdf.numPages} pages; at most ${limits.maxPages} are imported`, 'too_many_pages', {
        pages: pdf.numPages,
        maxPages: limits.maxPages,
      });
    }
    const { text } = await extractText(pdf, { mergePages: false });
    const pages = (text as string[]).map((page) =>
      page
        .replace(/[ \t]+\n/g, '\n')
        .replace(/\n{3,}/g, '\n\n')
        .trim(),
    );
    const joined = pages
      .filter(Boolean)
      .join('\n\n')
      .replace(/\u0000/g, '');
    if (!joined.trim()) {
      throw refuse(
        'The PDF has no text layer (a scanned document?): run it through OCR first, then import it',
        'no_text',
      );
    }
    return { pages: pdf.numPages, text: joined };
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw refuse('The file could not be read as a PDF', 'unreadable_pdf');
  } finally {
    await pdf.destroy().catch(() => {});
  }
}
