/**
 * CSV request bodies: which routes take them, how the raw stream reaches the handler, and how CSV
 * reading failures become API errors. The reading itself is in lib/csv.ts, free of HTTP.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';
import { CsvSyntaxError, CsvTooLargeError, type CsvUpload } from '../lib/csv.js';

/** Content types accepted for a CSV body. Excel on Windows labels .csv files as application/vnd.ms-excel. */
export const CSV_MEDIA_TYPES = ['text/csv', 'application/csv', 'application/vnd.ms-excel'];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes a CSV body (streamed to the handler); elsewhere a CSV body is a 415. */
    csvBody?: boolean;
  }
}

/**
 * Hands CSV bodies to the routes that declare `config: { csvBody: true }` as the raw request stream, so the handler
 * parses them as they arrive. Any other route answers 415, as for any type it does not take.
 */
export function registerCsvBodyParser(app: FastifyInstance) {
  for (const type of CSV_MEDIA_TYPES) {
    app.addContentTypeParser(type, (request, payload, done) => {
      if (request.routeOptions.config?.csvBody === true) return done(null, payload);
      done(
        new AppError('unsupported_media_type', 'This endpoint takes JSON: send Content-Type: application/json'),
        undefined,
      );
    });
  }
}

function isStream(body: unknown): body is AsyncIterable<Buffer | string> {
  return typeof body === 'object' && body !== null && Symbol.asyncIterator in body;
}

/** The CSV body of a request, or a 415 when the request carries something else. */
export function csvUpload(req: FastifyRequest): CsvUpload {
  if (!isStream(req.body)) {
    throw new AppError('unsupported_media_type', `Send the file as CSV (Content-Type: text/csv)`, {
      accepted: CSV_MEDIA_TYPES,
    });
  }
  const length = Number(req.headers['content-length']);
  return { stream: req.body, declaredBytes: Number.isFinite(length) ? length : null };
}

/**
 * For a handler's catch: when it failed before reading the whole body (too large, malformed), the
 * connection is closed after the error answer rather than kept alive to drain an unbounded upload.
 */
export function closeIfBodyUnread(req: FastifyRequest, reply: FastifyReply) {
  return (error: unknown): never => {
    if (isStream(req.body) && !req.raw.complete) reply.header('Connection', 'close');
    throw error;
  };
}

/** True when the request body is a CSV stream (an endpoint may take JSON or CSV). */
export function hasCsvBody(req: FastifyRequest): boolean {
  return isStream(req.body);
}

/** Maps CSV reading failures to the API's errors; anything else is rethrown. */
export function csvReadError(error: unknown): never {
  if (error instanceof CsvTooLargeError) {
    throw new AppError('payload_too_large', error.message, { limitBytes: error.limitBytes });
  }
  if (error instanceof CsvSyntaxError) {
    const details: Record<string, unknown> = { line: error.line, reason: error.reason };
    if (error.detectedAtLine !== null) details.detectedAtLine = error.detectedAtLine;
    if (error.limit !== null) details.limit = error.limit;
    throw new AppError('invalid_csv', error.message, details);
  }
  throw error;
}

/** Refuses a body whose announced length is already past the limit, before reading a byte of it. */
export function checkDeclaredSize(upload: CsvUpload, limitBytes: number) {
  if (upload.declaredBytes !== null && upload.declaredBytes > limitBytes) {
    throw new AppError('payload_too_large', `The CSV body is larger than the limit of ${limitBytes} bytes`, {
      limitBytes,
    });
  }
}
