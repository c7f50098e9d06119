import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { Value } from 'typebox/value';
import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { AppError, invalidField } from '../../lib/errors.js';
import { responses } from '../../http/schemas.js';
import type { KnowledgeService } from './knowledge.service.js';
import { ImportPdfBody, ImportPdfFields, ImportPdfResult } from './knowledge.schemas.js';
import type { Config } from '../../config.js';

const tags = ['agents'];
const FIELD_NAMES = new Set(['agentId', 'mode']);

/** Reads the multipart body: one file part named `file`, and the text fields, in any order. */
async function readImportForm(
  req: FastifyRequest,
  maxBytes: number,
): Promise<{ fields: ImportPdfFields; file: Buffer }> {
  if (!req.isMultipart()) {
    throw new AppError(
      'unsupported_media_type',
      'Send the PDF as multipart/form-data with the fields file, agentId and mode',
    );
  }
  const raw: Record<string, string> = {};
  let file: Buffer | null = null;
  try {
    for await (const part of req.parts({
      limits: { fileSize: maxBytes, files: 1, fields: 10, fieldSize: 1000, parts: 12 },
    })) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file')
          throw invalidField(`body/${part.fieldname}`, 'is not a known field: send the PDF as file');
        file = await part.toBuffer();
      } else {
        if (!FIELD_NAMES.has(part.fieldname)) throw invalidField(`body/${part.fieldname}`, 'is not a known field');
        raw[part.fieldname] = String(part.value);
      }
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    const code = (error as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE')
      throw new AppError('payload_too_large', `The PDF is larger than ${maxBytes} bytes`, { limitBytes: maxBytes });
    if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
      throw new AppError('validation_failed', 'Send one file and the fields agentId and mode, nothing more');
    }
    throw new AppError('validation_failed', 'The multipart body could not be read');
  }
  if (!file) throw invalidField('body/file', 'is required: the PDF to import');
  const fields = Value.Default(ImportPdfFields, { ...raw }) as Record<string, unknown>;
  if (!Value.Check(ImportPdfFields, fields)) {
    const [first] = [...Value.Errors(ImportPdfFields, fields)];
    const path = first?.instancePath ? `body${first.instancePath}` : 'body/agentId';
    throw invalidField(
      path,
      first?.keyword === 'required' ? 'is required' : 'is invalid: agentId is a UUID, mode is append or replace',
    );
  }
  return { fields: fields as ImportPdfFields, file };
}

export function knowledgeRoutes(app: App, { knowledge, config }: { knowledge: KnowledgeService; config: Config }) {
  app.register(async (scope) => {
    await scope.register(multipart, { limits: { fileSize: config.knowledge.pdfMaxBytes, files: 1 } });
    (scope as unknown as App).post(
      '/kb/import-pdf',
      {
        config: { access: allow.account('agents.write') },
        bodyLimit: config.knowledge.pdfMaxBytes + 64 * 1024,
        schema: {
          operationId: 'importKnowledgeBasePdf',
          tags,
          summary: "Import a PDF's text into an agent's knowledge base (a new version of the agent)",
          description:
            'multipart/form-data with file, agentId and mode (append or replace). The text layer of every page is ' +
            `extracted; at most PDF_MAX_PAGES pages (default 500) and PDF_MAX_BYTES bytes (default 20 MB). An encrypted ` +
            'PDF, a scan without a text layer or a file that is not a PDF is refused with a 400 (details.reason says ' +
            'which) and changes nothing. Answers the pages and characters read and the chunks now indexed.',
          body: ImportPdfBody,
          response: responses(ImportPdfResult),
        },
      },
      async (req) => {
        const { fields, file } = await readImportForm(req, config.knowledge.pdfMaxBytes);
        return knowledge.importPdf(req.auth, fields, file);
      },
    );
  });
}
