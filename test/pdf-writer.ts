/**
 * A small PDF writer for tests: pages of text lines in Helvetica (a real text layer), pages with only drawings (what a
 * scan without OCR looks like to a text extractor), and an encrypted variant (a Standard security handler whose user
 * password is not empty, so a reader must ask for it), and pages whose content is deflated (FlateDecode): a small
 * file whose content inflates far beyond its size.
 */
import { deflateSync } from 'node:zlib';
export interface PdfOptions {
  /** Pages drawn without any text. */
  scanned?: boolean;
  encrypted?: boolean;
  /** Each page's content stream deflated (FlateDecode), as most PDFs are. */
  deflated?: boolean;
}

const escape = (text: string) => text.replace(/[\\()]/g, (c) => `\\${c}`);

export function writePdf(pages: string[][], options: PdfOptions = {}): Buffer {
  const objects: string[] = [];
  const add = (body: string) => objects.push(body) as number;
  add('<< /Type /Catalog /Pages 2 0 R >>');
  add('PAGES');
  add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const pageIds: number[] = [];
  for (const lines of pages) {
    const content = options.scanned
      ? '0.5 g 40 40 500 700 re f'
      : `BT /F1 11 Tf 14 TL 50 780 Td ${lines.map((line) => `(${escape(line)}) Tj T*`).join(' ')} ET`;
    const stream = options.deflated ? deflateSync(Buffer.from(content, 'latin1')).toString('latin1') : content;
    const filter = options.deflated ? ' /Filter /FlateDecode' : '';
    const contentId = add(
      `<< /Length ${Buffer.byteLength(stream, 'latin1')}${filter} >>\nstream\n${stream}\nendstream`,
    );
    pageIds.push(
      add(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${contentId} 0 R >>`,
      ),
    );
  }
  objects[1] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pageIds.length} >>`;
  const encryptId = options.encrypted
    ? add(`<< /Filter /Standard /V 1 /R 2 /Length 40 /P -44 /O <${'7a'.repeat(32)}> /U <${'3c'.repeat(32)}> >>`)
    : null;

  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  const id = `<${'ab'.repeat(16)}>`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${encryptId ? ` /Encrypt ${encryptId} 0 R /ID [${id} ${id}]` : ''} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
