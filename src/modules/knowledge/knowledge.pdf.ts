/**
 * Text from a PDF, with pdf.js (through unpdf, which bundles a build that needs no worker or canvas). A file that
 * is not a PDF, is encrypted, has too many pages, or has no text layer (a scan) is refused with a clear 400.
 */
import { extractText, getDocumentProxy } from 'unpdf';
import { AppError } from '../../lib/errors.js';

export interface PdfText {
  pages: number;
  text: string;
}

const refuse = (message: string, reason: string, details: Record<string, unknown> = {}) =>
  new AppError('validation_failed', message, { reason, ...details });

export async function pdfText(bytes: Buffer, limits: { maxPages: number }): Promise<PdfText> {
  // A PDF starts with %PDF- within its first kilobyte.
  if (!bytes.subarray(0, 1024).includes('%PDF-')) throw refuse('The file is not a PDF', 'not_pdf');
  let pdf;
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), {
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
