import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_CODES, type ErrorCode } from '../lib/errors.js';

export { AppError, ERROR_CODES, invalidField, notFound, type ErrorCode } from '../lib/errors.js';

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  details: Record<string, unknown>;
}

interface FieldProblem {
  field: string;
  message: string;
}

type AjvIssue = NonNullable<FastifyError['validation']>[number];

function fieldPath(context: string, issue: AjvIssue): string {
  const params = issue.params as { missingProperty?: string; additionalProperty?: string };
  const leaf = params.missingProperty ?? params.additionalProperty;
  return [context, ...issue.instancePath.split('/').filter(Boolean), leaf].filter(Boolean).join('/');
}

/** What each string format asks for, in words; the validator's own message only names the format. */
const FORMAT_RULES: Record<string, string> = {
  'date-time': 'must be a date-time with a time zone, e.g. 2025-01-31T09:30:00Z, in the years 0001-9999',
  'single-line': 'must be one line of text, without control characters or bidirectional overrides',
  uuid: 'must be a UUID',
  email: 'must be an email address',
};

function issueMessage(issue: AjvIssue): string {
  const params = issue.params as { additionalProperty?: string; allowedValues?: unknown[]; format?: string };
  if (params.additionalProperty) return 'is not a known field';
  if (params.allowedValues) return `must be one of: ${params.allowedValues.join(', ')}`;
  if (issue.keyword === 'format' && params.format && FORMAT_RULES[params.format]) return FORMAT_RULES[params.format]!;
  return issue.message ?? 'is invalid';
}

/**
 * One problem per failing field. A union (e.g. string or null) makes Ajv report every branch plus "must match a
 * schema in anyOf"; those fold into one message such as "must be string or null".
 */
function describeValidation(error: FastifyError): { message: string; fields: FieldProblem[] } {
  const context = error.validationContext ?? 'body';
  const byField = new Map<string, AjvIssue[]>();
  for (const issue of error.validation ?? []) {
    const path = fieldPath(context, issue);
    byField.set(path, [...(byField.get(path) ?? []), issue]);
  }
  const fields = [...byField].map(([field, issues]): FieldProblem => {
    if (issues.some((i) => i.keyword === 'anyOf')) {
      const types = issues.filter((i) => i.keyword === 'type').map((i) => (i.params as { type: string }).type);
      const others = issues.filter((i) => i.keyword !== 'type' && i.keyword !== 'anyOf').map(issueMessage);
      const parts = [...(types.length ? [`must be ${types.join(' or ')}`] : []), ...others];
      return { field, message: parts.join('; ') || 'is invalid' };
    }
    return { field, message: [...new Set(issues.map(issueMessage))].join('; ') };
  });
  const message = fields.length
    ? `Invalid request: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`
    : 'Invalid request';
  return { message, fields };
}

/**
 * PostgreSQL errors that only a bad value can cause. Validation should refuse such values first; this is the net
 * that keeps a value it missed a 400 rather than a 500.
 */
const DATABASE_INPUT_ERRORS: Record<string, string> = {
  '22P05': 'a text value holds a character the database cannot store',
  '22021': 'a text value is not valid UTF-8',
  '22003': 'a number is out of range',
  '22P02': 'a value is not in the expected format',
  '22008': 'a date or time is out of range',
  '54000': 'a value is too large',
};

function databaseInputError(error: unknown): string | null {
  if (typeof error !== 'object' || error === null || !('severity' in error)) return null;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? (DATABASE_INPUT_ERRORS[code] ?? null) : null;
}

/**
 * A validation_failed body always lists its fields (the published shape requires `details.fields`): a refusal that
 * names none, such as a file that is not a PDF, answers an empty list beside its other details.
 */
function withFieldList(answer: { status: number; body: ErrorBody }): { status: number; body: ErrorBody } {
  const { body } = answer;
  if (body.error !== 'validation_failed' || Array.isArray(body.details.fields)) return answer;
  return { ...answer, body: { ...body, details: { ...body.details, fields: [] } } };
}

function toErrorBody(error: FastifyError | AppError, requestId: string): { status: number; body: ErrorBody } {
  return withFieldList(errorBodyOf(error, requestId));
}

function errorBodyOf(error: FastifyError | AppError, requestId: string): { status: number; body: ErrorBody } {
  const refusedValue = databaseInputError(error);
  if (refusedValue) {
    return {
      status: 400,
      body: { error: 'validation_failed', message: `Invalid request: ${refusedValue}`, details: {} },
    };
  }
  if (error instanceof AppError) {
    return { status: error.statusCode, body: { error: error.code, message: error.message, details: error.details } };
  }
  if (error.validation) {
    const { message, fields } = describeValidation(error);
    return { status: 400, body: { error: 'validation_failed', message, details: { fields } } };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: { error: 'invalid_json', message: error.message, details: {} } };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: 413,
        body: { error: 'payload_too_large', message: 'Request body is larger than the limit', details: {} },
      };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return {
        status: 415,
        body: { error: 'unsupported_media_type', message: 'Unsupported Content-Type for this endpoint', details: {} },
      };
  }
  if (error instanceof SyntaxError && (error as FastifyError).statusCode === 400) {
    return { status: 400, body: { error: 'invalid_json', message: error.message, details: {} } };
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const code =
      (Object.keys(ERROR_CODES) as ErrorCode[]).find((c) => ERROR_CODES[c].status === status) ?? 'validation_failed';
    return { status, body: { error: code, message: error.message, details: {} } };
  }
  return {
    status: 500,
    body: { error: 'internal_error', message: 'Internal server error', details: { requestId } },
  };
}

/** Every error leaves the service as { error, message, details }; a 500 never shows its internals. */
export function installErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    const { status, body } = toErrorBody(error, request.id);
    if (status >= 500) request.log.error({ err: error, requestId: request.id }, 'request failed');
    else if (databaseInputError(error))
      request.log.warn({ err: error, requestId: request.id }, 'the database refused a value validation let through');
    if (error instanceof AppError) reply.headers(error.headers);
    return reply.status(status).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    return reply.status(404).send({
      error: 'not_found',
      message: `Route ${request.method} ${request.url.split('?')[0]} not found`,
      details: {},
    } satisfies ErrorBody);
  });
}

/** Node's limit on the request line plus headers (its default, set explicitly so the 431 answer can name it). */
export const MAX_HEADER_BYTES = 16 * 1024;

/** Longest path parameter the router matches (Fastify's default); ids and phone numbers are far shorter. */
export const MAX_PATH_PARAM_LENGTH = 100;

/**
 * Errors Fastify raises before routing, answered in the error body: a path that is not valid percent-encoded
 * UTF-8, or a path parameter longer than the router takes.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('X-Request-Id', request.id);
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    const message = `is longer than ${MAX_PATH_PARAM_LENGTH} characters`;
    return reply.status(400).send({
      error: 'validation_failed',
      message: `Invalid request: a path parameter ${message}`,
      details: { fields: [{ field: 'params', message }] },
    } satisfies ErrorBody);
  }
  if (error.code === 'FST_ERR_BAD_URL') {
    const message = 'is not valid percent-encoded UTF-8';
    return reply.status(400).send({
      error: 'validation_failed',
      message: `Invalid request: the URL path ${message}`,
      details: { fields: [{ field: 'params', message }] },
    } satisfies ErrorBody);
  }
  const { status, body } = toErrorBody(error, request.id);
  if (status >= 500) request.log.error({ err: error, requestId: request.id }, 'request failed');
  return reply.status(status).send(body);
}

/**
 * Answers HTTP that Node could not parse, in the error body, then closes the connection: headers over
 * MAX_HEADER_BYTES (431), a request not received in time (408), anything else malformed (400).
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, body]: [number, ErrorBody] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          {
            error: 'headers_too_large',
            message: `The request headers are larger than the limit of ${MAX_HEADER_BYTES} bytes`,
            details: { limitBytes: MAX_HEADER_BYTES },
          },
        ]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, { error: 'request_timeout', message: 'The request was not received in time', details: {} }]
        : [400, { error: 'bad_request', message: 'The request is not well-formed HTTP', details: {} }];
  this.log.debug({ err: error }, 'client error');
  // A response already under way on this connection cannot be followed by another one.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const json = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
    );
  }
  socket.destroy(error);
}
