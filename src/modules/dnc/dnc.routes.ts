import type { FastifyRequest } from 'fastify';
import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { AppError } from '../../lib/errors.js';
import { responses } from '../../http/schemas.js';
import { closeIfBodyUnread, CSV_MEDIA_TYPES, csvUpload, hasCsvBody } from '../../http/csv-body.js';
import type { DncBulkInput } from './dnc.bulk.js';
import type { DncService } from './dnc.service.js';
import {
  AddDncBody,
  BulkDncBody,
  BulkDncResult,
  DeletedDncBody,
  DncEntry,
  DncPage,
  DncPhoneParams,
  DncQuery,
} from './dnc.schemas.js';

const read = allow.account('account.read');
const write = allow.account('dnc.write');
const tags = ['dnc'];

/** The bulk body: a CSV stream or a JSON array; a body of any other type (text/plain, say) is a 415. */
function bulkInput(req: FastifyRequest): DncBulkInput {
  if (hasCsvBody(req)) return { upload: csvUpload(req) };
  if (Array.isArray(req.body)) return { items: req.body as Array<string | { phone: string; reason?: string | null }> };
  throw new AppError('unsupported_media_type', 'Send a JSON array (application/json) or a CSV file (text/csv)', {
    accepted: ['application/json', ...CSV_MEDIA_TYPES],
  });
}

export function dncRoutes(app: App, { dnc }: { dnc: DncService }) {
  app.post(
    '/dnc',
    {
      config: { access: write },
      schema: {
        operationId: 'addDncEntry',
        tags,
        summary: 'Put a number on the do-not-call list (idempotent); its contacts are flagged',
        body: AddDncBody,
        response: responses(DncEntry),
      },
    },
    async (req) => dnc.add(req.auth, req.body),
  );
  app.get(
    '/dnc',
    {
      config: { access: read },
      schema: {
        operationId: 'listDncEntries',
        tags,
        summary: 'List do-not-call entries, newest first',
        querystring: DncQuery,
        response: responses(DncPage),
      },
    },
    async (req) => dnc.list(req.auth, req.query),
  );
  app.post(
    '/dnc/bulk',
    {
      config: { access: write, csvBody: true },
      schema: {
        operationId: 'addDncEntriesInBulk',
        tags,
        summary: 'Add many numbers: a JSON array or a CSV body; every valid number or none, invalid rows reported',
        body: BulkDncBody,
        response: responses(BulkDncResult),
      },
    },
    async (req, reply) => dnc.addBulk(req.auth, bulkInput(req)).catch(closeIfBodyUnread(req, reply)),
  );
  app.delete(
    '/dnc/:phone',
    {
      config: { access: write },
      schema: {
        operationId: 'deleteDncEntry',
        tags,
        summary: 'Take a number off the do-not-call list; its contacts are unflagged',
        params: DncPhoneParams,
        response: responses(DeletedDncBody),
      },
    },
    async (req) => dnc.remove(req.auth, req.params.phone),
  );
}
